//! What plays in the arena: the [`Bot`] trait (a request in, a reply out), the built-in
//! rules that need nothing but the request, and the equilibrium itself as a bot (read
//! from the db, for the run that must come out at 0).

use gops_common::cards::CardSet;
use gops_common::state::GameState;
use gops_db::book::Book;
use gops_db::read::{CachedReader, QueryError};

use crate::protocol::{BotFault, Reply, Request, Seat};

/// Why a bot gave no reply.
#[derive(Debug, thiserror::Error)]
pub enum NoReply {
    /// The bot's own fault: it forfeits the game.
    #[error(transparent)]
    Fault(#[from] BotFault),
    /// The db that a built-in bot reads could not answer: the run stops with the db's
    /// error, as when the equilibrium's own seat cannot be read.
    #[error(transparent)]
    Db(#[from] QueryError),
}

/// A player of the arena's games.
pub trait Bot: Send {
    /// The answer to one decision.
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply>;

    /// After a fault: make the bot ready for the next game (a process is started again).
    fn reset(&mut self) {}
}

/// The built-in ways of bidding, by name: the simple rules of the results table and the
/// equilibrium.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// A card of the hand, uniformly.
    Uniform,
    /// The card equal to the upcard; once it is gone, the nearest held card (the lower
    /// one on a tie).
    Upcard,
    /// The card one above the upcard; once it is gone, the nearest held card.
    UpcardPlusOne,
    /// The equilibrium's mixed strategy, from the db.
    Equilibrium,
    /// The equilibrium's most likely bid (the lowest such card on a tie), played pure.
    EquilibriumPure,
}

impl Builtin {
    pub const ALL: [Builtin; 5] = [
        Builtin::Uniform,
        Builtin::Upcard,
        Builtin::UpcardPlusOne,
        Builtin::Equilibrium,
        Builtin::EquilibriumPure,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Uniform => "uniform",
            Builtin::Upcard => "upcard",
            Builtin::UpcardPlusOne => "upcard-plus-one",
            Builtin::Equilibrium => "equilibrium",
            Builtin::EquilibriumPure => "equilibrium-pure",
        }
    }

    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The held card closest to `target`, the lower one on a tie.
fn nearest(hand: &[u8], target: u8) -> u8 {
    hand.iter()
        .copied()
        .min_by_key(|&c| (c.abs_diff(target), c))
        .expect("a bot is asked only with cards in hand")
}

/// A built-in bot. The equilibrium's read the db through their own reader; the rules
/// read nothing.
pub struct BuiltinBot<'b> {
    rule: Builtin,
    reader: Option<CachedReader<'b>>,
}

impl<'b> BuiltinBot<'b> {
    /// `rule`; the equilibrium's read `book` through a reader of their own, caching at
    /// most about `cache_bytes` (the rules make none).
    pub fn new(rule: Builtin, book: &'b Book, cache_bytes: usize) -> BuiltinBot<'b> {
        let reads_db = matches!(rule, Builtin::Equilibrium | Builtin::EquilibriumPure);
        BuiltinBot {
            rule,
            reader: reads_db.then(|| CachedReader::cached(book, cache_bytes)),
        }
    }

    fn equilibrium(&mut self, request: &Request) -> Result<Vec<f64>, NoReply> {
        let reader = self
            .reader
            .as_mut()
            .expect("an equilibrium's bot has a reader");
        let (own, other) = (
            CardSet::from_cards(&request.hand),
            CardSet::from_cards(&request.opponent_hand),
        );
        let (a, b, diff) = match request.seat {
            Seat::A => (own, other, request.diff),
            Seat::B => (other, own, -request.diff),
        };
        let state = GameState {
            n: request.n,
            a,
            b,
            prizes: CardSet::from_cards(&request.prizes),
            diff,
        };
        let game = reader.revealed(&state, request.upcard)?;
        Ok(match request.seat {
            Seat::A => game.strategy_a,
            Seat::B => game.strategy_b,
        })
    }
}

impl Bot for BuiltinBot<'_> {
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply> {
        let hand = &request.hand;
        let pure = |bid: u8| Ok(Reply::Bid { bid });
        match self.rule {
            Builtin::Uniform => Ok(Reply::Distribution {
                distribution: hand
                    .iter()
                    .map(|c| (c.to_string(), 1.0 / hand.len() as f64))
                    .collect(),
            }),
            Builtin::Upcard => pure(nearest(hand, request.upcard)),
            Builtin::UpcardPlusOne => pure(nearest(hand, request.upcard + 1)),
            Builtin::Equilibrium => {
                let p = self.equilibrium(request)?;
                Ok(Reply::Distribution {
                    distribution: hand.iter().map(|c| c.to_string()).zip(p).collect(),
                })
            }
            Builtin::EquilibriumPure => {
                let p = self.equilibrium(request)?;
                let best = (0..p.len()).fold(0, |best, i| if p[i] > p[best] { i } else { best });
                pure(hand[best])
            }
        }
    }
}
