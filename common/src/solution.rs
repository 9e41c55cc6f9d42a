//! A whole game solved in memory, layer by layer: the reference path for tests and
//! benchmarks on small N. The production driver (coordinator crate) computes the same
//! slices through the same [`LayerEngine`], but shards them and keeps them in the store.

use crate::checksum::LayerChecksum;
use crate::engine::{DiffSearch, EngineError, LayerEngine, terminal_slice};
use crate::kernel::PivotStart;
use crate::layout::LayerLayout;
use crate::objective::Objective;
use crate::prizes::{prize_rank, prize_set_count};
use crate::slice::Slice;
use crate::state::GameState;

pub struct InMemorySolution {
    pub n: u8,
    pub objective: Objective,
    /// `layers[k][prize_rank]`: slice values; layer 0 is the terminal slice.
    pub layers: Vec<Vec<Slice>>,
    pub layouts: Vec<LayerLayout>,
    /// Largest certificate gap per layer.
    pub max_gaps: Vec<f64>,
    pub games: u64,
}

impl InMemorySolution {
    /// Solves every layer on the current rayon pool.
    pub fn solve(n: u8, objective: Objective) -> Result<InMemorySolution, EngineError> {
        Self::solve_with(n, objective, DiffSearch::Bisect)
    }

    /// Solves every layer, choosing how `win` slices search their score differences.
    pub fn solve_with(
        n: u8,
        objective: Objective,
        diff_search: DiffSearch,
    ) -> Result<InMemorySolution, EngineError> {
        Self::solve_as(n, objective, diff_search, PivotStart::default())
    }

    /// Solves every layer with the kernel's simplex started as `start` says (the
    /// arithmetic of a db of another format).
    pub fn solve_as(
        n: u8,
        objective: Objective,
        diff_search: DiffSearch,
        start: PivotStart,
    ) -> Result<InMemorySolution, EngineError> {
        Self::solve_engines(n, objective, |engine| {
            engine.diff_search = diff_search;
            engine.start = start;
        })
    }

    /// Solves every live score difference of `win`, those that cannot occur too, as db
    /// formats before 6 did ([`LayerEngine::every_diff`]).
    pub fn solve_every_diff(n: u8, objective: Objective) -> Result<InMemorySolution, EngineError> {
        Self::solve_engines(n, objective, |engine| engine.every_diff = true)
    }

    /// Solves every layer with engines set up by `configure`.
    fn solve_engines(
        n: u8,
        objective: Objective,
        configure: impl Fn(&mut LayerEngine),
    ) -> Result<InMemorySolution, EngineError> {
        let mut layers = vec![vec![terminal_slice()]];
        let mut layouts = vec![LayerLayout::new(n, 0)];
        let mut max_gaps = vec![0.0];
        let mut games = 0;
        for k in 1..=n {
            let mut engine = LayerEngine::new(n, k, objective);
            configure(&mut engine);
            let below = &layers[k as usize - 1];
            let dependency = |prizes| &below[prize_rank(prizes) as usize];
            let mut slices = Vec::with_capacity(prize_set_count(n, k));
            let mut max_gap = 0.0f64;
            for rank in 0..prize_set_count(n, k) as u32 {
                let solved = engine.solve_slice(rank, &dependency)?;
                max_gap = max_gap.max(solved.max_gap);
                games += solved.games;
                slices.push(solved.slice);
            }
            layers.push(slices);
            layouts.push(engine.layout);
            max_gaps.push(max_gap);
        }
        Ok(InMemorySolution {
            n,
            objective,
            layers,
            layouts,
            max_gaps,
            games,
        })
    }

    /// Each layer's checksum (1..=n), as a store computes it from the same slices.
    pub fn checksums(&self) -> Vec<String> {
        self.layers[1..]
            .iter()
            .map(|slices| {
                let mut checksum = LayerChecksum::new();
                slices.iter().for_each(|s| checksum.add(&s.digest()));
                checksum.finish()
            })
            .collect()
    }

    /// The value of a concrete state of this game.
    pub fn value(&self, state: &GameState) -> f64 {
        let k = state.k() as usize;
        let slice = &self.layers[k][state.prize_rank() as usize];
        state.value_in(self.objective, &self.layouts[k], slice)
    }
}
