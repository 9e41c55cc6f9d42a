//! A pool of solver threads that solves a shard (a run of prize sets of one layer): the
//! same code for a worker of the cluster and for `gops solve`.

use rayon::prelude::*;

use crate::cards::CardSet;
use crate::engine::{EngineError, LayerEngine, SolvedSlice};
use crate::slice::Slice;

/// A pool of solver threads.
pub struct ShardSolver {
    pool: rayon::ThreadPool,
}

#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("could not start {threads} solver threads: {reason}")]
    Pool { threads: usize, reason: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl ShardSolver {
    /// A solver with `threads` threads (at least 1).
    pub fn new(threads: usize) -> Result<ShardSolver, ShardError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("gops-solver-{i}"))
            .build()
            .map_err(|e| ShardError::Pool {
                threads,
                reason: e.to_string(),
            })?;
        Ok(ShardSolver { pool })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Solves the slices of `prize_ranks` (in that order) of the engine's layer.
    pub fn solve_shard<'d>(
        &self,
        engine: &LayerEngine,
        prize_ranks: &[u32],
        dependency: &(dyn Fn(CardSet) -> &'d Slice + Sync),
    ) -> Result<Vec<SolvedSlice>, ShardError> {
        self.pool.install(|| {
            prize_ranks
                .par_iter()
                .map(|&rank| engine.solve_slice(rank, dependency))
                .collect::<Result<Vec<_>, _>>()
                .map_err(ShardError::from)
        })
    }
}
