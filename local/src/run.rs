//! What a run on one machine is given and how it ends, whichever way its shards travel
//! (over loopback gRPC, [`crate::solve_local`], or straight to a solver loop,
//! [`crate::solve_direct`]): its settings, the stop signal, and the outcome read from the
//! coordinator's record of the run. A stop request (Ctrl-C, or a slice budget in tests)
//! lets the shard in hand be stored, then ends the run; the next run resumes from the
//! store.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gops_common::budget::CacheSplit;
use gops_common::shard::ShardError;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::error::{CoreError, RunFailure};
use gops_coordinator::report::observer::RunObserver;
use gops_db::store::{LayerRecord, Store, StoreError};
use tracing::info;

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error(transparent)]
    Core(#[from] CoreError),
    #[error(transparent)]
    Solver(#[from] ShardError),
    /// The coordinator recorded the run as failed (a store it cannot write, a shard no
    /// worker gets past).
    #[error(transparent)]
    Failed(RunFailure),
    #[error("local cluster: {0}")]
    Runtime(String),
}

impl From<StoreError> for LocalError {
    fn from(e: StoreError) -> Self {
        LocalError::Core(CoreError::Store(e))
    }
}

/// How a solve ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveOutcome {
    Complete(SolveSummary),
    /// Stopped on request; what was stored stays, and a new solve resumes from it.
    Interrupted {
        layer: u8,
        slices_stored: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct SolveSummary {
    pub layers: Vec<LayerRecord>,
    /// States of the whole game (both orientations, all layers).
    pub states: u64,
    /// Matrix games solved by this run (not those of a run it resumed).
    pub games: u64,
    /// Slices solved by this run.
    pub slices: usize,
    pub wall: Duration,
}

/// Stop conditions: a flag (Ctrl-C) and, for tests, a budget of slices after which the
/// run stops as if interrupted.
#[derive(Default)]
pub struct StopSignal {
    pub flag: AtomicBool,
    pub after_slices: Option<usize>,
    /// Wakes the run's loop when the flag is raised.
    raised: tokio::sync::Notify,
}

impl StopSignal {
    /// Not raised; the run stops by itself after `after_slices` slices, if given.
    pub fn after(after_slices: Option<usize>) -> StopSignal {
        StopSignal {
            after_slices,
            ..StopSignal::default()
        }
    }

    /// Asks the run to stop after the shard in hand (from any thread, a signal handler's
    /// included); whether it had been asked already.
    pub fn raise(&self) -> bool {
        let before = self.flag.swap(true, Ordering::SeqCst);
        // one waiter: a permit is kept if it is not waiting yet
        self.raised.notify_one();
        before
    }

    /// Resolves once the flag is raised.
    pub async fn raised(&self) {
        while !self.flag.load(Ordering::SeqCst) {
            self.raised.notified().await;
        }
    }
}

/// What a run on one machine is given.
pub struct LocalRun {
    pub store: Store,
    pub threads: usize,
    pub verify_fraction: f64,
    /// Share of the slices whose states are re-solved (`CoordinatorConfig::verify_slices`).
    pub verify_slices: f64,
    /// The worker's and the coordinator's caches of slices.
    pub caches: CacheSplit,
    pub observer: Arc<dyn RunObserver + Send>,
    pub stop: Arc<StopSignal>,
    /// Lease nothing more once this run has stored this many slices, without stopping:
    /// the run holds (for testing what a stalled run says).
    pub hold_after_slices: Option<usize>,
    /// How long without progress is a stall (`CoordinatorConfig::stall_after`).
    pub stall_after: Option<Duration>,
}

/// The in-process worker's settings.
pub struct WorkerSettings {
    pub threads: usize,
    pub cache_bytes: usize,
    /// The store's directory: a worker reads dependency slices from its data files.
    pub db_dir: std::path::PathBuf,
}

impl LocalRun {
    /// The in-process coordinator over the store, the settings of its one worker and the
    /// stop signal.
    pub fn into_parts(self) -> Result<(Coordinator, WorkerSettings, Arc<StopSignal>), LocalError> {
        let config = CoordinatorConfig {
            // one worker: enough shards to keep its threads busy, no more
            min_shards: 4 * self.threads,
            verify_fraction: self.verify_fraction,
            verify_slices: self.verify_slices,
            verify_cache_bytes: self.caches.verify_cache as usize,
            stall_after: self.stall_after,
            ..CoordinatorConfig::default()
        };
        let db_dir = self.store.path().to_path_buf();
        let core = Coordinator::new(self.store, config, self.observer)?;
        let budget = self.stop.after_slices.or(self.hold_after_slices);
        core.set_slice_budget(budget.map(|s| s as u64));
        let settings = WorkerSettings {
            threads: self.threads,
            cache_bytes: self.caches.worker_cache as usize,
            db_dir,
        };
        Ok((core, settings, self.stop))
    }
}

/// Whether the run should stop: a failure recorded, a stop requested, or the slice
/// budget spent.
pub(crate) fn should_stop(core: &Coordinator, stop: &StopSignal) -> bool {
    if core.failure().is_some() {
        return true;
    }
    let (_, slices) = core.position();
    stop.flag.load(Ordering::SeqCst) || stop.after_slices.is_some_and(|b| slices >= b as u64)
}

/// How the run ended, from the coordinator's record of it.
pub(crate) fn outcome(
    core: Coordinator,
    started: Instant,
) -> Result<(Store, SolveOutcome), LocalError> {
    if let Some(failure) = core.failure() {
        return Err(LocalError::Failed(failure));
    }
    let (position, slices_this_run) = core.position();
    let games = core.games_this_run();
    let store = core.into_store();
    let result = match position {
        Some(layer) => {
            let slices_stored = store.stored_count(layer)?;
            info!(layer, slices_stored, "interrupted");
            SolveOutcome::Interrupted {
                layer,
                slices_stored,
            }
        }
        None => {
            let mut layers = Vec::new();
            for k in 1..=store.n() {
                layers.push(store.layer(k)?.ok_or_else(|| {
                    StoreError::Corrupt(format!("run finished but layer {k} is not complete"))
                })?);
            }
            SolveOutcome::Complete(SolveSummary {
                states: layers.iter().map(|r| r.states).sum(),
                layers,
                games,
                slices: slices_this_run as usize,
                wall: started.elapsed(),
            })
        }
    };
    Ok((store, result))
}
