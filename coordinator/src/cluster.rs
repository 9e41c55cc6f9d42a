//! The coordinator, free of gRPC: the way a shard travels through it, top to bottom.
//! `hello` registers a worker; `lease` hands it a shard of the open layer; `fetch_one`
//! serves the slices of the layer below that the shard reads; `heartbeat` keeps the lease;
//! `submit` sorts the finished slices, checks the new ones (outside the lock), stores
//! them flushed, and completes the layer when its last slice arrives, which opens the
//! next. The gRPC handlers in [`crate::service`] only convert messages and call these.
//!
//! Everything needed to resume is in the store: on start the coordinator finds the first
//! incomplete layer, plans shards of the slices it still lacks, and goes on.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gops_common::engine::{EngineError, LayerEngine};
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_common::prizes::prize_set_count;
use gops_common::slice::SliceBytes;
use gops_db::status::run_status;
use gops_db::store::{Store, StoreError};
use gops_proto::ids::{LeaseId, WorkerId};
use tracing::{info, warn};

use crate::checks::{CheckFailure, Rejection, SliceCheck, Submitted, check_slice, sort_submission};
use crate::ledger::Assignment;
use crate::observer::RunObserver;
use crate::open_layer::OpenLayer;
use crate::registry::WorkerRegistry;
use crate::status::{ClusterStatus, ShardCounts};

/// Timings and checks of a coordinator; tests use millisecond leases.
#[derive(Clone, Debug)]
pub struct CoordinatorConfig {
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
    /// Fraction of each submitted slice's states re-solved and compared bit for bit.
    pub verify_fraction: f64,
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
    /// A worker with this many rejected submissions gets no more shards.
    pub max_rejections: u64,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            lease: Duration::from_secs(60),
            verify_fraction: 0.01,
            retry_after: Duration::from_millis(200),
            min_shards: 64,
            target_games_per_shard: gops_common::plan::TARGET_GAMES_PER_SHARD,
            min_games_per_shard: gops_common::plan::MIN_GAMES_PER_SHARD,
            max_fetch: gops_proto::MAX_FETCH_SLICES,
            verify_cache_bytes: 512 << 20,
            max_rejections: 3,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("protocol version {got} is not supported: this coordinator speaks version {want}")]
    Version { got: u32, want: u32 },
    #[error("unknown worker {0}: say hello first")]
    UnknownWorker(WorkerId),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("submission rejected: {0}")]
    Rejected(Rejection),
    #[error("layer {0} is not complete yet")]
    NotReady(u8),
    #[error("worker {0} had {1} submissions rejected: no more shards for it")]
    Banned(WorkerId, u64),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseOutcome {
    Shard {
        lease_id: LeaseId,
        layer: u8,
        prize_ranks: Vec<u32>,
    },
    Wait(Duration),
    Finished,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmitOutcome {
    pub stored: u32,
    pub duplicates: u32,
}

struct Inner {
    open: Option<OpenLayer>,
    workers: WorkerRegistry,
    /// The first lease id of the next layer opened.
    next_lease: LeaseId,
    started: Instant,
    slices_this_run: u64,
    games_this_run: u64,
    rejected: u64,
    /// Stop leasing after this many slices this run (tests of interruption).
    slice_budget: Option<u64>,
    /// Distinct (layer, prize rank) leased this run.
    leased: HashSet<(u8, u32)>,
}

pub struct Coordinator {
    store: Store,
    config: CoordinatorConfig,
    inner: Mutex<Inner>,
    observer: Arc<dyn RunObserver + Send>,
}

impl Coordinator {
    /// A coordinator over `store`, positioned at the first incomplete layer.
    pub fn new(
        store: Store,
        config: CoordinatorConfig,
        observer: Arc<dyn RunObserver + Send>,
    ) -> Result<Coordinator, CoreError> {
        let (n, objective) = (store.n(), store.objective());
        let mut plan = Vec::new();
        for k in 1..=n {
            plan.push((LayerSize::of(n, k, objective), store.stored_count(k)?));
        }
        observer.plan(&plan);
        // ids carry the run number in their high bits: a worker or lease from before a
        // restart is never mistaken for a new one
        let first_id = (store.next_run()? << 32) | 1;
        let coordinator = Coordinator {
            store,
            config,
            inner: Mutex::new(Inner {
                open: None,
                workers: WorkerRegistry::new(WorkerId(first_id)),
                next_lease: LeaseId(first_id),
                started: Instant::now(),
                slices_this_run: 0,
                games_this_run: 0,
                rejected: 0,
                slice_budget: None,
                leased: HashSet::new(),
            }),
            observer,
        };
        {
            let mut inner = coordinator.lock();
            coordinator.open_next_layer(&mut inner, 1)?;
        }
        Ok(coordinator)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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

    /// Stops leasing once this run has stored `slices` slices.
    pub fn set_slice_budget(&self, slices: Option<u64>) {
        self.lock().slice_budget = slices;
    }

    /// Whether the run is finished and every worker seen within a lease period has been
    /// told so (a coordinator about to exit lets its workers hear it first).
    pub fn workers_released(&self, now: Instant) -> bool {
        let inner = self.lock();
        inner.open.is_none() && inner.workers.all_told_finished(now, self.config.lease)
    }

    /// Distinct slices leased to workers this run.
    pub fn leased_this_run(&self) -> usize {
        self.lock().leased.len()
    }

    /// Matrix games in the slices this run stored.
    pub fn games_this_run(&self) -> u64 {
        self.lock().games_this_run
    }

    /// The store back, once the coordinator is done with it.
    pub fn into_store(self) -> Store {
        self.store
    }

    /// Whether every layer is complete.
    pub fn is_finished(&self) -> bool {
        self.lock().open.is_none()
    }

    /// The open layer and how many slices this run stored (for an interrupted run).
    pub fn position(&self) -> (Option<u8>, u64) {
        let inner = self.lock();
        (inner.open.as_ref().map(OpenLayer::k), inner.slices_this_run)
    }

    /// Opens the first incomplete layer from `from` on (completing any whose slices are
    /// all stored already), or finishes the run.
    fn open_next_layer(&self, inner: &mut Inner, from: u8) -> Result<(), CoreError> {
        for k in from..=self.n() {
            if self.store.layer(k)?.is_some() {
                continue;
            }
            let open = OpenLayer::open(&self.store, k, &self.config, inner.next_lease)?;
            let already = open.progress.stored();
            info!(
                layer = k,
                slices = open.progress.size().slices,
                stored = already,
                shards = open.ledger.shard_count(),
                "layer open"
            );
            self.observer.layer_started(open.progress.size(), already);
            let complete = open.progress.is_complete();
            inner.open = Some(open);
            if complete {
                return self.complete_layer(inner);
            }
            return Ok(());
        }
        inner.open = None;
        info!("run complete");
        Ok(())
    }

    /// Writes the open layer's record (its slices are flushed already) and opens the
    /// next layer.
    fn complete_layer(&self, inner: &mut Inner) -> Result<(), CoreError> {
        let open = inner.open.as_ref().expect("a layer is open");
        // the layer stays open (and the run unfinished) unless its record is durable
        let record = open.progress.complete(&self.store)?.ok_or_else(|| {
            StoreError::Corrupt(format!("layer {} completed with slices missing", open.k()))
        })?;
        info!(layer = record.k, checksum = %record.checksum, max_gap = record.max_gap, "layer complete");
        self.observer.layer_done(&record);
        inner.next_lease = inner.next_lease.max(open.ledger.next_lease_id());
        inner.open = None;
        self.open_next_layer(inner, record.k + 1)
    }

    pub fn hello(
        &self,
        protocol_version: u32,
        name: &str,
        threads: u32,
    ) -> Result<WorkerId, CoreError> {
        if protocol_version != gops_proto::PROTOCOL_VERSION {
            return Err(CoreError::Version {
                got: protocol_version,
                want: gops_proto::PROTOCOL_VERSION,
            });
        }
        let mut inner = self.lock();
        let id = inner.workers.join(name, threads, Instant::now());
        info!(worker = %id, name = inner.workers.name(id).unwrap_or(""), threads, "worker joined");
        Ok(id)
    }

    fn touch(inner: &mut Inner, worker: WorkerId, now: Instant) -> Result<(), CoreError> {
        if inner.workers.touch(worker, now) {
            Ok(())
        } else {
            Err(CoreError::UnknownWorker(worker))
        }
    }

    pub fn lease(&self, worker: WorkerId, now: Instant) -> Result<LeaseOutcome, CoreError> {
        let mut inner = self.lock();
        Self::touch(&mut inner, worker, now)?;
        let rejected = inner.workers.rejections(worker);
        if rejected >= self.config.max_rejections {
            return Err(CoreError::Banned(worker, rejected));
        }
        if inner
            .slice_budget
            .is_some_and(|b| inner.slices_this_run >= b)
        {
            return Ok(LeaseOutcome::Wait(self.config.retry_after));
        }
        let Some(open) = inner.open.as_mut() else {
            inner.workers.told_finished(worker);
            return Ok(LeaseOutcome::Finished);
        };
        let k = open.k();
        for (lease_id, holder) in open.ledger.expire(now) {
            warn!(worker = %holder, lease = %lease_id, layer = k, "lease expired");
        }
        Ok(match open.ledger.assign(worker, now) {
            Assignment::Shard {
                lease_id,
                prize_ranks,
            } => {
                inner.leased.extend(prize_ranks.iter().map(|&r| (k, r)));
                LeaseOutcome::Shard {
                    lease_id,
                    layer: k,
                    prize_ranks,
                }
            }
            Assignment::Wait | Assignment::LayerDone => LeaseOutcome::Wait(self.config.retry_after),
        })
    }

    pub fn heartbeat(
        &self,
        worker: WorkerId,
        lease_id: LeaseId,
        now: Instant,
    ) -> Result<bool, CoreError> {
        let mut inner = self.lock();
        Self::touch(&mut inner, worker, now)?;
        Ok(inner
            .open
            .as_mut()
            .is_some_and(|open| open.ledger.heartbeat(worker, lease_id, now)))
    }

    pub fn release(&self, worker: WorkerId, lease_id: LeaseId) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::touch(&mut inner, worker, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.ledger.release(worker, lease_id);
        }
        Ok(())
    }

    /// Checks a fetch of slices of a complete layer (a worker's dependencies).
    pub fn check_fetch(&self, layer: u8, ranks: &[u32]) -> Result<(), CoreError> {
        let n = self.n();
        if layer == 0 || layer > n {
            return Err(CoreError::BadRequest(format!(
                "layer {layer} is outside 1..={n}"
            )));
        }
        if ranks.len() > self.config.max_fetch {
            return Err(CoreError::BadRequest(format!(
                "{} slices asked for; at most {} per fetch",
                ranks.len(),
                self.config.max_fetch
            )));
        }
        let count = prize_set_count(n, layer);
        if let Some(bad) = ranks.iter().find(|&&r| r as usize >= count) {
            return Err(CoreError::BadRequest(format!(
                "layer {layer} has no slice {bad}"
            )));
        }
        if self.store.layer(layer)?.is_none() {
            return Err(CoreError::NotReady(layer));
        }
        Ok(())
    }

    /// One slice of a layer [`Coordinator::check_fetch`] accepted, as stored.
    pub fn fetch_one(&self, layer: u8, rank: u32) -> Result<SliceBytes, CoreError> {
        Ok(self.store.require_slice_bytes(layer, rank)?)
    }

    /// Validates and stores a worker's finished slices. All or nothing: one bad slice
    /// rejects the submission, and the lease goes back to be leased again.
    pub fn submit(
        &self,
        worker: WorkerId,
        lease_id: LeaseId,
        slices: Vec<Submitted>,
        now: Instant,
    ) -> Result<SubmitOutcome, CoreError> {
        // 1. sort into new slices and duplicates, and gather what checking needs
        let (engine, below, fresh, duplicates) = {
            let mut inner = self.lock();
            Self::touch(&mut inner, worker, now)?;
            let Some(open) = inner.open.as_mut() else {
                // the run is complete: whatever arrives now is late
                return Ok(SubmitOutcome {
                    stored: 0,
                    duplicates: slices.len() as u32,
                });
            };
            let sorted = match sort_submission(&open.progress, slices) {
                Ok(sorted) => sorted,
                Err(why) => return Err(self.reject(&mut inner, worker, lease_id, why)),
            };
            let below = open.dependencies(&self.store, &sorted.fresh)?;
            (
                Arc::clone(&open.engine),
                below,
                sorted.fresh,
                sorted.duplicates,
            )
        };
        // 2. the expensive checks, without the lock
        let check = SliceCheck {
            n: self.n(),
            objective: self.objective(),
            engine: &engine,
            below: &below,
            verify_fraction: self.config.verify_fraction,
        };
        let checked: Result<Vec<(Submitted, u64)>, CheckFailure> = fresh
            .into_iter()
            .map(|s| check_slice(&check, &s).map(|values| (s, values)))
            .collect();
        let mut inner = self.lock();
        let checked = match checked {
            Ok(c) => c,
            Err(CheckFailure::Rejected(why)) => {
                return Err(self.reject(&mut inner, worker, lease_id, why));
            }
            // the coordinator's own failure: not the worker's fault, nothing is blamed
            Err(CheckFailure::Engine(e)) => return Err(e.into()),
        };
        // 3. store what is still missing, flushed, then record it
        self.store_checked(&mut inner, worker, &engine, checked, duplicates)
    }

    fn store_checked(
        &self,
        inner: &mut Inner,
        worker: WorkerId,
        engine: &LayerEngine,
        checked: Vec<(Submitted, u64)>,
        duplicates: u32,
    ) -> Result<SubmitOutcome, CoreError> {
        let mut outcome = SubmitOutcome {
            stored: 0,
            duplicates,
        };
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == engine.k()) else {
            // the layer completed meanwhile: everything here was a duplicate
            outcome.duplicates += checked.len() as u32;
            return Ok(outcome);
        };
        let (new, late): (Vec<_>, Vec<_>) = checked
            .into_iter()
            .partition(|(s, _)| open.ledger.is_missing(s.prize_rank));
        outcome.duplicates += late.len() as u32;
        let batch: Vec<(u32, &SliceBytes)> =
            new.iter().map(|(s, _)| (s.prize_rank, &s.bytes)).collect();
        self.store.put_slice_bytes(open.k(), &batch)?;
        let mut games = 0u64;
        for (s, values) in new {
            open.ledger.slice_stored(s.prize_rank);
            open.progress
                .record(s.prize_rank, s.bytes.digest, s.bytes.max_gap, values);
            games = games.saturating_add(s.bytes.games);
            outcome.stored += 1;
        }
        let k = open.k();
        let layer_done = open.ledger.is_done();
        inner.slices_this_run += u64::from(outcome.stored);
        inner.games_this_run = inner.games_this_run.saturating_add(games);
        inner.workers.credit(worker, u64::from(outcome.stored));
        if outcome.stored > 0 {
            self.observer.shard_done(k, outcome.stored as usize, games);
        }
        if layer_done {
            self.complete_layer(inner)?;
        }
        Ok(outcome)
    }

    fn reject(
        &self,
        inner: &mut Inner,
        worker: WorkerId,
        lease_id: LeaseId,
        why: Rejection,
    ) -> CoreError {
        warn!(worker = %worker, lease = %lease_id, reason = %why, "submission rejected");
        inner.rejected += 1;
        inner.workers.blame(worker);
        if let Some(open) = inner.open.as_mut() {
            open.ledger.release(worker, lease_id);
        }
        CoreError::Rejected(why)
    }

    /// The status of the run: the store's, plus workers, rate and the open layer.
    pub fn status(&self, now: Instant) -> Result<ClusterStatus, CoreError> {
        let run = run_status(&self.store)?;
        let inner = self.lock();
        let elapsed = now.duration_since(inner.started).as_secs_f64().max(1e-9);
        let (open_layer, shards) = match &inner.open {
            Some(open) => {
                let c = open.ledger.counts();
                (
                    Some(open.k()),
                    Some(ShardCounts {
                        pending: c.pending,
                        leased: c.leased,
                        done: c.done,
                    }),
                )
            }
            None => (None, None),
        };
        Ok(ClusterStatus {
            run,
            open_layer,
            shards,
            workers: inner.workers.live(now, self.config.lease * 2),
            slices_per_second: inner.slices_this_run as f64 / elapsed,
            games_per_second: inner.games_this_run as f64 / elapsed,
            rejected_submissions: inner.rejected,
        })
    }
}
