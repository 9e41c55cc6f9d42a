//! What a worker did in its run, as it reports it when it stops.

use crate::fetch::SourceCounts;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    pub shards: u64,
    /// Slices the coordinator stored from this worker.
    pub slices: u64,
    /// Slices it had already (another worker's copy came first).
    pub duplicates: u64,
    /// Slices held for another worker's copy to confirm (`--verify-mode replicate`).
    pub held: u64,
    pub games: u64,
    pub rejected: u64,
    /// Where the dependency slices came from.
    pub dependencies: SourceCounts,
}
