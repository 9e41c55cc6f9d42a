//! The safe exploiter, `exploit:MODEL[:RISK]` (safe opponent exploitation in the sense of
//! Ganzfried and Sandholm; the mathematics: `shared/EXPLOIT.md`). At each decision it
//! plays the mix that earns most against MODEL's predicted bid, among the mixes that
//! keep, against every reply, at least the revealed game's value less its budget. The
//! budget is RISK plus what it banked above the value so far: after each round, its
//! mix's result against the bid the opponent actually made, less the value. By the
//! arena's telescoping, its expected result is at least the game's value less RISK
//! against any opponent whatever, adaptive ones included; against the equilibrium it
//! gains and loses nothing.
//!
//! One small LP a decision (at most 16 cards and 17 constraints), over the matrix the
//! arena measures losses with, solved by `microlp`.

use gops_db::read::{QueryError, Reader, Slices};
use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOutcome};

use super::Model;
use crate::protocol::{Request, Seat};

/// A decision of the safe exploiter, from its own side.
#[derive(Clone, Debug, PartialEq)]
pub struct SafeDecision {
    /// Its mix over its cards, ascending.
    pub mix: Vec<f64>,
    /// What the mix earns against each of the opponent's cards (ascending): the
    /// immediate result plus the equilibrium value of the child, for the exploiter.
    pub against: Vec<f64>,
    /// The revealed game's value, for the exploiter.
    pub value: f64,
    /// The model's predicted distribution of the opponent's bid.
    pub predicted: Vec<f64>,
    /// The budget it decided under.
    pub budget: f64,
}

impl SafeDecision {
    /// What it expects to earn above the value against the model.
    pub fn expected_gain(&self) -> f64 {
        self.against
            .iter()
            .zip(&self.predicted)
            .map(|(a, p)| a * p)
            .sum::<f64>()
            - self.value
    }
}

/// The mix of the safe exploiter at `request` with `budget` to risk: the best against
/// `model`'s prediction that keeps at least the value less the budget against every
/// reply. The revealed game's certificate gap is allowed on top of the budget (so that
/// the equilibrium's own mix is always feasible); where the LP fails, the equilibrium's
/// mix is played.
pub fn safe_decision<S: Slices>(
    reader: &mut Reader<'_, S>,
    model: &Model,
    request: &Request,
    budget: f64,
) -> Result<SafeDecision, QueryError> {
    let game = reader.revealed(&request.state(), request.upcard)?;
    let predicted = model.probabilities(reader, &request.mirrored())?;
    let k = request.hand.len();
    // the exploiter's payoff matrix, rows its cards, columns the opponent's
    let own = |i: usize, j: usize| match request.seat {
        Seat::A => game.matrix[i * k + j],
        Seat::B => -game.matrix[j * k + i],
    };
    let (value, equilibrium) = match request.seat {
        Seat::A => (game.value, &game.strategy_a),
        Seat::B => (-game.value, &game.strategy_b),
    };
    let floor = value - budget.max(0.0) - game.gap.max(1e-12);
    let mix = if k == 1 {
        vec![1.0]
    } else {
        best_safe_mix(k, &own, &predicted, floor).unwrap_or_else(|| equilibrium.clone())
    };
    let against = (0..k)
        .map(|j| (0..k).map(|i| mix[i] * own(i, j)).sum())
        .collect();
    Ok(SafeDecision {
        mix,
        against,
        value,
        predicted,
        budget,
    })
}

/// max x·M p subject to x·M e_j >= floor for every j, x a distribution; `None` if the
/// LP fails.
fn best_safe_mix(
    k: usize,
    m: &dyn Fn(usize, usize) -> f64,
    predicted: &[f64],
    floor: f64,
) -> Option<Vec<f64>> {
    let mut problem = Problem::new(OptimizationDirection::Maximize);
    let x: Vec<_> = (0..k)
        .map(|i| {
            let earned: f64 = (0..k).map(|j| m(i, j) * predicted[j]).sum();
            problem.add_var(earned, (0.0, 1.0))
        })
        .collect();
    for j in 0..k {
        let terms: Vec<_> = (0..k).map(|i| (x[i], m(i, j))).collect();
        problem.add_constraint(terms, ComparisonOp::Ge, floor);
    }
    problem.add_constraint(
        x.iter().map(|&v| (v, 1.0)).collect::<Vec<_>>(),
        ComparisonOp::Eq,
        1.0,
    );
    let SolveOutcome::Solution(solution) = problem.solve().ok()? else {
        return None;
    };
    let mix: Vec<f64> = x.iter().map(|&v| solution[v].clamp(0.0, 1.0)).collect();
    let sum: f64 = mix.iter().sum();
    (sum > 0.0 && sum.is_finite()).then(|| mix.iter().map(|p| p / sum).collect())
}

/// The safe exploiter at the table: its budget carried from decision to decision of a
/// game, from the bids the opponent actually made (the request's history).
#[derive(Clone, Debug)]
pub struct SafeExploiter {
    model: Model,
    risk: f64,
    /// RISK plus what was banked in this game so far.
    budget: f64,
    /// The game and round of the last decision, and what its mix earns against each of
    /// the opponent's cards above the value.
    last: Option<(u64, u8, Vec<u8>, Vec<f64>)>,
}

impl SafeExploiter {
    pub fn new(model: Model, risk: f64) -> SafeExploiter {
        SafeExploiter {
            model,
            risk,
            budget: risk,
            last: None,
        }
    }

    /// The budget now (RISK plus what was banked in this game).
    pub fn budget(&self) -> f64 {
        self.budget
    }

    /// The decision at `request`, after banking the last round's result.
    pub fn decide<S: Slices>(
        &mut self,
        reader: &mut Reader<'_, S>,
        request: &Request,
    ) -> Result<SafeDecision, QueryError> {
        self.bank(request);
        let decision = safe_decision(reader, &self.model, request, self.budget)?;
        let above: Vec<f64> = decision
            .against
            .iter()
            .map(|a| a - decision.value)
            .collect();
        self.last = Some((
            request.game,
            request.round,
            request.opponent_hand.clone(),
            above,
        ));
        Ok(decision)
    }

    /// Banks the last decision's result against the bid the opponent made, or starts a
    /// new game's budget.
    fn bank(&mut self, request: &Request) {
        let continues = matches!(&self.last, Some((game, round, _, _))
            if *game == request.game && *round + 1 == request.round);
        if !continues {
            self.budget = self.risk;
            return;
        }
        let (_, _, opponent, above) = self.last.take().expect("checked above");
        let made = request.history.last().map(|r| r.opponent_bid);
        if let Some(at) = made.and_then(|b| opponent.iter().position(|&c| c == b)) {
            self.budget += above[at];
        }
    }
}
