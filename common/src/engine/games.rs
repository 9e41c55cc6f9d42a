//! How many matrix games a slice can have taken to solve, from its shape and its values:
//! what a coordinator checks a worker's reported `games` against (the figure is not in
//! the slice's digest, and a liar could otherwise report any number).

use std::ops::RangeInclusive;

use crate::layout::Oriented;
use crate::objective::Objective;
use crate::prizes::prize_unrank;
use crate::slice::Slice;

use super::LayerEngine;

impl LayerEngine {
    /// The matrix games [`LayerEngine::solve_slice`] can have solved for the slice of
    /// `prize_rank` whose values are `slice`. `points`: exactly k per canonical pattern
    /// that is not symmetric (a symmetric one is a fair game, 0 without a solve). `win`:
    /// at most k per score difference solved or probed (every one of an asymmetric
    /// pattern, those above 0 of a symmetric one), at least k per stored value strictly
    /// between -1 and 1 (no such value comes without a solve).
    pub fn games_bounds(&self, prize_rank: u32, slice: &Slice) -> RangeInclusive<u64> {
        let k = u64::from(self.k());
        let prizes = prize_unrank(prize_rank, self.k());
        let diff_range = self.objective.diff_range(prizes);
        let width = self.objective.slice_width(prizes) as u64;
        // one pass: the symmetric patterns, and (win) the values only a solve gives
        let (mut symmetric, mut solved) = (0u64, 0u64);
        for (p, pattern) in self.layout.canonical.iter().enumerate() {
            let is_symmetric = *pattern == pattern.swapped();
            symmetric += u64::from(is_symmetric);
            if self.objective == Objective::Points {
                continue;
            }
            let first_d = if is_symmetric { 1 } else { -diff_range };
            for d in first_d..=diff_range {
                let reachable = slice.reach.as_ref().is_none_or(|r| r.contains_diff(d));
                let v = slice.value(Oriented::new(p as u32, false), d);
                if reachable && v > -1.0 && v < 1.0 {
                    solved += 1;
                }
            }
        }
        let asymmetric = self.layout.canonical.len() as u64 - symmetric;
        match self.objective {
            Objective::Points => k * asymmetric..=k * asymmetric,
            Objective::Win => k * solved..=k * (asymmetric * width + symmetric * diff_range as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{LayerEngine, terminal_slice};
    use crate::objective::Objective;
    use crate::prizes::{prize_rank, prize_set_count};

    /// Every slice of the 5- and 6-card games, both objectives: the games the engine
    /// reports are within the bounds, and for `points` equal to them.
    #[test]
    fn the_games_of_every_slice_are_within_its_bounds() {
        for n in [5u8, 6] {
            for objective in [Objective::Points, Objective::Win] {
                let mut some_lower_bound = false;
                let mut below = vec![terminal_slice()];
                for k in 1..=n {
                    let engine = LayerEngine::new(n, k, objective);
                    let dependency = |prizes| &below[prize_rank(prizes) as usize];
                    let mut slices = Vec::new();
                    for rank in 0..prize_set_count(n, k) as u32 {
                        let solved = engine.solve_slice(rank, &dependency).unwrap();
                        let bounds = engine.games_bounds(rank, &solved.slice);
                        assert!(
                            bounds.contains(&solved.games),
                            "n {n} {objective} k {k} rank {rank}: {} games, bounds {bounds:?}",
                            solved.games
                        );
                        some_lower_bound |= *bounds.start() > 0;
                        if objective == Objective::Points {
                            assert_eq!(bounds.start(), bounds.end());
                        }
                        slices.push(solved.slice);
                    }
                    below = slices;
                }
                assert!(some_lower_bound, "n {n} {objective}: the bounds must bind");
            }
        }
    }
}
