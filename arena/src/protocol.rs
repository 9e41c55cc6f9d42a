//! The bot protocol: what the arena asks a bot at each decision ([`Request`], one JSON
//! object a line) and what it may answer ([`Reply`]: a bid, or a distribution over its
//! cards), with the checks that turn an answer into probabilities over the bot's hand
//! or into the fault it is ([`BotFault`]). The same messages go over stdin/stdout and
//! HTTP. Reference: docs/reference/bot-protocol.md.

use std::collections::BTreeMap;
use std::time::Duration;

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::state::GameState;
use serde::{Deserialize, Serialize};

/// Which side of the db's states the bot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Seat {
    A,
    B,
}

impl Seat {
    /// The seat of game `game` of a run: A in even games, B in odd ones.
    pub fn of_game(game: u64) -> Seat {
        if game.is_multiple_of(2) {
            Seat::A
        } else {
            Seat::B
        }
    }

    /// The bot's hand and the opponent's in `state`.
    pub fn hands(self, state: &GameState) -> (CardSet, CardSet) {
        match self {
            Seat::A => (state.a, state.b),
            Seat::B => (state.b, state.a),
        }
    }

    /// A value or score difference for A, as the bot sees it.
    pub fn own(self, for_a: f64) -> f64 {
        match self {
            Seat::A => for_a,
            Seat::B => -for_a,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Seat::A => "A",
            Seat::B => "B",
        }
    }
}

/// One round played: the prize, the bot's bid and the opponent's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    pub prize: u8,
    pub bid: u8,
    pub opponent_bid: u8,
}

/// A decision asked of the bot: everything it may know at that point, from its side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The run's game number (0-based), so that a bot keeping state can tell games apart.
    pub game: u64,
    /// The round, 1 to n.
    pub round: u8,
    pub n: u8,
    pub objective: Objective,
    /// "A" or "B": only a label (the game is the same from both seats).
    pub seat: Seat,
    /// The bot's cards, ascending.
    pub hand: Vec<u8>,
    pub opponent_hand: Vec<u8>,
    /// The prizes not yet won, the upcard included, ascending.
    pub prizes: Vec<u8>,
    /// The prize turned up this round.
    pub upcard: u8,
    /// The bot's score minus the opponent's so far.
    pub diff: i32,
    /// The rounds played so far, oldest first.
    pub history: Vec<Round>,
}

impl Request {
    /// The request of game `game`'s decision in `state` once `upcard` is turned up, for
    /// the bot in `seat`.
    pub fn new(
        game: u64,
        objective: Objective,
        seat: Seat,
        state: &GameState,
        upcard: u8,
        history: &[Round],
    ) -> Request {
        let (hand, opponent) = seat.hands(state);
        Request {
            game,
            round: state.n - state.k() + 1,
            n: state.n,
            objective,
            seat,
            hand: hand.to_vec(),
            opponent_hand: opponent.to_vec(),
            prizes: state.prizes.to_vec(),
            upcard,
            diff: match seat {
                Seat::A => state.diff,
                Seat::B => -state.diff,
            },
            history: history.to_vec(),
        }
    }

    pub fn hand_set(&self) -> CardSet {
        CardSet::from_cards(&self.hand)
    }

    /// The state of the db it asks about (A's hand, B's hand, A's score minus B's).
    pub fn state(&self) -> GameState {
        let (own, other) = (self.hand_set(), CardSet::from_cards(&self.opponent_hand));
        let (a, b, diff) = match self.seat {
            Seat::A => (own, other, self.diff),
            Seat::B => (other, own, -self.diff),
        };
        GameState {
            n: self.n,
            a,
            b,
            prizes: CardSet::from_cards(&self.prizes),
            diff,
        }
    }

    /// The same decision asked of the opponent: hands, score and bids seen from the
    /// other seat.
    pub fn mirrored(&self) -> Request {
        Request {
            seat: match self.seat {
                Seat::A => Seat::B,
                Seat::B => Seat::A,
            },
            hand: self.opponent_hand.clone(),
            opponent_hand: self.hand.clone(),
            diff: -self.diff,
            history: self
                .history
                .iter()
                .map(|r| Round {
                    prize: r.prize,
                    bid: r.opponent_bid,
                    opponent_bid: r.bid,
                })
                .collect(),
            ..self.clone()
        }
    }
}

/// A bot's answer: one card, or a probability for each card it may play (cards left out
/// have 0). Keys of `distribution` are the cards as strings, as JSON objects need.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reply {
    Bid { bid: u8 },
    Distribution { distribution: BTreeMap<String, f64> },
}

/// How far a distribution's probabilities may sum from 1 (then they are scaled to 1).
pub const SUM_TOLERANCE: f64 = 1e-6;

/// Why a bot's decision did not count: the game is forfeited.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BotFault {
    #[error("the bot could not be started: {0}")]
    Start(String),
    #[error("the bot ended (or closed its output) before answering: {0}")]
    Crashed(String),
    #[error("no answer within {} ms", .0.as_millis())]
    TimedOut(Duration),
    #[error("the answer is not a bid or a distribution: {0}")]
    Malformed(String),
    #[error("an illegal answer: {0}")]
    Illegal(String),
    #[error("the bot's service failed: {0}")]
    Transport(String),
}

impl BotFault {
    /// A short name of the kind, for the report's counts.
    pub fn kind(&self) -> &'static str {
        match self {
            BotFault::Start(_) => "start",
            BotFault::Crashed(_) => "crashed",
            BotFault::TimedOut(_) => "timed_out",
            BotFault::Malformed(_) => "malformed",
            BotFault::Illegal(_) => "illegal",
            BotFault::Transport(_) => "transport",
        }
    }
}

/// Checks an answer's probabilities, one for each card of `hand` (ascending), given as
/// (card, probability) pairs (a card may come more than once: its probabilities add):
/// each finite and at least 0, every card in the hand, summing to 1 within
/// [`SUM_TOLERANCE`] (then scaled to 1). The one check of an agent's distribution, for
/// the bot protocol and Python's agents alike.
pub fn check_distribution(
    hand: CardSet,
    pairs: impl IntoIterator<Item = (u8, f64)>,
) -> Result<Vec<f64>, BotFault> {
    let cards = hand.to_vec();
    let mut p = vec![0.0; cards.len()];
    for (card, q) in pairs {
        let Some(at) = cards.iter().position(|&c| c == card) else {
            return Err(BotFault::Illegal(format!(
                "a probability for card {card}, not in the hand {cards:?}"
            )));
        };
        if !q.is_finite() || q < 0.0 {
            return Err(BotFault::Illegal(format!(
                "the probability {q} of card {card}"
            )));
        }
        p[at] += q;
    }
    let sum: f64 = p.iter().sum();
    if (sum - 1.0).abs() > SUM_TOLERANCE {
        return Err(BotFault::Illegal(format!(
            "the probabilities sum to {sum}, not 1"
        )));
    }
    Ok(p.iter().map(|q| q / sum).collect())
}

impl Reply {
    /// The reply that plays `probabilities` over `hand` (ascending): a bid when one card
    /// is certain, else the distribution.
    pub fn of_probabilities(hand: &[u8], probabilities: &[f64]) -> Reply {
        if let Some(at) = probabilities.iter().position(|&p| p == 1.0)
            && probabilities.iter().filter(|&&p| p != 0.0).count() == 1
        {
            return Reply::Bid { bid: hand[at] };
        }
        Reply::Distribution {
            distribution: hand
                .iter()
                .map(|c| c.to_string())
                .zip(probabilities.iter().copied())
                .collect(),
        }
    }

    /// A reply from one line of JSON.
    pub fn parse(line: &str) -> Result<Reply, BotFault> {
        let line = line.trim();
        serde_json::from_str(line).map_err(|e| {
            let shown: String = line.chars().take(120).collect();
            BotFault::Malformed(format!("{e}: {shown:?}"))
        })
    }

    /// The probability of each card of `hand` (ascending), if the reply is legal there.
    pub fn probabilities(&self, hand: CardSet) -> Result<Vec<f64>, BotFault> {
        let cards = hand.to_vec();
        match self {
            Reply::Bid { bid } => {
                if !hand.contains(*bid) {
                    return Err(BotFault::Illegal(format!(
                        "bid {bid}, not in the hand {cards:?}"
                    )));
                }
                Ok(cards.iter().map(|&c| f64::from(c == *bid)).collect())
            }
            Reply::Distribution { distribution } => {
                let mut pairs = Vec::with_capacity(distribution.len());
                for (key, &q) in distribution {
                    let card: u8 = key.trim().parse().map_err(|_| {
                        BotFault::Malformed(format!("the key {key:?} is not a card number"))
                    })?;
                    pairs.push((card, q));
                }
                check_distribution(hand, pairs)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_become_probabilities_over_the_hand_or_a_named_fault() {
        let hand = CardSet::from_cards(&[2, 5, 7]);
        let bid = Reply::parse(r#"{"bid": 5}"#).unwrap();
        assert_eq!(bid.probabilities(hand).unwrap(), vec![0.0, 1.0, 0.0]);
        let mixed = Reply::parse(r#"{"distribution": {"2": 0.25, "7": 0.75}}"#).unwrap();
        assert_eq!(mixed.probabilities(hand).unwrap(), vec![0.25, 0.0, 0.75]);
        let faults = [
            (r#"{"bid": 3}"#, "illegal"),
            (r#"{"bid": -1}"#, "malformed"),
            (r#"{"distribution": {"2": 0.5}}"#, "illegal"),
            (r#"{"distribution": {"2": 1.5, "5": -0.5}}"#, "illegal"),
            (r#"{"distribution": {"x": 1}}"#, "malformed"),
            (r#"{"distribution": {"9": 1}}"#, "illegal"),
            ("bid 5", "malformed"),
            ("", "malformed"),
        ];
        for (line, kind) in faults {
            let fault = Reply::parse(line).and_then(|r| r.probabilities(hand).map(|_| ()));
            assert_eq!(fault.unwrap_err().kind(), kind, "{line}");
        }
    }

    #[test]
    fn a_request_is_the_bots_side_of_the_state() {
        let state = GameState {
            n: 4,
            a: CardSet::from_cards(&[1, 3, 4]),
            b: CardSet::from_cards(&[1, 2, 4]),
            prizes: CardSet::from_cards(&[1, 2, 4]),
            diff: 3,
        };
        let history = [Round {
            prize: 3,
            bid: 2,
            opponent_bid: 3,
        }];
        let request = Request::new(7, Objective::Win, Seat::B, &state, 4, &history);
        assert_eq!(request.round, 2);
        assert_eq!(request.hand, vec![1, 2, 4]);
        assert_eq!(request.opponent_hand, vec![1, 3, 4]);
        assert_eq!(request.diff, -3);
        let line = serde_json::to_string(&request).unwrap();
        assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), request);
        assert!(line.contains(r#""objective":"win""#), "{line}");
        assert!(line.contains(r#""seat":"B""#), "{line}");
    }
}
