//! Re-solving stored states to check them: which states of a slice to re-solve (all, or
//! a random sample of a fraction), and one state re-solved on its own and compared bit for
//! bit with the stored value. The coordinator checks submissions with this, and
//! `gops verify` checks a whole db.

use rand::Rng;

use crate::cards::CardSet;
use crate::engine::{EngineError, LayerEngine};
use crate::kernel::GameSolver;
use crate::layout::Oriented;
use crate::objective::Objective;
use crate::slice::Slice;

/// A stored state and its value re-solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateCheck {
    /// The canonical pattern.
    pub pattern: usize,
    /// The score difference.
    pub d: i32,
    pub stored: f64,
    pub resolved: f64,
    /// The largest certificate gap of the state's games.
    pub gap: f64,
}

impl StateCheck {
    /// Whether the stored value has the re-solved value's bits.
    pub fn matches(&self) -> bool {
        self.stored.to_bits() == self.resolved.to_bits()
    }

    /// Whether the solve that stored this state solved its games (so their gaps count in
    /// the slice's maximum): always for `points`; for `win`, whenever the value is not
    /// exactly ±1.
    pub fn was_solved(&self, objective: Objective) -> bool {
        objective == Objective::Points || self.stored.abs() != 1.0
    }
}

/// The states of `slice` (pattern-major indices over its live score differences) to
/// re-solve, only at score differences that can occur (its [`crate::reach::Reach`]):
/// every one when `fraction >= 1`, none when `fraction <= 0` (the cheap checks only), else
/// `ceil(fraction * states)` of them (at least one) drawn with `rng`.
pub fn sample_states(slice: &Slice, fraction: f64, rng: &mut impl Rng) -> Vec<usize> {
    let width = slice.width();
    let slots: Vec<usize> = (0..width)
        .filter(|&pos| slice.reach.is_none_or(|r| r.contains(pos)))
        .collect();
    let states = slice.patterns() * slots.len();
    let index = |i: usize| (i / slots.len()) * width + slots[i % slots.len()];
    if states == 0 || fraction <= 0.0 || fraction.is_nan() {
        return Vec::new();
    }
    if fraction >= 1.0 {
        return (0..states).map(index).collect();
    }
    let samples = ((states as f64 * fraction).ceil() as usize).clamp(1, states);
    let mut drawn: Vec<usize> = (0..samples).map(|_| rng.random_range(0..states)).collect();
    // in order: neighbouring patterns read neighbouring values of the slices below
    drawn.sort_unstable();
    drawn.into_iter().map(index).collect()
}

/// Re-solves state `state` (an index from [`sample_states`]) of `slice`, the stored slice
/// of `prize_rank` in the engine's layer, reading the layer below through `dependency`.
pub fn resolve_state<'d>(
    engine: &LayerEngine,
    solver: &mut GameSolver,
    prize_rank: u32,
    slice: &Slice,
    state: usize,
    dependency: &(dyn Fn(CardSet) -> &'d Slice + Sync),
) -> Result<StateCheck, EngineError> {
    let (pattern, slot) = (state / slice.width(), state % slice.width());
    let d = slot as i32 - slice.diff_range;
    let again = engine.recompute_value(solver, prize_rank, pattern, d, dependency)?;
    Ok(StateCheck {
        pattern,
        d,
        stored: slice.value(Oriented::new(pattern as u32, false), d),
        resolved: again.value,
        gap: again.gap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prizes::prize_rank;
    use crate::solution::InMemorySolution;
    use rand::SeedableRng;

    #[test]
    fn every_stored_state_resolves_to_its_bits_and_a_changed_one_does_not() {
        let game = InMemorySolution::solve(5, Objective::Win).unwrap();
        let k = 3;
        let engine = LayerEngine::new(5, k, Objective::Win);
        let below = &game.layers[k as usize - 1];
        let dependency = |prizes| &below[prize_rank(prizes) as usize];
        let mut solver = GameSolver::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for (rank, slice) in game.layers[k as usize].iter().enumerate() {
            let all = sample_states(slice, 1.0, &mut rng);
            let reachable = slice.reach.expect("a win slice knows its reach").count();
            assert_eq!(all.len(), slice.patterns() * reachable);
            assert!(reachable < slice.width(), "layer 3 of 5 has holes");
            assert_eq!(sample_states(slice, 1e-9, &mut rng).len(), 1);
            assert!(sample_states(slice, 0.0, &mut rng).is_empty());
            for state in all {
                let check =
                    resolve_state(&engine, &mut solver, rank as u32, slice, state, &dependency)
                        .unwrap();
                assert!(check.matches(), "{check:?}");
            }
        }
        // a points slice is dense with one score difference: state p is value p
        let game = InMemorySolution::solve(5, Objective::Points).unwrap();
        let engine = LayerEngine::new(5, k, Objective::Points);
        let below = &game.layers[k as usize - 1];
        let dependency = |prizes| &below[prize_rank(prizes) as usize];
        let mut altered = game.layers[k as usize][4].clone();
        assert_eq!(altered.width(), 1);
        let check = resolve_state(&engine, &mut solver, 4, &altered, 2, &dependency).unwrap();
        assert!(check.matches(), "{check:?}");
        altered.values[2] = f64::from_bits(altered.values[2].to_bits() ^ 1);
        let check = resolve_state(&engine, &mut solver, 4, &altered, 2, &dependency).unwrap();
        assert!(!check.matches());
        assert_eq!((check.pattern, check.d), (2, 0));
    }
}
