//! A worker: pulls shards from a coordinator, fetches the slices they depend on, solves
//! them on its own thread pool and submits the results.
//!
//! Layout:
//! - [`ShardSolver`] (here): solves a shard on a rayon pool, off the async runtime.
//! - [`cache`]: the bounded cache of dependency slices.
//! - [`backoff`]: exponential backoff with jitter, and which errors are worth retrying.
//! - [`client`]: the loop that talks to the coordinator over gRPC.

pub mod backoff;
pub mod cache;
pub mod client;

use gops_common::cards::CardSet;
use gops_common::engine::{EngineError, LayerEngine, SolvedSlice};
use gops_common::slice::Slice;
use rayon::prelude::*;

/// A pool of solver threads.
pub struct ShardSolver {
    pool: rayon::ThreadPool,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("could not start {threads} solver threads: {reason}")]
    Pool { threads: usize, reason: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl ShardSolver {
    /// A solver with `threads` threads (at least 1).
    pub fn new(threads: usize) -> Result<ShardSolver, WorkerError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("gops-solver-{i}"))
            .build()
            .map_err(|e| WorkerError::Pool {
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
    ) -> Result<Vec<SolvedSlice>, WorkerError> {
        self.pool.install(|| {
            prize_ranks
                .par_iter()
                .map(|&rank| engine.solve_slice(rank, dependency))
                .collect::<Result<Vec<_>, _>>()
                .map_err(WorkerError::from)
        })
    }
}
