//! One game of the arena, stepped through [`crate::table::Table`]: the bot in one seat,
//! the equilibrium (from the db) in the other, the upcards and both players' draws from the game's own seed, so that a game
//! is the same whatever thread plays it. Each decision is recorded with its exact loss
//! ([`crate::loss`]); a bot's fault forfeits the game.

use gops_common::objective::Objective;
use gops_common::state::GameState;
use gops_db::read::{QueryError, Reader, RevealedGame, Slices};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::bot::{Bot, NoReply};
use crate::loss::decision_loss;
use crate::protocol::{BotFault, Reply, Request, Seat};
use crate::table::Table;

/// One decision of the bot.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub game: u64,
    pub round: u8,
    pub seat: Seat,
    /// The state before the upcard (A's and B's hands, A's score minus B's).
    pub state: GameState,
    pub upcard: u8,
    /// The bot's probability of each of its cards (ascending); empty after a fault.
    pub probabilities: Vec<f64>,
    /// The cards played; `None` after a fault.
    pub bid: Option<u8>,
    pub opponent_bid: Option<u8>,
    /// The value of the revealed game for the bot.
    pub value: f64,
    /// The decision's exact loss: the value minus what its answer earns against the
    /// equilibrium (a forfeit earns the worst result left).
    pub loss: f64,
    /// Set when the answer forfeited the game.
    pub fault: Option<BotFault>,
}

/// A finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    pub game: u64,
    pub seat: Seat,
    pub decisions: Vec<Decision>,
    /// The bot's result: `win`, 1, 0 or -1; `points`, its score minus the opponent's.
    pub result: f64,
}

impl GameRecord {
    pub fn loss(&self) -> f64 {
        self.decisions.iter().map(|d| d.loss).sum()
    }

    pub fn fault(&self) -> Option<&Decision> {
        self.decisions.iter().find(|d| d.fault.is_some())
    }
}

/// The seed of game `game` of a run seeded `seed` (SplitMix64 of both).
pub fn game_seed(seed: u64, game: u64) -> u64 {
    let mut z = seed ^ game.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub use crate::table::result_of;

/// A game being played, one decision at a time: [`GameInPlay::next_request`] turns up
/// the next prize and says what the bot is asked, [`GameInPlay::answer`] plays the
/// bot's answer against the equilibrium (or forfeits the game on a fault). What
/// [`play_game`] runs, and what Python's environment steps through.
pub struct GameInPlay {
    game: u64,
    seat: Seat,
    table: Table,
    decisions: Vec<Decision>,
    rng: StdRng,
    /// The request asked and its revealed game, until it is answered.
    pending: Option<(Request, RevealedGame)>,
    /// The bot's result, once the game is over.
    result: Option<f64>,
}

impl GameInPlay {
    /// Game `game` of a run seeded `seed` of the `n`-card game, the bot in `seat`.
    pub fn new(n: u8, objective: Objective, seed: u64, game: u64, seat: Seat) -> GameInPlay {
        GameInPlay {
            game,
            seat,
            table: Table::new(n, objective),
            decisions: Vec::new(),
            rng: StdRng::seed_from_u64(game_seed(seed, game)),
            pending: None,
            result: None,
        }
    }

    /// The decision the bot is asked now: the next prize turned up (once; asking again
    /// before an answer gives the same request), or `None` once the game is over.
    pub fn next_request<S: Slices>(
        &mut self,
        referee: &mut Reader<'_, S>,
    ) -> Result<Option<&Request>, QueryError> {
        if self.result.is_some() {
            return Ok(None);
        }
        if self.pending.is_none() {
            let upcard = self.table.turn_up(&mut self.rng);
            let revealed = referee.revealed(self.table.state(), upcard)?;
            let request = self.table.request(self.game, self.seat);
            self.pending = Some((request, revealed));
        }
        Ok(self.pending.as_ref().map(|(request, _)| request))
    }

    /// Plays the bot's answer to the pending request; the decision it made. A fault
    /// forfeits the game: the opponent takes every prize left.
    ///
    /// Panics if no request is pending (a caller's bug, not input).
    pub fn answer(&mut self, answer: Result<Reply, BotFault>) -> &Decision {
        let (request, revealed) = self.pending.take().expect("a request is pending");
        let (seat, state, upcard) = (self.seat, *self.table.state(), request.upcard);
        let objective = self.table.objective();
        let value = seat.own(revealed.value);
        let mut decision = Decision {
            game: self.game,
            round: request.round,
            seat,
            state,
            upcard,
            probabilities: Vec::new(),
            bid: None,
            opponent_bid: None,
            value,
            loss: 0.0,
            fault: None,
        };
        match answer.and_then(|r| r.probabilities(seat.hands(&state).0)) {
            Err(fault) => {
                let worst_left = match objective {
                    Objective::Win => -1.0,
                    Objective::Points => -f64::from(state.prizes.sum()),
                };
                decision.loss = value - worst_left;
                decision.fault = Some(fault);
                self.result = Some(match objective {
                    Objective::Win => -1.0,
                    Objective::Points => f64::from(request.diff) + worst_left,
                });
            }
            Ok(probabilities) => {
                decision.loss = decision_loss(seat, &revealed, &probabilities);
                let (other, equilibrium) = match seat {
                    Seat::A => (Seat::B, &revealed.strategy_b),
                    Seat::B => (Seat::A, &revealed.strategy_a),
                };
                let bid = self.table.draw(seat, &probabilities, &mut self.rng);
                let opponent_bid = self.table.draw(other, equilibrium, &mut self.rng);
                decision.probabilities = probabilities;
                decision.bid = Some(bid);
                decision.opponent_bid = Some(opponent_bid);
                let (a, b) = match seat {
                    Seat::A => (bid, opponent_bid),
                    Seat::B => (opponent_bid, bid),
                };
                self.table
                    .play(a, b)
                    .expect("both bids were drawn from the hands");
                self.result = self.table.result(seat);
            }
        }
        self.decisions.push(decision);
        self.decisions.last().expect("just pushed")
    }

    /// Whether a request waits for its answer.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The bot's result, once the game is over.
    pub fn result(&self) -> Option<f64> {
        self.result
    }

    /// The finished game's record (`None` while it is still being played).
    pub fn into_record(self) -> Option<GameRecord> {
        Some(GameRecord {
            game: self.game,
            seat: self.seat,
            result: self.result?,
            decisions: self.decisions,
        })
    }
}

/// Plays game `game` of a run seeded `seed`: the bot in `seat`, the equilibrium of
/// `referee`'s db in the other. A db that cannot answer (the referee's, or a built-in
/// bot's) stops it with that error.
pub fn play_game<S: Slices>(
    referee: &mut Reader<'_, S>,
    bot: &mut dyn Bot,
    seed: u64,
    game: u64,
    seat: Seat,
) -> Result<GameRecord, QueryError> {
    let mut playing = GameInPlay::new(referee.n(), referee.objective(), seed, game, seat);
    while let Some(request) = playing.next_request(referee)? {
        let answer = match bot.decide(request) {
            Ok(reply) => Ok(reply),
            Err(NoReply::Fault(fault)) => {
                bot.reset();
                Err(fault)
            }
            Err(NoReply::Db(error)) => return Err(error),
        };
        playing.answer(answer);
    }
    Ok(playing.into_record().expect("the game is over"))
}
