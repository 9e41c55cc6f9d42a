//! What a run of the arena reports: one JSON record per decision ([`decision_json`]), and
//! the [`Summary`] a [`Tally`] of the games makes: the mean result and the mean summed
//! loss with their 95 % intervals, the loss by round and by upcard (each sums to the
//! mean loss), the worst decisions with the explorer's address of their state, and the
//! bot's faults.

use std::collections::BTreeMap;

use gops_common::objective::Objective;
use gops_common::state::GameState;
use serde::Serialize;
use serde_json::{Value, json};

use crate::game::{Decision, GameRecord};
use crate::stats::Moments;

mod text;

pub use text::SummaryText;

/// Worst decisions and fault lines kept for the summary.
pub const WORST_KEPT: usize = 10;
pub const FAULTS_KEPT: usize = 10;

/// The explorer's address of `state` (`gops serve --db DB`, then this path).
pub fn explorer_path(state: &GameState) -> String {
    let join = |cards: Vec<u8>| {
        cards
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "/?a={}&b={}&prizes={}&diff={}",
        join(state.a.to_vec()),
        join(state.b.to_vec()),
        join(state.prizes.to_vec()),
        state.diff
    )
}

/// One decision as a JSON record (`gops arena --json`).
pub fn decision_json(d: &Decision) -> Value {
    let (hand, _) = d.seat.hands(&d.state);
    json!({
        "kind": "decision",
        "game": d.game,
        "round": d.round,
        "seat": d.seat.name(),
        "a": d.state.a.to_vec(),
        "b": d.state.b.to_vec(),
        "prizes": d.state.prizes.to_vec(),
        "diff": d.state.diff,
        "upcard": d.upcard,
        "hand": hand.to_vec(),
        "probabilities": d.probabilities,
        "bid": d.bid,
        "opponent_bid": d.opponent_bid,
        "value": d.value,
        "loss": d.loss,
        "fault": d.fault.as_ref().map(ToString::to_string),
    })
}

/// The loss in one part of the games (a round, an upcard): its share of the mean loss.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossPart {
    /// The round or the upcard.
    pub at: u8,
    pub decisions: u64,
    /// The loss of these decisions per game: the parts sum to the mean loss.
    pub loss_per_game: f64,
    /// Their mean loss per decision.
    pub mean_loss: f64,
}

/// A decision among the run's worst.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorstDecision {
    pub game: u64,
    pub round: u8,
    pub seat: &'static str,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub prizes: Vec<u8>,
    pub diff: i32,
    pub upcard: u8,
    pub hand: Vec<u8>,
    pub probabilities: Vec<f64>,
    pub bid: Option<u8>,
    pub loss: f64,
    /// The explorer's address of the state (`gops serve --db DB`).
    pub explorer: String,
    pub fault: Option<String>,
}

/// A fault, where it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaultLine {
    pub game: u64,
    pub round: u8,
    pub kind: &'static str,
    pub message: String,
}

/// What a run reports at its end: the last line of `gops arena --json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub kind: &'static str,
    pub n: u8,
    pub objective: Objective,
    pub games: u64,
    pub seed: u64,
    /// The bot's seat alternates: A in even games, B in odd ones.
    pub games_as_a: u64,
    /// A's value of the game at the start (the equilibrium's).
    pub game_value: f64,
    /// The bot's mean result (`win`: 1, 0 or -1 a game; `points`: its score minus the
    /// opponent's), a forfeited game counted as the opponent taking every prize left.
    pub mean_result: f64,
    pub result_ci95: [f64; 2],
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub win_rate: f64,
    /// The mean over games of the summed decision losses: the bot's expected shortfall
    /// from the game's value against the equilibrium.
    pub mean_loss: f64,
    pub loss_ci95: [f64; 2],
    /// The game's value for the bot (by seat) minus the mean loss: what the telescoping
    /// says the mean result estimates.
    pub result_from_loss: f64,
    pub decisions: u64,
    pub loss_by_round: Vec<LossPart>,
    pub loss_by_upcard: Vec<LossPart>,
    pub worst_decisions: Vec<WorstDecision>,
    /// Games the bot forfeited (a crash, a time-out, malformed JSON, an illegal bid).
    pub bot_faults: u64,
    pub faults_by_kind: BTreeMap<&'static str, u64>,
    pub first_faults: Vec<FaultLine>,
    pub seconds: f64,
    pub decisions_per_second: f64,
}

/// The games of a run, added in game order.
pub struct Tally {
    n: u8,
    objective: Objective,
    seed: u64,
    game_value: f64,
    result: Moments,
    loss: Moments,
    value_for_bot: f64,
    games_as_a: u64,
    outcomes: [u64; 3],
    decisions: u64,
    by_round: Vec<(u64, f64)>,
    by_upcard: Vec<(u64, f64)>,
    worst: Vec<WorstDecision>,
    faults: BTreeMap<&'static str, u64>,
    first_faults: Vec<FaultLine>,
}

impl Tally {
    /// A tally of the `n`-card game whose value for A at the start is `game_value`.
    pub fn new(n: u8, objective: Objective, seed: u64, game_value: f64) -> Tally {
        let parts = usize::from(n) + 1;
        Tally {
            n,
            objective,
            seed,
            game_value,
            result: Moments::default(),
            loss: Moments::default(),
            value_for_bot: 0.0,
            games_as_a: 0,
            outcomes: [0; 3],
            decisions: 0,
            by_round: vec![(0, 0.0); parts],
            by_upcard: vec![(0, 0.0); parts],
            worst: Vec::new(),
            faults: BTreeMap::new(),
            first_faults: Vec::new(),
        }
    }

    pub fn games(&self) -> u64 {
        self.result.count()
    }

    pub fn add(&mut self, game: &GameRecord) {
        self.result.add(game.result);
        self.loss.add(game.loss());
        self.value_for_bot += game.seat.own(self.game_value);
        self.games_as_a += u64::from(game.seat == crate::protocol::Seat::A);
        let outcome = match game.result.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Greater) => 0,
            Some(std::cmp::Ordering::Equal) => 1,
            _ => 2,
        };
        self.outcomes[outcome] += 1;
        for d in &game.decisions {
            self.decisions += 1;
            for (part, at) in [
                (&mut self.by_round, d.round),
                (&mut self.by_upcard, d.upcard),
            ] {
                part[usize::from(at)].0 += 1;
                part[usize::from(at)].1 += d.loss;
            }
            self.consider_worst(d);
            if let Some(fault) = &d.fault {
                *self.faults.entry(fault.kind()).or_default() += 1;
                if self.first_faults.len() < FAULTS_KEPT {
                    self.first_faults.push(FaultLine {
                        game: d.game,
                        round: d.round,
                        kind: fault.kind(),
                        message: fault.to_string(),
                    });
                }
            }
        }
    }

    /// Keeps the decision if it is among the worst so far (the earlier one first on a
    /// tie, so that the list does not depend on the threads).
    fn consider_worst(&mut self, d: &Decision) {
        let full = self.worst.len() >= WORST_KEPT;
        if full && self.worst.last().is_some_and(|w| w.loss >= d.loss) {
            return;
        }
        let (hand, _) = d.seat.hands(&d.state);
        let entry = WorstDecision {
            game: d.game,
            round: d.round,
            seat: d.seat.name(),
            a: d.state.a.to_vec(),
            b: d.state.b.to_vec(),
            prizes: d.state.prizes.to_vec(),
            diff: d.state.diff,
            upcard: d.upcard,
            hand: hand.to_vec(),
            probabilities: d.probabilities.clone(),
            bid: d.bid,
            loss: d.loss,
            explorer: explorer_path(&d.state),
            fault: d.fault.as_ref().map(ToString::to_string),
        };
        let at = self.worst.partition_point(|w| w.loss >= d.loss);
        self.worst.insert(at, entry);
        self.worst.truncate(WORST_KEPT);
    }

    /// The summary, with the run's wall time.
    pub fn summary(&self, seconds: f64) -> Summary {
        let games = self.games();
        let per_game = |sum: f64| if games == 0 { 0.0 } else { sum / games as f64 };
        let parts = |part: &[(u64, f64)]| {
            part.iter()
                .enumerate()
                .filter(|(_, (count, _))| *count > 0)
                .map(|(at, &(count, sum))| LossPart {
                    at: at as u8,
                    decisions: count,
                    loss_per_game: per_game(sum),
                    mean_loss: sum / count as f64,
                })
                .collect()
        };
        Summary {
            kind: "summary",
            n: self.n,
            objective: self.objective,
            games,
            seed: self.seed,
            games_as_a: self.games_as_a,
            game_value: self.game_value,
            mean_result: self.result.mean(),
            result_ci95: self.result.ci95(),
            wins: self.outcomes[0],
            draws: self.outcomes[1],
            losses: self.outcomes[2],
            win_rate: per_game(self.outcomes[0] as f64),
            mean_loss: self.loss.mean(),
            loss_ci95: self.loss.ci95(),
            result_from_loss: per_game(self.value_for_bot) - self.loss.mean(),
            decisions: self.decisions,
            loss_by_round: parts(&self.by_round),
            loss_by_upcard: parts(&self.by_upcard),
            worst_decisions: self.worst.clone(),
            bot_faults: self.faults.values().sum(),
            faults_by_kind: self.faults.clone(),
            first_faults: self.first_faults.clone(),
            seconds,
            decisions_per_second: if seconds > 0.0 {
                self.decisions as f64 / seconds
            } else {
                0.0
            },
        }
    }
}
