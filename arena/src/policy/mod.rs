//! Ways of bidding and what they achieve on a solved game: the policies of `simulate` and
//! `exploit` (the equilibrium from the db, random, match the prize, greedy by rank),
//! Monte Carlo play between two of them, and the exact value of a fixed policy against a
//! best response by backward induction over concrete states.

use std::collections::HashMap;

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::state::GameState;
use rand::Rng;
use serde::Serialize;

use gops_common::rules::{draw, play_round, turn_up};

mod report;

pub use report::{PolicyExploitation, Simulation};

use gops_db::read::CachedReader;
use gops_db::read::QueryError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The equilibrium strategy, from the db.
    Optimal,
    /// A remaining card, uniformly.
    Random,
    /// The card equal to the prize; once it is gone, the nearest held card (the lower
    /// one on a tie).
    Match,
    /// The card whose rank among one's remaining cards is the prize's rank among the
    /// remaining prizes (highest cards on the highest prizes).
    Greedy,
    /// The card one above the prize; once it is gone, the nearest held card (the lower
    /// one on a tie).
    PlusOne,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Optimal => "optimal",
            Policy::Random => "random",
            Policy::Match => "match",
            Policy::Greedy => "greedy",
            Policy::PlusOne => "plus-one",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// The bidding side's probability of each of its cards (ascending) in `state` once
/// `upcard` is turned up.
pub fn bid_distribution(
    policy: Policy,
    side: Side,
    reader: &mut CachedReader,
    state: &GameState,
    upcard: u8,
) -> Result<Vec<f64>, QueryError> {
    let hand = match side {
        Side::A => state.a,
        Side::B => state.b,
    };
    let k = hand.len();
    let pure = |card: u8| -> Vec<f64> { hand.iter().map(|c| f64::from(c == card)).collect() };
    Ok(match policy {
        Policy::Optimal => {
            let game = reader.revealed(state, upcard)?;
            match side {
                Side::A => game.strategy_a,
                Side::B => game.strategy_b,
            }
        }
        Policy::Random => vec![1.0 / k as f64; k],
        Policy::Match => pure(nearest_card(hand, upcard)),
        Policy::Greedy => pure(greedy_card(hand, state.prizes, upcard)),
        Policy::PlusOne => pure(nearest_card(hand, upcard + 1)),
    })
}

/// The held card closest to `target`, the lower one on a tie.
fn nearest_card(hand: CardSet, target: u8) -> u8 {
    hand.iter()
        .min_by_key(|&c| (c.abs_diff(target), c))
        .unwrap_or(target)
}

/// The card of `hand` whose rank (ascending) is the rank of `upcard` among `prizes`.
fn greedy_card(hand: CardSet, prizes: CardSet, upcard: u8) -> u8 {
    let rank = prizes.iter().position(|c| c == upcard).unwrap_or(0);
    hand.iter().nth(rank).unwrap_or(upcard)
}

/// A rate with its 95 % Wilson score interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rate {
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// A mean with its 95 % normal-approximation interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mean {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub std_dev: f64,
}

const Z95: f64 = 1.959_963_984_540_054;

impl Rate {
    pub fn of(hits: u64, total: u64) -> Rate {
        let n = total as f64;
        let p = hits as f64 / n;
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Rate {
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }
}

/// Results of many games between two policies, from A's side.
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
}

/// Plays `games` games of `policy_a` against `policy_b`.
pub fn simulate(
    reader: &mut CachedReader,
    policy_a: Policy,
    policy_b: Policy,
    games: u64,
    rng: &mut impl Rng,
    progress: &mut dyn FnMut(u64),
) -> Result<SimulationReport, QueryError> {
    let (mut wins, mut draws, mut losses) = (0u64, 0u64, 0u64);
    let (mut sum, mut sum_squares) = (0.0f64, 0.0f64);
    for game in 0..games {
        let mut state = GameState::initial(reader.n());
        while !state.prizes.is_empty() {
            let upcard = turn_up(state.prizes, rng);
            let pa = bid_distribution(policy_a, Side::A, reader, &state, upcard)?;
            let pb = bid_distribution(policy_b, Side::B, reader, &state, upcard)?;
            let a = draw(state.a, &pa, rng);
            let b = draw(state.b, &pb, rng);
            state = play_round(&state, upcard, a, b);
        }
        match state.diff.signum() {
            1 => wins += 1,
            0 => draws += 1,
            _ => losses += 1,
        }
        let d = f64::from(state.diff);
        sum += d;
        sum_squares += d * d;
        if game % 1024 == 1023 {
            progress(game + 1);
        }
    }
    let n = games as f64;
    let mean = sum / n;
    let variance = if games > 1 {
        ((sum_squares - n * mean * mean) / (n - 1.0)).max(0.0)
    } else {
        0.0
    };
    let std_dev = variance.sqrt();
    let half = Z95 * std_dev / n.sqrt();
    Ok(SimulationReport {
        games,
        wins,
        draws,
        losses,
        win_rate: Rate::of(wins, games),
        draw_rate: Rate::of(draws, games),
        loss_rate: Rate::of(losses, games),
        score_difference: Mean {
            mean,
            low: mean - half,
            high: mean + half,
            std_dev,
        },
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

/// The exact value of `policy` (played by A) against a best-responding B, by backward
/// induction over the concrete states the game can reach.
/// `progress` hears the number of states evaluated now and then.
pub fn exploit(
    reader: &mut CachedReader,
    policy: Policy,
    progress: &mut dyn FnMut(u64),
) -> Result<Exploitation, QueryError> {
    let mut bids = |reader: &mut CachedReader, state: &GameState, upcard: u8| {
        bid_distribution(policy, Side::A, reader, state, upcard)
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

    fn cards(list: &[u8]) -> CardSet {
        CardSet::from_cards(list)
    }

    #[test]
    fn match_and_greedy_pick_the_documented_cards() {
        let hand = cards(&[1, 4, 6]);
        assert_eq!(nearest_card(hand, 4), 4);
        assert_eq!(nearest_card(hand, 5), 4, "a tie goes to the lower card");
        assert_eq!(nearest_card(hand, 3), 4);
        assert_eq!(nearest_card(hand, 2), 1);
        // plus-one: one above the prize, or the nearest held card
        assert_eq!(nearest_card(hand, 3 + 1), 4);
        assert_eq!(nearest_card(hand, 6 + 1), 6);
        let prizes = cards(&[2, 5, 9]);
        assert_eq!(greedy_card(hand, prizes, 9), 6);
        assert_eq!(greedy_card(hand, prizes, 5), 4);
        assert_eq!(greedy_card(hand, prizes, 2), 1);
    }

    #[test]
    fn wilson_interval_matches_a_known_case() {
        // 50 of 100: 0.5 with the Wilson interval 0.4038..0.5962
        let r = Rate::of(50, 100);
        assert_eq!(r.rate, 0.5);
        assert!(
            (r.low - 0.403_8).abs() < 1e-4 && (r.high - 0.596_2).abs() < 1e-4,
            "{r:?}"
        );
        let none = Rate::of(0, 10);
        assert_eq!(none.low, 0.0);
        assert!(none.high > 0.25 && none.high < 0.3, "{none:?}");
    }

    #[test]
    fn concrete_state_counts() {
        // N = 2: 1 + 8 + 1 states; with win, times 2 * 3 + 1 differences
        assert_eq!(concrete_state_count(2, Objective::Points), 10);
        assert_eq!(concrete_state_count(2, Objective::Win), 70);
    }
}
