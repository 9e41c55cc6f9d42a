//! The coordinator's settings (timings, checks, limits) and their bounds: a leaf, so
//! that nothing depends on the core to read them.

use std::time::Duration;

/// Timings and checks of a coordinator; tests use millisecond leases.
#[derive(Clone, Debug)]
pub struct CoordinatorConfig {
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
    /// Fraction of the submitted states re-solved and compared bit for bit.
    pub verify_fraction: f64,
    /// Share of the submitted slices whose states are re-solved (each chosen at random,
    /// with `verify_fraction / verify_slices` of its states); 1: every slice. Only a
    /// chosen slice reads its dependency slices from the store.
    pub verify_slices: f64,
    /// What a worker is told to wait when nothing can be leased.
    pub retry_after: Duration,
    /// Shards per layer at least (when it has that many slices), to spread work.
    pub min_shards: usize,
    /// Matrix games a shard should hold.
    pub target_games_per_shard: u64,
    /// Shards are not made smaller than this many matrix games.
    pub min_games_per_shard: u64,
    /// Most slices one fetch may ask for.
    pub max_fetch: usize,
    /// Memory for slices of layer k - 1 kept to check submissions against.
    pub verify_cache_bytes: usize,
    /// A worker (or credential) with this many rejected submissions gets no more shards.
    pub max_rejections: u64,
    /// Live leases one worker may hold at once: one being solved, one being handed in,
    /// and the next, leased and fetched ahead while the first is solved.
    pub max_leases_per_worker: usize,
    /// Sessions the registry holds at most (silent ones are forgotten first).
    pub max_sessions: usize,
    /// Every slice solved by two parties and stored only when their copies agree.
    pub replicate: bool,
}

/// How long a submission whose copy met another copy being written waits before it
/// looks again (a write of a shard's slices takes milliseconds).
pub(crate) const RACE_PAUSE: Duration = Duration::from_millis(20);

/// Workers listed in a status at most (the counts cover all).
pub(crate) const MAX_LISTED_WORKERS: usize = 1000;

/// Bounds of `--lease-ms`: shorter leases expire between heartbeats of a busy worker,
/// longer ones leave a dead worker's shard idle for a day.
pub const LEASE_RANGE_MS: std::ops::RangeInclusive<u64> = 200..=86_400_000;

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            lease: Duration::from_secs(60),
            verify_fraction: 0.01,
            verify_slices: 1.0,
            retry_after: Duration::from_millis(200),
            min_shards: 64,
            target_games_per_shard: gops_common::plan::TARGET_GAMES_PER_SHARD,
            min_games_per_shard: gops_common::plan::MIN_GAMES_PER_SHARD,
            max_fetch: gops_proto::MAX_FETCH_SLICES,
            verify_cache_bytes: 512 << 20,
            max_rejections: 3,
            max_leases_per_worker: 3,
            max_sessions: 10_000,
            replicate: false,
        }
    }
}
