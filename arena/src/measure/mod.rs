//! What agents achieve on a solved game: many games between two of them (`simulate`,
//! stepped through [`crate::table::Table`]), and the exact value of an agent that bids by
//! the state against a best response, by backward induction over concrete states
//! (`exploit`).

use std::collections::HashMap;

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::rules::play_round;
use gops_common::state::GameState;
use gops_db::read::{CachedReader, QueryError};
use rand::Rng;
use serde::Serialize;

use crate::agent::{Agent, Player};
use crate::protocol::{Request, Seat};
use crate::stats::Moments;
use crate::table::Table;

mod report;
pub mod respond;
#[cfg(test)]
mod respond_tests;

pub use report::{PolicyExploitation, Simulation};

pub use crate::stats::{Mean, Rate};

/// Results of many games between two agents, from A's side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimulationReport {
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub win_rate: Rate,
    pub draw_rate: Rate,
    pub loss_rate: Rate,
    /// A's final score minus B's.
    pub score_difference: Mean,
    /// A's result as `win` counts it, P(win) - P(loss): the mean of +1 a win, 0 a draw,
    /// -1 a loss, with its interval.
    pub outcome: Mean,
}

/// Plays `games` games of agent `a` (seat A) against agent `b` (seat B), each a fresh
/// player in every game. `decided` hears each seat's request and the bid it made.
pub fn simulate(
    reader: &mut CachedReader,
    (a, b): (&Agent, &Agent),
    games: u64,
    rng: &mut impl Rng,
    progress: &mut dyn FnMut(u64),
    decided: &mut dyn FnMut(&Request, u8),
) -> Result<SimulationReport, QueryError> {
    let (mut wins, mut draws, mut losses) = (0u64, 0u64, 0u64);
    let (mut difference, mut outcome) = (Moments::default(), Moments::default());
    for game in 0..games {
        let mut table = Table::new(reader.n(), reader.objective());
        let (mut player_a, mut player_b) = (Player::new(a.clone()), Player::new(b.clone()));
        while !table.is_over() {
            table.turn_up(rng);
            let (ask_a, ask_b) = (table.request(game, Seat::A), table.request(game, Seat::B));
            let pa = player_a.probabilities(reader, &ask_a)?;
            let pb = player_b.probabilities(reader, &ask_b)?;
            let bid_a = table.draw(Seat::A, &pa, rng);
            let bid_b = table.draw(Seat::B, &pb, rng);
            decided(&ask_a, bid_a);
            decided(&ask_b, bid_b);
            table
                .play(bid_a, bid_b)
                .expect("both bids were drawn from the hands");
        }
        let diff = table.state().diff;
        match diff.signum() {
            1 => wins += 1,
            0 => draws += 1,
            _ => losses += 1,
        }
        difference.add(f64::from(diff));
        outcome.add(f64::from(diff.signum()));
        if game % 1024 == 1023 {
            progress(game + 1);
        }
    }
    Ok(SimulationReport {
        games,
        wins,
        draws,
        losses,
        win_rate: Rate::of(wins, games),
        draw_rate: Rate::of(draws, games),
        loss_rate: Rate::of(losses, games),
        score_difference: difference.summary(),
        outcome: outcome.summary(),
    })
}

/// What a policy guarantees against a best response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exploitation {
    /// The game's value for A at the start (the equilibrium).
    pub game_value: f64,
    /// A's value when A follows the policy and B best-responds.
    pub policy_value: f64,
    /// `game_value - policy_value`: what the best response gains over the equilibrium.
    pub exploitability: f64,
    /// Concrete states evaluated.
    pub states: u64,
}

/// Concrete states `exploit` is willing to evaluate (memory for the memo table).
pub const EXPLOIT_STATE_LIMIT: u64 = 30_000_000;

/// The number of concrete states of the `n`-card game (before the reveal), times the
/// score differences `win` tells apart.
pub fn concrete_state_count(n: u8, objective: Objective) -> u64 {
    exploit_state_count(n, objective, false)
}

/// The concrete states an exploitation walks at most: those of
/// [`concrete_state_count`], and for `points` with a policy that may read the score
/// difference (`reads_diff`), every difference too.
pub fn exploit_state_count(n: u8, objective: Objective, reads_diff: bool) -> u64 {
    let keyed_on_diff = objective == Objective::Win || reads_diff;
    (0..=n)
        .map(|k| {
            let c = gops_common::binomial::binomial(u32::from(n), u32::from(k));
            let diffs = if keyed_on_diff {
                2 * u64::from(CardSet::full(n).sum()) + 1
            } else {
                1
            };
            c * c * c * diffs
        })
        .sum()
}

/// A's bids in a state once an upcard is turned up: the probability of each of A's
/// cards, ascending.
pub type Bidder<'b, E> = dyn FnMut(&mut CachedReader, &GameState, u8) -> Result<Vec<f64>, E> + 'b;

/// The exact value of `agent` (played by A) against a best-responding B, by backward
/// induction over the concrete states the game can reach. The agent must bid by the
/// state alone ([`Agent::plays_by_state`]). `progress` hears the number of states
/// evaluated now and then.
pub fn exploit(
    reader: &mut CachedReader,
    agent: &Agent,
    progress: &mut dyn FnMut(u64),
) -> Result<Exploitation, QueryError> {
    debug_assert!(agent.plays_by_state());
    let mut player = Player::new(agent.clone());
    let objective = reader.objective();
    let mut bids = |reader: &mut CachedReader, state: &GameState, upcard: u8| {
        let request = Request::new(0, objective, Seat::A, state, upcard, &[]);
        player.probabilities(reader, &request)
    };
    exploit_bidder(reader, &mut bids, false, progress)
}

/// [`exploit`] for any bidder. With `reads_diff`, a `points` bidder is shown the score
/// difference so far and states are told apart by it (as `win` always does); without,
/// it sees 0 and must not depend on it. `progress` hears the number of states evaluated
/// now and then.
pub fn exploit_bidder<E: From<QueryError>>(
    reader: &mut CachedReader,
    bidder: &mut Bidder<'_, E>,
    reads_diff: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<Exploitation, E> {
    let start = GameState::initial(reader.n());
    let game_value = reader.value(&start)?;
    let objective = reader.objective();
    let mut induction = Induction {
        objective,
        keyed_on_diff: objective == Objective::Win || reads_diff,
        bidder,
        memo: HashMap::new(),
        progress,
    };
    let policy_value = induction.value(reader, &start)?;
    Ok(Exploitation {
        game_value,
        policy_value,
        exploitability: game_value - policy_value,
        states: induction.memo.len() as u64,
    })
}

struct Induction<'p, 'b, E> {
    objective: Objective,
    /// Whether states are told apart by the score difference (and the bidder sees it).
    keyed_on_diff: bool,
    bidder: &'p mut Bidder<'b, E>,
    memo: HashMap<(u32, u32, u32, i32), f64>,
    progress: &'p mut dyn FnMut(u64),
}

impl<E: From<QueryError>> Induction<'_, '_, E> {
    /// A's value of `state` when A follows the policy and B best-responds. For `points`
    /// it is the score still to come (the score so far is left out); for `win` it
    /// includes the score so far through `d`.
    fn value(&mut self, reader: &mut CachedReader, state: &GameState) -> Result<f64, E> {
        let d = if self.keyed_on_diff { state.diff } else { 0 };
        let remaining = state.prizes.sum() as i32;
        if state.prizes.is_empty() || (self.objective == Objective::Win && d.abs() > remaining) {
            return Ok(match self.objective {
                Objective::Points => 0.0,
                Objective::Win => f64::from(d.signum()),
            });
        }
        let key = (state.a.0, state.b.0, state.prizes.0, d);
        if let Some(&v) = self.memo.get(&key) {
            return Ok(v);
        }
        let at = GameState { diff: d, ..*state };
        let mut total = 0.0;
        for upcard in state.prizes.iter() {
            let x = (self.bidder)(reader, &at, upcard)?;
            let mut best = f64::INFINITY;
            for b in state.b.iter() {
                let mut expected = 0.0;
                for (a, &p) in state.a.iter().zip(&x) {
                    if p == 0.0 {
                        continue;
                    }
                    let child = play_round(&at, upcard, a, b);
                    let now = match self.objective {
                        Objective::Points => f64::from(child.diff - at.diff),
                        Objective::Win => 0.0,
                    };
                    expected += p * (now + self.value(reader, &child)?);
                }
                best = best.min(expected);
            }
            total += best;
        }
        let v = total / state.prizes.len() as f64;
        self.memo.insert(key, v);
        if self.memo.len().is_multiple_of(65_536) {
            (self.progress)(self.memo.len() as u64);
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concrete_state_counts() {
        // N = 2: 1 + 8 + 1 states; with win, times 2 * 3 + 1 differences
        assert_eq!(concrete_state_count(2, Objective::Points), 10);
        assert_eq!(concrete_state_count(2, Objective::Win), 70);
    }
}
