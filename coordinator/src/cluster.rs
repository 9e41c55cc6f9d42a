//! The coordinator, free of gRPC: the way a shard travels through it, top to bottom.
//! `hello` opens a worker's session (an id and a secret key that every later call
//! presents); `lease` hands it a shard of the open layer; `fetch_one` serves the slices of
//! the layer below that the shard reads; `heartbeat` keeps the lease; `submit` sorts the
//! finished slices (only those of a lease the caller holds or held), checks the new ones
//! (outside the lock), resolves a disagreement with a stored copy by re-checking both in
//! full, stores flushed, and completes the layer when its last slice arrives, which opens
//! the next. The gRPC handlers in [`crate::service`] only convert messages and call these.
//! What matters to an operator on the way (a layer complete, a worker joined, a lease
//! expired, a submission rejected, ...) is also kept in a bounded [`EventLog`] that the
//! dashboard shows.
//!
//! Everything needed to resume is in the store: on start the coordinator finds the first
//! incomplete layer, plans shards of the slices it still lacks, and goes on.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use gops_common::engine::{EngineError, LayerEngine};
use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_common::prizes::prize_set_count;
use gops_common::slice::SliceBytes;
use gops_db::status::run_status;
use gops_db::store::{Located, Store, StoreError};
use gops_proto::ids::{Caller, LeaseId, SessionKey, WorkerId};
use tracing::{error, info, warn};

use crate::checks::{
    CheckFailure, LeaseGrant, Rejection, SliceCheck, Submitted, check_form, check_slice,
    slice_fractions, sort_submission,
};
use crate::events::{EventKind, EventLog, unix_ms};
use crate::ledger::{Assignment, Party};
use crate::observer::RunObserver;
use crate::open_layer::{FirstCopy, OpenLayer};
use crate::rate::RecentRate;
use crate::registry::{Credential, Refusal, WorkerRegistry};
use crate::status::{ClusterStatus, LiveStatus, ShardCounts, eta_seconds, games_left};

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
const RACE_PAUSE: Duration = Duration::from_millis(20);

/// Workers listed in a status at most (the counts cover all).
const MAX_LISTED_WORKERS: usize = 1000;

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

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("protocol version {got} is not supported: this coordinator speaks version {want}")]
    Version { got: u32, want: u32 },
    #[error("unknown worker {0}: say hello first")]
    UnknownWorker(WorkerId),
    #[error("worker {0}: wrong session key")]
    WrongSession(WorkerId),
    #[error("{0} sessions open, the most this coordinator holds: try again later")]
    Full(usize),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("submission rejected: {0}")]
    Rejected(Rejection),
    #[error("layer {0} is not complete yet")]
    NotReady(u8),
    #[error("worker {0} (or its token) had {1} submissions rejected: no more shards for it")]
    Banned(WorkerId, u64),
    #[error("this token had {0} submissions rejected: no more sessions for it")]
    CredentialBanned(u64),
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
    /// Copies kept until another party's copy confirms them (replicated verification).
    pub held: u32,
}

/// What one round of storing did: stored, duplicates, and copies that lost a race to
/// another copy with a different digest (disputes for the next round).
#[derive(Default)]
struct StoreRound {
    stored: u32,
    duplicates: u32,
    held: u32,
    raced: Vec<Submitted>,
}

struct Inner {
    open: Option<OpenLayer>,
    workers: WorkerRegistry,
    /// The first lease id of the next layer opened.
    next_lease: LeaseId,
    started: Instant,
    /// When the last layer completed: rates stop there.
    finished_at: Option<Instant>,
    slices_this_run: u64,
    games_this_run: u64,
    /// `games_this_run` over the last minute, for the time left.
    recent: RecentRate,
    rejected: u64,
    /// Calls refused for a wrong session key.
    refused_calls: u64,
    /// Copies of a slice whose digest differed from the stored one's.
    disagreements: u64,
    /// Why the store can no longer be written (a full disk): the coordinator stops.
    failure: Option<String>,
    /// Damaged slices solved again this run.
    repaired: u64,
    /// Stop leasing after this many slices this run (tests of interruption).
    slice_budget: Option<u64>,
    /// Distinct (layer, prize rank) leased this run.
    leased: HashSet<(u8, u32)>,
    /// The last events, for the dashboard.
    events: EventLog,
}

pub struct Coordinator {
    store: Store,
    config: CoordinatorConfig,
    /// Matrix games of each layer, lowest first (for the estimate of the time left).
    layer_games: Vec<u64>,
    inner: Mutex<Inner>,
    observer: Arc<dyn RunObserver + Send>,
    /// Dependency slices handed to workers since the coordinator started: counted
    /// outside the lock, read by the metrics.
    traffic: SliceTraffic,
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
        let (n, objective) = (store.n(), store.objective());
        let mut plan = Vec::new();
        for k in 1..=n {
            plan.push((LayerSize::of(n, k, objective), store.stored_count(k)?));
        }
        observer.plan(&plan);
        // ids carry the run number in their high bits: a worker or lease from before a
        // restart is never mistaken for a new one
        let first_id = (store.next_run()? << 32) | 1;
        // first copies of a previous run wait for sessions that are gone: solved again
        store.clear_unconfirmed()?;
        let (max_rejections, max_sessions) = (config.max_rejections, config.max_sessions);
        let layer_games = plan.iter().map(|(size, _)| size.games).collect();
        let coordinator = Coordinator {
            store,
            config,
            layer_games,
            traffic: SliceTraffic::default(),
            inner: Mutex::new({
                let started = Instant::now();
                Inner {
                    open: None,
                    workers: WorkerRegistry::new(WorkerId(first_id), max_rejections, max_sessions),
                    next_lease: LeaseId(first_id),
                    started,
                    finished_at: None,
                    slices_this_run: 0,
                    games_this_run: 0,
                    recent: RecentRate::new(started),
                    rejected: 0,
                    refused_calls: 0,
                    disagreements: 0,
                    failure: None,
                    repaired: 0,
                    slice_budget: None,
                    leased: HashSet::new(),
                    events: EventLog::default(),
                }
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

    /// The kernel's arithmetic of the run's db, which its workers must compute with.
    pub fn pivot_start(&self) -> PivotStart {
        self.store.pivot_start()
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
        inner.finished_at.get_or_insert_with(Instant::now);
        info!("run complete");
        inner.events.record_now(
            EventKind::RunComplete,
            format!("run complete: all {} layers solved", self.n()),
        );
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
        inner.events.record_now(
            EventKind::LayerComplete,
            format!(
                "layer {} complete: {} {}, checksum {}",
                record.k,
                record.slices,
                if record.slices == 1 {
                    "slice"
                } else {
                    "slices"
                },
                record.checksum
            ),
        );
        self.observer.layer_done(&record);
        inner.next_lease = inner.next_lease.max(open.ledger.next_lease_id());
        inner.open = None;
        self.open_next_layer(inner, record.k + 1)
    }

    /// Opens a session: the worker's id and the key its later calls present.
    /// `credential` is the token it presented, when the coordinator has one per worker.
    pub fn hello(
        &self,
        protocol_version: u32,
        name: &str,
        threads: u32,
        credential: Option<Credential>,
    ) -> Result<Caller, CoreError> {
        if protocol_version != gops_proto::PROTOCOL_VERSION {
            return Err(CoreError::Version {
                got: protocol_version,
                want: gops_proto::PROTOCOL_VERSION,
            });
        }
        // from the thread-local CSPRNG, seeded by the operating system
        let key = SessionKey(rand::random());
        let mut inner = self.lock();
        let now = Instant::now();
        let joined = inner
            .workers
            .join(name, threads, key, credential, now, self.silent_for());
        let worker = joined.map_err(|refusal| match refusal {
            Refusal::Full(max) => CoreError::Full(max),
            Refusal::Banned(count) => CoreError::CredentialBanned(count),
            Refusal::Unknown | Refusal::WrongKey => unreachable!("join does not authenticate"),
        })?;
        info!(worker = %worker, name = inner.workers.name(worker).unwrap_or(""), threads, "worker joined");
        let message = format!(
            "{} joined with {threads} thread{}",
            Self::who(&inner, worker),
            if threads == 1 { "" } else { "s" }
        );
        inner.events.record_now(EventKind::WorkerJoined, message);
        Ok(Caller { worker, key })
    }

    /// A worker as events name it: its name and id.
    fn who(inner: &Inner, worker: WorkerId) -> String {
        match inner.workers.name(worker) {
            Some(name) => format!("worker {name:?} ({worker})"),
            None => format!("worker {worker}"),
        }
    }

    /// How long a silent session is kept: its leases expired long before.
    fn silent_for(&self) -> Duration {
        self.config.lease * 4
    }

    /// Lets `caller` in if it presents its session's key; a forged call is counted and
    /// changes nothing of the worker it names.
    fn authenticate(inner: &mut Inner, caller: &Caller, now: Instant) -> Result<(), CoreError> {
        match inner.workers.authenticate(caller, now) {
            Ok(()) => Ok(()),
            Err(Refusal::WrongKey) => {
                inner.refused_calls += 1;
                warn!(worker = %caller.worker, "call with a wrong session key refused");
                let message = format!(
                    "a call in the name of {} with a wrong session key refused",
                    Self::who(inner, caller.worker)
                );
                inner.events.record_now(EventKind::CallRefused, message);
                Err(CoreError::WrongSession(caller.worker))
            }
            Err(_) => Err(CoreError::UnknownWorker(caller.worker)),
        }
    }

    /// Refuses a banned session (or credential).
    fn check_standing(inner: &Inner, worker: WorkerId) -> Result<(), CoreError> {
        match inner.workers.check_standing(worker) {
            Ok(()) => Ok(()),
            Err(Refusal::Banned(count)) => Err(CoreError::Banned(worker, count)),
            Err(_) => Err(CoreError::UnknownWorker(worker)),
        }
    }

    pub fn lease(&self, caller: Caller, now: Instant) -> Result<LeaseOutcome, CoreError> {
        let worker = caller.worker;
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        Self::check_standing(&inner, worker)?;
        if inner
            .slice_budget
            .is_some_and(|b| inner.slices_this_run >= b)
        {
            return Ok(LeaseOutcome::Wait(self.config.retry_after));
        }
        let party = Self::party(&inner, worker);
        let live_workers = inner.workers.live_count(now, self.config.lease).max(1);
        let Some(open) = inner.open.as_mut() else {
            inner.workers.told_finished(worker);
            return Ok(LeaseOutcome::Finished);
        };
        let k = open.k();
        let expired = open.ledger.expire(now);
        let assignment = open.ledger.assign_among(worker, party, now, live_workers);
        for (lease_id, holder) in expired {
            warn!(worker = %holder, lease = %lease_id, layer = k, "lease expired");
            let message = format!(
                "lease {lease_id} of {} in layer {k} expired: no heartbeat in time (worker lost or silent); its shard is leased again",
                Self::who(&inner, holder)
            );
            inner.events.record_now(EventKind::LeaseExpired, message);
        }
        Ok(match assignment {
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

    /// The source a copy counts as: the per-worker token when there is one (so that one
    /// token's sessions cannot confirm each other), else the session.
    fn party(inner: &Inner, worker: WorkerId) -> Party {
        match inner.workers.credential(worker) {
            Some(c) => Party(1 << 63 | u64::from(c.0)),
            None => Party(worker.0),
        }
    }

    pub fn heartbeat(
        &self,
        caller: Caller,
        lease_id: LeaseId,
        now: Instant,
    ) -> Result<bool, CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        Ok(inner
            .open
            .as_mut()
            .is_some_and(|open| open.ledger.heartbeat(caller.worker, lease_id, now)))
    }

    pub fn release(&self, caller: Caller, lease_id: LeaseId) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.ledger.release(caller.worker, lease_id);
        }
        Ok(())
    }

    /// Ends `caller`'s session: its leases are given back at once and it no longer
    /// counts as a live worker (nor is waited for to hear that the run is finished).
    pub fn leave(&self, caller: Caller) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.ledger.release_all(caller.worker);
        }
        let name = Self::who(&inner, caller.worker);
        inner.workers.remove(caller.worker);
        info!(worker = %caller.worker, "worker left");
        inner
            .events
            .record_now(EventKind::WorkerLeft, format!("{name} left"));
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
        // a few bytes in must not ask for the same large slice thousands of times
        let mut seen = HashSet::with_capacity(ranks.len());
        if let Some(again) = ranks.iter().find(|&&r| !seen.insert(r)) {
            return Err(CoreError::BadRequest(format!(
                "slice {again} asked for twice in one fetch"
            )));
        }
        if self.store.layer(layer)?.is_none() {
            return Err(CoreError::NotReady(layer));
        }
        Ok(())
    }

    /// One slice of a layer [`Coordinator::check_fetch`] accepted, as stored (solved
    /// again first if its record is damaged).
    pub fn fetch_one(&self, layer: u8, rank: u32) -> Result<SliceBytes, CoreError> {
        let bytes = self.with_repairs(|| self.store.require_slice_bytes(layer, rank))?;
        self.traffic.fetched.fetch_add(1, Ordering::Relaxed);
        self.traffic
            .fetched_bytes
            .fetch_add(bytes.body.len() as u64, Ordering::Relaxed);
        Ok(bytes)
    }

    /// The slices handed to workers so far, fetched or located.
    pub fn slice_traffic(&self) -> &SliceTraffic {
        &self.traffic
    }

    /// Where the slices `ranks` of a layer [`Coordinator::check_fetch`] accepted lie in
    /// the db directory, in order (damaged ones solved again first); `None` for one kept
    /// inside sled (a format-3 db), which must be fetched.
    pub fn locate(&self, layer: u8, ranks: &[u32]) -> Result<Vec<Option<Located>>, CoreError> {
        let located = ranks
            .iter()
            .map(|&rank| self.with_repairs(|| self.store.locate(layer, rank)))
            .collect::<Result<Vec<_>, _>>()?;
        self.traffic
            .located
            .fetch_add(located.iter().flatten().count() as u64, Ordering::Relaxed);
        Ok(located)
    }

    /// The slices of layer `k - 1` that the slices `ranks` of layer `k` read, through
    /// `cache`, damaged ones solved again first.
    pub fn slices_below(
        &self,
        cache: &mut gops_common::cache::SliceCache,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<gops_common::slice::Slice>>, CoreError> {
        self.with_repairs(|| self.store.slices_below(cache, k, ranks.iter().copied()))
    }

    /// Runs a read of the store; where it meets a damaged slice, solves that slice again
    /// from the layer below (the engine is deterministic, so the new copy is the one
    /// that was lost), stores it and reads again.
    fn with_repairs<T>(
        &self,
        mut read: impl FnMut() -> Result<T, StoreError>,
    ) -> Result<T, CoreError> {
        // each repair mends one slice; a damaged slice below a damaged one is mended on
        // the way
        for _ in 0..64 {
            match read() {
                Err(StoreError::DamagedSlice { k, rank, why }) => self.repair(k, rank, &why)?,
                other => return other.map_err(CoreError::from),
            }
        }
        Err(StoreError::Corrupt("too many damaged slices in one read".into()).into())
    }

    /// Solves slice `rank` of layer `k` again from layer `k - 1` and stores it.
    fn repair(&self, k: u8, rank: u32, why: &str) -> Result<(), CoreError> {
        error!(layer = k, slice = rank, reason = %why, "a stored slice is damaged: solving it again");
        let engine = LayerEngine::new(self.n(), k, self.objective()).with_start(self.pivot_start());
        let mut cache = gops_common::cache::SliceCache::new(self.config.verify_cache_bytes);
        let below = loop {
            match self.store.slices_below(&mut cache, k, [rank]) {
                Err(StoreError::DamagedSlice {
                    k: lower,
                    rank: r,
                    why,
                }) if lower < k => self.repair(lower, r, &why)?,
                other => break other?,
            }
        };
        let dependency = |prizes| &*below[&gops_common::prizes::prize_rank(prizes)];
        let solved = engine.solve_slice(rank, &dependency)?;
        self.store
            .put_slice_bytes(k, &[(rank, &solved.to_bytes())])?;
        {
            let mut inner = self.lock();
            inner.repaired += 1;
            inner.events.record_now(
                EventKind::SliceRepaired,
                format!("slice {rank} of layer {k} was damaged ({why}): solved again and stored"),
            );
        }
        info!(
            layer = k,
            slice = rank,
            "damaged slice solved again and stored"
        );
        Ok(())
    }

    /// Validates and stores a worker's finished slices. All or nothing: one bad slice
    /// rejects the submission, and the lease goes back to be leased again.
    ///
    /// Slices of the open layer must belong to the shard of `lease_id`, a lease granted
    /// to the caller (live or expired). A copy whose digest differs from the stored one
    /// is a dispute: both copies are re-solved in full; the one that fails is wrong (the
    /// submitter is rejected, or the stored copy is replaced and its author blamed).
    pub fn submit(
        &self,
        caller: Caller,
        lease_id: LeaseId,
        slices: Vec<Submitted>,
        now: Instant,
    ) -> Result<SubmitOutcome, CoreError> {
        let worker = caller.worker;
        // 1. cheap checks under the lock: session, standing, lease, sorting
        let (engine, fresh, disputed, duplicates) = {
            let mut inner = self.lock();
            Self::authenticate(&mut inner, &caller, now)?;
            Self::check_standing(&inner, worker)?;
            let Some(open) = inner.open.as_mut() else {
                // the run is complete: whatever arrives now is late
                return Ok(SubmitOutcome {
                    stored: 0,
                    duplicates: slices.len() as u32,
                    held: 0,
                });
            };
            let grant = LeaseGrant {
                lease: lease_id.0,
                ranks: open.ledger.granted_ranks(worker, lease_id),
            };
            let sorted = match sort_submission(&open.progress, grant, slices) {
                Ok(sorted) => sorted,
                Err(why) => return Err(self.reject(&mut inner, worker, lease_id, why)),
            };
            // the layer does not complete while this submission is under way
            open.submissions_in_flight += 1;
            (
                Arc::clone(&open.engine),
                sorted.fresh,
                sorted.disputed,
                sorted.duplicates,
            )
        };
        let k = engine.k();
        let outcome =
            self.submit_sorted(worker, lease_id, engine, fresh, disputed, duplicates, now);
        let ended = self.end_submission(k);
        let outcome = outcome?;
        ended?;
        Ok(outcome)
    }

    /// [`Coordinator::submit`] after the sorting: the checks, the disputes and the
    /// writes, in rounds.
    #[allow(clippy::too_many_arguments)]
    fn submit_sorted(
        &self,
        worker: WorkerId,
        lease_id: LeaseId,
        engine: Arc<LayerEngine>,
        mut fresh: Vec<Submitted>,
        mut disputed: Vec<Submitted>,
        duplicates: u32,
        now: Instant,
    ) -> Result<SubmitOutcome, CoreError> {
        let mut outcome = SubmitOutcome {
            stored: 0,
            duplicates,
            held: 0,
        };
        // a copy that raced another one to the store becomes a dispute in a second round
        for _round in 0..3 {
            if fresh.is_empty() && disputed.is_empty() {
                break;
            }
            // 2. the expensive checks, without the lock
            let fractions = slice_fractions(
                fresh.len(),
                self.config.verify_fraction,
                self.config.verify_slices,
                &mut rand::rng(),
            );
            let checked = self.check_submitted(&engine, &fresh, &fractions);
            let resolved = self.resolve_disputes(&engine, worker, &disputed);
            let mut inner = self.lock();
            let (checked, replaced) = match checked.and_then(|c| resolved.map(|r| (c, r))) {
                Ok(both) => both,
                Err(CheckFailure::Rejected(why)) => {
                    return Err(self.reject(&mut inner, worker, lease_id, why));
                }
                // the coordinator's own failure: not the worker's fault, nothing is blamed
                Err(CheckFailure::Engine(e)) => return Err(e.into()),
                Err(CheckFailure::Store(e)) => return Err(e.into()),
            };
            let checked: Vec<(Submitted, u64)> = fresh.drain(..).zip(checked).collect();
            let replaced: Vec<(Submitted, u64)> = disputed
                .drain(..)
                .zip(replaced)
                .filter_map(|(s, r)| r.map(|values| (s, values)))
                .collect();
            // 3. write what is still missing, flushed, without the lock (leases and
            // heartbeats go on meanwhile): the slices are claimed first, so no other copy
            // of them is written at the same time
            let claimed = self.claim_for_writing(&mut inner, engine.k(), &checked);
            drop(inner);
            let written = if claimed.is_empty() {
                Ok(())
            } else {
                let batch: Vec<(u32, &SliceBytes)> = checked
                    .iter()
                    .filter(|(s, _)| claimed.contains(&s.prize_rank))
                    .map(|(s, _)| (s.prize_rank, &s.bytes))
                    .collect();
                self.store.put_slice_bytes(engine.k(), &batch)
            };
            let mut inner = self.lock();
            if let Some(open) = inner.open.as_mut().filter(|o| o.k() == engine.k()) {
                for rank in &claimed {
                    open.storing.remove(rank);
                }
            }
            if let Err(e) = written {
                let e = CoreError::from(e);
                Self::note_failure(&mut inner, &e);
                return Err(e);
            }
            // then record it (and store, under the lock, the rarer kinds: replacements
            // and replicated copies)
            let round = self
                .store_checked(
                    &mut inner, worker, &engine, checked, replaced, &claimed, now,
                )
                .inspect_err(|e| Self::note_failure(&mut inner, e))?;
            outcome.stored += round.stored;
            outcome.duplicates += round.duplicates;
            outcome.held += round.held;
            disputed = round.raced;
            if !disputed.is_empty() {
                // a copy that met another one being written: let that write finish
                drop(inner);
                std::thread::sleep(RACE_PAUSE);
            }
        }
        if let Some(s) = disputed.first() {
            let mut inner = self.lock();
            let why = Rejection::DiffersFromStored { rank: s.prize_rank };
            return Err(self.reject(&mut inner, worker, lease_id, why));
        }
        if outcome.stored + outcome.held > 0 {
            self.lock().workers.credit_shard(worker);
        }
        Ok(outcome)
    }

    /// Checks new slices, each with the share of its states re-solved that `fractions`
    /// gives it; the number of stored values of each.
    fn check_submitted(
        &self,
        engine: &LayerEngine,
        slices: &[Submitted],
        fractions: &[f64],
    ) -> Result<Vec<u64>, CheckFailure> {
        if slices.is_empty() {
            return Ok(Vec::new());
        }
        // the cheap checks first: a damaged submission loads nothing
        let decoded = slices
            .iter()
            .map(|s| check_form(self.n(), self.objective(), engine.k(), s))
            .collect::<Result<Vec<_>, Rejection>>()?;
        // only the slices with states to re-solve read the slices below
        let resolved: Vec<u32> = slices
            .iter()
            .zip(fractions)
            .filter(|&(_, &fraction)| fraction > 0.0)
            .map(|(s, _)| s.prize_rank)
            .collect();
        let below = if resolved.is_empty() {
            HashMap::new()
        } else {
            self.dependencies(engine.k(), &resolved)?
        };
        let check = SliceCheck {
            n: self.n(),
            objective: self.objective(),
            engine,
            below: &below,
        };
        slices
            .iter()
            .zip(&decoded)
            .zip(fractions)
            .map(|((s, slice), &fraction)| check_slice(&check, s, slice, fraction))
            .collect()
    }

    /// The slices of the layer below that the slices `ranks` read, through the open
    /// layer's bounded cache. Loaded under the cache's own lock, not the coordinator's:
    /// leases and heartbeats go on meanwhile.
    fn dependencies(
        &self,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<gops_common::slice::Slice>>, CheckFailure> {
        let cache = {
            let inner = self.lock();
            inner
                .open
                .as_ref()
                .filter(|o| o.k() == k)
                .map(|o| Arc::clone(&o.below))
        };
        // the layer completed meanwhile: its dependencies are still in the store
        let cache = cache.unwrap_or_else(|| {
            Arc::new(Mutex::new(gops_common::cache::SliceCache::new(
                self.config.verify_cache_bytes,
            )))
        });
        let mut cache = cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.slices_below(&mut cache, k, ranks)
            .map_err(|e| match e {
                CoreError::Store(e) => CheckFailure::Store(e),
                CoreError::Engine(e) => CheckFailure::Engine(e),
                other => CheckFailure::Store(StoreError::Io(other.to_string())),
            })
    }

    /// Settles each disputed copy: re-checked in full, and, when it passes, the stored
    /// copy too. `Some(values)` where the stored copy failed and the new one replaces it.
    fn resolve_disputes(
        &self,
        engine: &LayerEngine,
        worker: WorkerId,
        disputed: &[Submitted],
    ) -> Result<Vec<Option<u64>>, CheckFailure> {
        if disputed.is_empty() {
            return Ok(Vec::new());
        }
        let k = engine.k();
        {
            let mut inner = self.lock();
            inner.disagreements += disputed.len() as u64;
            for s in disputed {
                warn!(worker = %worker, layer = k, slice = s.prize_rank, "two copies of a slice differ: re-checking both in full");
                let message = format!(
                    "the copy of slice {} of layer {k} from {} differs from another copy: re-checking both in full",
                    s.prize_rank,
                    Self::who(&inner, worker)
                );
                inner.events.record_now(EventKind::Disagreement, message);
            }
        }
        let new_values = self.check_submitted(engine, disputed, &vec![1.0; disputed.len()])?;
        let mut stored_copies = Vec::with_capacity(disputed.len());
        for s in disputed {
            // the stored copy, or the first copy waiting for confirmation
            let stored = self
                .store
                .slice_bytes(k, s.prize_rank)
                .map_err(CheckFailure::Store)?;
            let bytes = match stored {
                Some(bytes) => bytes,
                None => self
                    .store
                    .unconfirmed(k, s.prize_rank)
                    .map_err(CheckFailure::Store)?
                    .ok_or_else(|| {
                        CheckFailure::Store(StoreError::Corrupt(format!(
                            "slice {} of layer {k}: the copy it disagreed with is gone",
                            s.prize_rank
                        )))
                    })?,
            };
            stored_copies.push(Submitted {
                layer: k,
                prize_rank: s.prize_rank,
                bytes,
            });
        }
        Ok(stored_copies
            .iter()
            .zip(new_values)
            .map(|(stored, values)| {
                match self.check_submitted(engine, std::slice::from_ref(stored), &[1.0]) {
                    // both pass in full: equal values in canonical form have equal bytes,
                    // so this cannot happen; keep the stored copy
                    Ok(_) => {
                        error!(layer = k, slice = stored.prize_rank, "two different copies of a slice both pass a full re-check; keeping the stored one");
                        None
                    }
                    Err(CheckFailure::Rejected(why)) => {
                        error!(layer = k, slice = stored.prize_rank, reason = %why, "the stored copy of a slice fails a full re-check: replacing it");
                        Some(values)
                    }
                    Err(CheckFailure::Engine(e)) => {
                        error!(layer = k, slice = stored.prize_rank, error = %e, "cannot re-check the stored copy of a slice");
                        None
                    }
                    Err(CheckFailure::Store(e)) => {
                        error!(layer = k, slice = stored.prize_rank, error = %e, "cannot re-check the stored copy of a slice");
                        None
                    }
                }
            })
            .collect())
    }

    /// Claims, for writing without the lock, the checked slices still missing that no
    /// other submission is writing (none under replicated verification, whose copies are
    /// stored under the lock); their ranks. The caller releases the claims.
    fn claim_for_writing(
        &self,
        inner: &mut Inner,
        k: u8,
        checked: &[(Submitted, u64)],
    ) -> Vec<u32> {
        if self.config.replicate {
            return Vec::new();
        }
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == k) else {
            return Vec::new();
        };
        let mut claimed = Vec::new();
        for (s, _) in checked {
            let rank = s.prize_rank;
            if open.ledger.is_missing(rank) && !open.storing.contains_key(&rank) {
                open.storing.insert(rank, s.bytes.digest);
                claimed.push(rank);
            }
        }
        claimed
    }

    /// Records checked slices and replacements: those in `written` are in the store
    /// already; the rest still missing are stored here, flushed, under the lock.
    #[allow(clippy::too_many_arguments)]
    fn store_checked(
        &self,
        inner: &mut Inner,
        worker: WorkerId,
        engine: &LayerEngine,
        checked: Vec<(Submitted, u64)>,
        replacements: Vec<(Submitted, u64)>,
        written: &[u32],
        now: Instant,
    ) -> Result<StoreRound, CoreError> {
        let mut round = StoreRound::default();
        let party = Self::party(inner, worker);
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == engine.k()) else {
            // the layer completed meanwhile: everything here was a duplicate
            round.duplicates += checked.len() as u32;
            if !replacements.is_empty() {
                error!(
                    layer = engine.k(),
                    slices = replacements.len(),
                    "a stored slice failed a full re-check after its layer completed: run `gops verify` on this db"
                );
            }
            return Ok(round);
        };
        let k = open.k();
        let (missing, late): (Vec<_>, Vec<_>) = checked
            .into_iter()
            .partition(|(s, _)| open.ledger.is_missing(s.prize_rank));
        let mut new = Vec::new();
        for (s, values) in missing {
            // another submission's copy is being written without the lock
            match open.storing.get(&s.prize_rank) {
                Some(digest) if *digest == s.bytes.digest => round.duplicates += 1,
                Some(_) => round.raced.push(s),
                None => new.push((s, values)),
            }
        }
        for (s, _) in late {
            // checked at the same time as another copy that was stored first
            if open.progress.digest(s.prize_rank) == Some(&s.bytes.digest) {
                round.duplicates += 1;
            } else {
                round.raced.push(s);
            }
        }
        // replicated verification: a first copy waits for another party's, and only a
        // matching second copy is stored
        // the first copy's worker and the games of its slice
        let mut confirmed_by: HashMap<u32, (WorkerId, u64)> = HashMap::new();
        if self.config.replicate {
            let mut to_store = Vec::new();
            let mut held = Vec::new();
            for (s, values) in new {
                let rank = s.prize_rank;
                match open.unconfirmed.get(&rank) {
                    None => held.push(s),
                    Some(first) if first.digest == s.bytes.digest && first.party == party => {
                        round.duplicates += 1;
                    }
                    Some(first) if first.digest == s.bytes.digest => {
                        confirmed_by.insert(rank, (first.worker, s.bytes.games));
                        to_store.push((s, values));
                    }
                    Some(_) => round.raced.push(s),
                }
            }
            for s in &held {
                self.store.put_unconfirmed(k, s.prize_rank, &s.bytes)?;
                open.unconfirmed.insert(
                    s.prize_rank,
                    FirstCopy {
                        party,
                        worker,
                        digest: s.bytes.digest,
                    },
                );
                round.held += 1;
            }
            // a shard whose every slice this party handed in goes to another party
            for s in &held {
                let Some(ranks) = open.ledger.shard_ranks(s.prize_rank) else {
                    continue;
                };
                let complete = ranks.iter().all(|r| {
                    !open.ledger.is_missing(*r)
                        || open.unconfirmed.get(r).is_some_and(|f| f.party == party)
                });
                if complete {
                    open.ledger.copy_handed_in(s.prize_rank, party, worker);
                }
            }
            new = to_store;
        }
        let batch: Vec<(u32, &SliceBytes)> = new
            .iter()
            .filter(|(s, _)| !written.contains(&s.prize_rank))
            .chain(&replacements)
            .map(|(s, _)| (s.prize_rank, &s.bytes))
            .collect();
        if !batch.is_empty() {
            self.store.put_slice_bytes(k, &batch)?;
        }
        let mut blamed = Vec::new();
        for (s, values) in replacements {
            let rank = s.prize_rank;
            open.progress
                .replace(rank, s.bytes.digest, s.bytes.max_gap, values);
            let first = open.unconfirmed.remove(&rank);
            if first.is_some() {
                self.store.remove_unconfirmed(k, rank)?;
            }
            open.ledger.slice_stored(rank, now);
            let author = open
                .stored_by
                .insert(rank, worker)
                .or(first.map(|f| f.worker));
            if let Some(author) = author {
                warn!(worker = %author, layer = k, slice = rank, "handed in a slice that failed a full re-check");
                blamed.push(author);
            }
            round.stored += 1;
        }
        let mut games = 0u64;
        for (s, values) in new {
            let rank = s.prize_rank;
            if open.unconfirmed.remove(&rank).is_some() {
                self.store.remove_unconfirmed(k, rank)?;
            }
            open.ledger.slice_stored(rank, now);
            open.progress
                .record(rank, s.bytes.digest, s.bytes.max_gap, values);
            open.stored_by.insert(rank, worker);
            games = games.saturating_add(s.bytes.games);
            round.stored += 1;
        }
        for author in blamed {
            inner.workers.blame(author);
        }
        for (_, (first, first_games)) in confirmed_by {
            inner.workers.credit(first, 1, first_games);
        }
        inner.slices_this_run += u64::from(round.stored);
        inner.games_this_run = inner.games_this_run.saturating_add(games);
        let total = inner.games_this_run;
        inner.recent.record(now, total);
        inner.workers.credit(worker, u64::from(round.stored), games);
        if round.stored > 0 {
            self.observer.shard_done(k, round.stored as usize, games);
        }
        Ok(round)
    }

    /// A submission to layer `k` is over (whatever its outcome): the layer completes
    /// when its slices are all stored and no other submission to it is under way. A
    /// copy that disagrees with a stored one is thus settled, the stored one replaced if
    /// it is wrong, before the layer's checksum is taken; completing at the last stored
    /// slice let a lie that won the race to the last shard's store outlive its dispute.
    fn end_submission(&self, k: u8) -> Result<(), CoreError> {
        let mut inner = self.lock();
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == k) else {
            return Ok(());
        };
        open.submissions_in_flight = open.submissions_in_flight.saturating_sub(1);
        if open.submissions_in_flight == 0 && open.ledger.is_done() {
            self.complete_layer(&mut inner)
                .inspect_err(|e| Self::note_failure(&mut inner, e))?;
        }
        Ok(())
    }

    fn reject(
        &self,
        inner: &mut Inner,
        worker: WorkerId,
        lease_id: LeaseId,
        why: Rejection,
    ) -> CoreError {
        warn!(worker = %worker, lease = %lease_id, reason = %why, "submission rejected");
        let message = format!(
            "submission of {} (lease {lease_id}) rejected: {why}",
            Self::who(inner, worker)
        );
        inner
            .events
            .record_now(EventKind::SubmissionRejected, message);
        inner.rejected += 1;
        inner.workers.blame(worker);
        if let Some(open) = inner.open.as_mut() {
            open.ledger.release(worker, lease_id);
        }
        CoreError::Rejected(why)
    }

    /// A write to the store failed: sled keeps failing after that, so the coordinator
    /// stops (and a supervisor restarts it once the cause is mended). Nothing is lost:
    /// what was acknowledged was flushed before.
    fn note_failure(inner: &mut Inner, e: &CoreError) {
        if let CoreError::Store(e @ (StoreError::DiskFull(_) | StoreError::Io(_))) = e {
            if inner.failure.is_none() {
                error!(error = %e, "the store cannot be written: stopping the coordinator");
                inner.events.record_now(
                    EventKind::StoreFailed,
                    format!("the store cannot be written ({e}): the coordinator stops"),
                );
            }
            inner.failure.get_or_insert_with(|| e.to_string());
        }
    }

    /// Why the coordinator must stop, if a write to its store failed.
    pub fn failure(&self) -> Option<String> {
        self.lock().failure.clone()
    }

    /// The status of the run: the store's, plus workers, rate and the open layer.
    pub fn status(&self, now: Instant) -> Result<ClusterStatus, CoreError> {
        let run = run_status(&self.store)?;
        let inner = self.lock();
        Ok(self.status_of(&inner, run, now))
    }

    /// [`Coordinator::status`] with what the dashboard adds: the estimate of what is
    /// left, the uptime and the recent events, all read under one lock.
    pub fn live_status(&self, now: Instant) -> Result<LiveStatus, CoreError> {
        let run = run_status(&self.store)?;
        let inner = self.lock();
        let cluster = self.status_of(&inner, run, now);
        let left = games_left(&cluster.run.layers, &self.layer_games);
        // a finished run's speed stops with it, as the averages do
        let until = inner.finished_at.unwrap_or(now);
        let recent = inner.recent.per_second(until, inner.games_this_run);
        Ok(LiveStatus {
            layer_games: self.layer_games.clone(),
            games_this_run: inner.games_this_run,
            games_left: left,
            recent_games_per_second: recent,
            eta_seconds: eta_seconds(left, recent.unwrap_or(0.0)),
            uptime_seconds: now.saturating_duration_since(inner.started).as_secs_f64(),
            now_unix_ms: unix_ms(SystemTime::now()),
            events: inner.events.recent(),
            cluster,
        })
    }

    fn status_of(
        &self,
        inner: &Inner,
        run: gops_db::status::RunStatus,
        now: Instant,
    ) -> ClusterStatus {
        // a finished run's rates stay what they were at the end
        let end = inner.finished_at.unwrap_or(now);
        let elapsed = end
            .saturating_duration_since(inner.started)
            .as_secs_f64()
            .max(1e-9);
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
        ClusterStatus {
            run,
            open_layer,
            shards,
            workers: inner
                .workers
                .live(now, self.config.lease * 2, MAX_LISTED_WORKERS),
            slices_per_second: inner.slices_this_run as f64 / elapsed,
            games_per_second: inner.games_this_run as f64 / elapsed,
            rejected_submissions: inner.rejected,
            refused_calls: inner.refused_calls,
            disagreements: inner.disagreements,
            workers_registered: inner.workers.len() as u64,
            failure: inner.failure.clone(),
            repaired_slices: inner.repaired,
        }
    }
}
