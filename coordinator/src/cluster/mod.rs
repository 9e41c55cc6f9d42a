//! The coordinator, free of gRPC: the way a shard travels through it, top to bottom.
//! `hello` opens a worker's session (an id and a secret key that every later call
//! presents); `lease` hands it a shard of the open layer; `fetch_one` serves the slices of
//! the layer below that the shard reads; `heartbeat` keeps the lease; `submit` sorts the
//! finished slices (only those of a lease the caller holds or held), checks the new ones
//! (outside the lock), resolves a disagreement with a stored copy by re-checking both in
//! full, stores flushed, and completes the layer when its last slice arrives, which opens
//! the next. The gRPC handlers in [`crate::server::service`] only convert messages and call these.
//! What matters to an operator on the way (a layer complete, a worker joined, a lease
//! expired, a submission rejected, ...) is also kept in a bounded [`EventLog`] that the
//! dashboard shows.
//!
//! Everything needed to resume is in the store: on start the coordinator finds the first
//! incomplete layer, plans shards of the slices it still lacks, and goes on.
//!
//! The child files, in the order a shard meets them: `sessions`, `leases`, `slices`
//! (serving the layer below), `submit` (a submission's way: sorting, then rounds of the
//! steps below, counting, its end), `checking` (the checks outside the lock), `disputes`
//! (copies that disagree), `storing` (claims, writes and records), `replication` (first
//! copies held), `rejections`, `layers` (completing one, opening the next), `status`;
//! `state` holds the parts of what the lock guards.
//!
//! And the leaves they stand on, each public: [`ledger`] the lease ledger of the open
//! layer (pure, takes `now`); [`open_layer`] the layer being solved (its progress
//! record, engine, ledger and the cache of slices below that checks read); [`rules`]
//! what a submission must pass, with typed reasons for a rejection; [`registry`] the
//! workers known.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_db::store::Store;
use gops_proto::ids::{Caller, LeaseId, WorkerId};

use crate::cluster::registry::WorkerRegistry;
use crate::report::observer::RunObserver;

mod checking;
mod disputes;
mod layers;
mod leases;
pub mod ledger;
pub mod open_layer;
pub mod registry;
mod rejections;
mod replication;
pub mod rules;
mod sessions;
mod slices;
mod state;
mod status;
mod storing;
mod submit;

use state::{Inner, SliceBudget};

pub use crate::config::{CoordinatorConfig, LEASE_RANGE_MS};
pub use crate::error::{CoreError, LeaseOutcome, RunFailure, SubmitOutcome};

/// A submission's sender as [`Coordinator::admit`] let it in: a live session that
/// presented its key and was in good standing, and the lease it submits under. Made
/// only by `admit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    caller: Caller,
    lease: LeaseId,
}

impl Admitted {
    pub fn caller(&self) -> Caller {
        self.caller
    }

    pub fn lease(&self) -> LeaseId {
        self.lease
    }
}

pub struct Coordinator {
    store: Store,
    config: CoordinatorConfig,
    /// Matrix games of each layer, lowest first (for the estimate of the time left).
    layer_games: Vec<u64>,
    inner: Mutex<Inner>,
    /// Told (with `inner`) whenever a write of claimed slices ends: a copy that met
    /// another one being written waits on it.
    written: Condvar,
    observer: Arc<dyn RunObserver + Send>,
    /// Dependency slices handed to workers since the coordinator started: counted
    /// outside the lock, read by the metrics.
    traffic: SliceTraffic,
    /// It went on from slices an earlier run stored, and that run was not complete: the
    /// earlier run's workers may come back.
    resumed: bool,
}

/// How the workers got their dependency slices from this coordinator.
#[derive(Debug, Default)]
pub struct SliceTraffic {
    /// Slices sent by `FetchSlices`, and their bytes.
    pub fetched: AtomicU64,
    pub fetched_bytes: AtomicU64,
    /// Slices located by `LocateSlices` (read by the workers from the db directory).
    pub located: AtomicU64,
}

impl Coordinator {
    /// A coordinator over `store`, positioned at the first incomplete layer.
    pub fn new(
        store: Store,
        config: CoordinatorConfig,
        observer: Arc<dyn RunObserver + Send>,
    ) -> Result<Coordinator, CoreError> {
        config.check().map_err(CoreError::Config)?;
        let (n, objective) = (store.n(), store.objective());
        let mut plan = Vec::new();
        for k in 1..=n {
            plan.push((LayerSize::of(n, k, objective), store.stored_count(k)?));
        }
        observer.plan(&plan);
        let stored_before = plan.iter().any(|&(_, stored)| stored > 0);
        // ids carry the run number in their high bits: a worker or lease from before a
        // restart is never mistaken for a new one
        let first_id = (store.next_run()? << 32) | 1;
        // first copies of a previous run wait for sessions that are gone: solved again
        store.clear_unconfirmed()?;
        let (max_rejections, max_sessions) = (config.max_rejections, config.max_sessions);
        let layer_games = plan.iter().map(|(size, _)| size.games).collect();
        let quiet_after = config.quiet_after();
        let mut coordinator = Coordinator {
            store,
            config,
            layer_games,
            traffic: SliceTraffic::default(),
            inner: Mutex::new(Inner::new(
                WorkerRegistry::new(WorkerId(first_id), max_rejections, max_sessions),
                LeaseId(first_id),
                quiet_after,
                Instant::now(),
            )),
            written: Condvar::new(),
            observer,
            resumed: false,
        };
        {
            let mut inner = coordinator.lock();
            coordinator.open_next_layer(&mut inner, 1)?;
        }
        coordinator.resumed = stored_before && !coordinator.is_finished();
        Ok(coordinator)
    }

    /// A receiver that sees a new value whenever the run changes in a way a waiter may
    /// care for (see [`state::Notices::signal_change`]): wait on it rather than poll the
    /// state.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.lock().notices.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        gops_common::sync::lock(&self.inner)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }

    pub fn n(&self) -> u8 {
        self.store.n()
    }

    pub fn objective(&self) -> Objective {
        self.store.objective()
    }

    /// The kernel's arithmetic of the run's db, which its workers must compute with.
    pub fn pivot_start(&self) -> PivotStart {
        self.store.pivot_start()
    }

    /// Stops leasing once this run has stored `slices` slices.
    pub fn set_slice_budget(&self, slices: Option<u64>) {
        self.lock().slice_budget = slices.map(SliceBudget::new);
    }

    /// Whether it went on from an earlier run that was not complete.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// Distinct slices leased to workers this run.
    pub fn leased_this_run(&self) -> usize {
        self.lock().tally.leased.len()
    }

    /// Matrix games in the slices this run stored.
    pub fn games_this_run(&self) -> u64 {
        self.lock().tally.games
    }

    /// The store back, once the coordinator is done with it.
    pub fn into_store(self) -> Store {
        self.store
    }
}
