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
    /// How submissions are verified beyond the re-solved sample.
    pub verify_mode: VerifyMode,
    /// How long without progress (or without a live worker) counts as a stall; `None`:
    /// four leases.
    pub stall_after: Option<Duration>,
}

/// How a coordinator verifies submissions (`--verify-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VerifyMode {
    /// A sample of each slice's states re-solved (`verify_fraction`).
    #[default]
    Sample,
    /// That, and every slice solved by two parties and stored only when their copies
    /// agree.
    Replicate,
}

impl VerifyMode {
    /// The names `--verify-mode` takes, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["sample", "replicate"];

    /// Whether every slice waits for a second party's copy.
    pub fn replicates(self) -> bool {
        self == VerifyMode::Replicate
    }
}

impl std::str::FromStr for VerifyMode {
    type Err = String;

    fn from_str(name: &str) -> Result<VerifyMode, String> {
        match name {
            "sample" => Ok(VerifyMode::Sample),
            "replicate" => Ok(VerifyMode::Replicate),
            other => Err(format!("no verify mode '{other}': sample or replicate")),
        }
    }
}

/// How long a submission whose copy met another copy being written waits at most for
/// that write to end (it is told when it does; a write takes milliseconds).
pub(crate) const RACE_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Workers listed in a status at most (the counts cover all).
pub(crate) const MAX_LISTED_WORKERS: usize = 1000;

/// Bounds of `--lease-ms`: shorter leases expire between heartbeats of a busy worker,
/// longer ones leave a dead worker's shard idle for a day.
pub const LEASE_RANGE_MS: std::ops::RangeInclusive<u64> = 200..=86_400_000;

/// `fraction` if it is one of the states to re-solve: from 0 (none) to 1 (all). The one
/// check of `--verify-fraction`, for the command line and [`CoordinatorConfig::check`].
pub fn verify_fraction(fraction: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&fraction) {
        Ok(fraction)
    } else {
        Err(format!("must be between 0 and 1, got {fraction}"))
    }
}

/// `share` if it is a share of the slices to re-solve states of: above 0, at most 1.
/// The one check of `--verify-slices`.
pub fn verify_slices(share: f64) -> Result<f64, String> {
    if share > 0.0 && share <= 1.0 {
        Ok(share)
    } else {
        Err(format!("must be above 0 and at most 1, got {share}"))
    }
}

impl CoordinatorConfig {
    /// How long without progress, or without a live worker, is a stall.
    pub fn quiet_after(&self) -> Duration {
        self.stall_after.unwrap_or(self.lease * 4)
    }

    /// Whether the settings can run: the verify fraction and share in their ranges
    /// (checked by [`crate::Coordinator::new`] for every caller, the command line's and
    /// the libraries' alike).
    pub fn check(&self) -> Result<(), String> {
        verify_fraction(self.verify_fraction).map_err(|e| format!("the verify fraction {e}"))?;
        verify_slices(self.verify_slices).map_err(|e| format!("the verify share {e}"))?;
        Ok(())
    }
}

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
            verify_mode: VerifyMode::Sample,
            stall_after: None,
        }
    }
}
