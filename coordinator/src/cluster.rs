//! The coordinator's logic, free of gRPC: who is working on what, what a submission must
//! pass before it is stored, and when a layer is complete. The gRPC handlers in
//! [`crate::service`] only convert messages and call these methods.
//!
//! Everything needed to resume is in the store: on start the coordinator finds the first
//! incomplete layer, plans shards of the slices it still lacks, and goes on.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gops_common::checksum::{Digest, digest_bytes};
use gops_common::engine::{EngineError, LayerEngine, terminal_slice};
use gops_common::kernel::{GAP_TOLERANCE, GameSolver};
use gops_common::objective::Objective;
use gops_common::prizes::{prize_rank, prize_set_count, prize_unrank};
use gops_common::slice::Slice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use tracing::{info, warn};

use gops_worker::cache::SliceCache;

use crate::ledger::{Assignment, LeaseLedger};
use crate::plan::{LayerSize, plan_shards_sized};
use crate::query::{RunStatus, run_status};
use crate::solve::SolveObserver;
use crate::store::{LayerRecord, SliceBytes, Store, StoreError};

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
            target_games_per_shard: crate::plan::TARGET_GAMES_PER_SHARD,
            min_games_per_shard: crate::plan::MIN_GAMES_PER_SHARD,
            max_fetch: 4096,
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
    UnknownWorker(u64),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("submission rejected: {0}")]
    Rejected(String),
    #[error("layer {0} is not complete yet")]
    NotReady(u8),
    #[error("worker {0} had {1} submissions rejected: no more shards for it")]
    Banned(u64, u64),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A submitted slice, as it arrives.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub layer: u8,
    pub prize_rank: u32,
    pub bytes: SliceBytes,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseOutcome {
    Shard {
        lease_id: u64,
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

#[derive(Clone, Debug, Serialize)]
pub struct WorkerInfo {
    pub id: u64,
    pub name: String,
    pub threads: u32,
    #[serde(skip)]
    last_seen: Instant,
    pub slices: u64,
    pub rejected: u64,
}

/// Why a submission is not stored: the worker's data is wrong, or the coordinator failed.
enum Refusal {
    Reject(String),
    Internal(CoreError),
}

impl From<String> for Refusal {
    fn from(why: String) -> Self {
        Refusal::Reject(why)
    }
}

/// A submission sorted: all late, or new slices to check.
enum Triage {
    AllLate(u32),
    Check {
        engine: Arc<LayerEngine>,
        below: HashMap<u32, Arc<Slice>>,
        fresh: Vec<Submitted>,
        duplicates: u32,
    },
}

/// The layer being solved.
struct OpenLayer {
    size: LayerSize,
    engine: Arc<LayerEngine>,
    ledger: LeaseLedger,
    digests: Vec<Option<Digest>>,
    max_gap: f64,
    stored_values: u64,
    /// Slices of layer k - 1 loaded for verification, least recently used dropped first.
    below: SliceCache,
}

struct Inner {
    open: Option<OpenLayer>,
    workers: BTreeMap<u64, WorkerInfo>,
    next_worker: u64,
    next_lease: u64,
    started: Instant,
    slices_this_run: u64,
    games_this_run: u64,
    rejected: u64,
    /// Stop leasing after this many slices this run (tests of interruption).
    slice_budget: Option<u64>,
    /// Distinct (layer, prize rank) leased this run.
    leased: std::collections::HashSet<(u8, u32)>,
    /// Workers told the run is finished.
    told_finished: std::collections::HashSet<u64>,
}

pub struct Coordinator {
    store: Store,
    config: CoordinatorConfig,
    inner: Mutex<Inner>,
    observer: Arc<dyn SolveObserver + Send>,
}

impl Coordinator {
    /// A coordinator over `store`, positioned at the first incomplete layer.
    pub fn new(
        store: Store,
        config: CoordinatorConfig,
        observer: Arc<dyn SolveObserver + Send>,
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
                workers: BTreeMap::new(),
                next_worker: first_id,
                next_lease: first_id,
                started: Instant::now(),
                slices_this_run: 0,
                games_this_run: 0,
                rejected: 0,
                slice_budget: None,
                leased: Default::default(),
                told_finished: Default::default(),
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
        inner.open.is_none()
            && inner
                .workers
                .values()
                .filter(|w| now.duration_since(w.last_seen) <= self.config.lease)
                .all(|w| inner.told_finished.contains(&w.id))
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
        (inner.open.as_ref().map(|o| o.size.k), inner.slices_this_run)
    }

    /// Opens the first incomplete layer from `from` on (completing any whose slices are
    /// all stored already), or finishes the run.
    fn open_next_layer(&self, inner: &mut Inner, from: u8) -> Result<(), CoreError> {
        let (n, objective) = (self.n(), self.objective());
        for k in from..=n {
            if self.store.layer(k)?.is_some() {
                continue;
            }
            let size = LayerSize::of(n, k, objective);
            let mut digests = vec![None; size.slices];
            let mut max_gap = 0.0f64;
            let mut stored_values = 0u64;
            for rank in self.store.stored_ranks(k)? {
                let record = self.store.slice(k, rank)?.ok_or_else(|| {
                    StoreError::Corrupt(format!("slice {rank} of layer {k} vanished"))
                })?;
                digests[rank as usize] = Some(record.digest);
                max_gap = max_gap.max(record.max_gap);
                stored_values += record.slice.values.len() as u64;
            }
            let already = digests.iter().filter(|d| d.is_some()).count();
            let missing: Vec<u32> = (0..size.slices as u32)
                .filter(|&r| digests[r as usize].is_none())
                .collect();
            let shards = plan_shards_sized(
                &missing,
                size.games_per_slice(),
                self.config.min_shards,
                self.config
                    .min_games_per_shard
                    .min(self.config.target_games_per_shard),
                self.config.target_games_per_shard,
            );
            let ledger = LeaseLedger::new(shards, self.config.lease, inner.next_lease);
            info!(
                layer = k,
                slices = size.slices,
                stored = already,
                shards = ledger.shard_count(),
                "layer open"
            );
            self.observer.layer_started(&size, already);
            inner.open = Some(OpenLayer {
                engine: Arc::new(LayerEngine::new(n, k, objective)),
                size,
                ledger,
                digests,
                max_gap,
                stored_values,
                below: SliceCache::new(self.config.verify_cache_bytes),
            });
            if missing.is_empty() {
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
        let digests = open
            .digests
            .iter()
            .map(|d| d.as_ref().expect("every slice stored"));
        let record = LayerRecord::complete(&open.size, digests, open.max_gap, open.stored_values);
        // the layer stays open (and the run unfinished) unless its record is durable
        self.store.complete_layer(&record)?;
        info!(layer = record.k, checksum = %record.checksum, max_gap = record.max_gap, "layer complete");
        self.observer.layer_done(&record);
        inner.next_lease = inner.next_lease.max(open.ledger.next_lease_id());
        inner.open = None;
        self.open_next_layer(inner, record.k + 1)
    }

    pub fn hello(&self, protocol_version: u32, name: &str, threads: u32) -> Result<u64, CoreError> {
        if protocol_version != gops_proto::PROTOCOL_VERSION {
            return Err(CoreError::Version {
                got: protocol_version,
                want: gops_proto::PROTOCOL_VERSION,
            });
        }
        let mut inner = self.lock();
        let id = inner.next_worker;
        inner.next_worker += 1;
        let name: String = name.chars().take(128).collect();
        info!(worker = id, %name, threads, "worker joined");
        inner.workers.insert(
            id,
            WorkerInfo {
                id,
                name,
                threads,
                last_seen: Instant::now(),
                slices: 0,
                rejected: 0,
            },
        );
        Ok(id)
    }

    fn touch(inner: &mut Inner, worker: u64, now: Instant) -> Result<(), CoreError> {
        match inner.workers.get_mut(&worker) {
            Some(w) => {
                w.last_seen = now;
                Ok(())
            }
            None => Err(CoreError::UnknownWorker(worker)),
        }
    }

    pub fn lease(&self, worker: u64, now: Instant) -> Result<LeaseOutcome, CoreError> {
        let mut inner = self.lock();
        Self::touch(&mut inner, worker, now)?;
        let rejected = inner.workers[&worker].rejected;
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
            inner.told_finished.insert(worker);
            return Ok(LeaseOutcome::Finished);
        };
        for (lease_id, holder) in open.ledger.expire(now) {
            warn!(
                worker = holder,
                lease = lease_id,
                layer = open.size.k,
                "lease expired"
            );
        }
        let k = open.size.k;
        let assignment = open.ledger.assign(worker, now);
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

    pub fn heartbeat(&self, worker: u64, lease_id: u64, now: Instant) -> Result<bool, CoreError> {
        let mut inner = self.lock();
        Self::touch(&mut inner, worker, now)?;
        Ok(inner
            .open
            .as_mut()
            .is_some_and(|open| open.ledger.heartbeat(worker, lease_id, now)))
    }

    pub fn release(&self, worker: u64, lease_id: u64) -> Result<(), CoreError> {
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
        Ok(self.store.slice_bytes(layer, rank)?.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "layer {layer} is complete but slice {rank} is missing"
            ))
        })?)
    }

    /// Validates and stores a worker's finished slices. All or nothing: one bad slice
    /// rejects the submission, and the lease goes back to be leased again.
    pub fn submit(
        &self,
        worker: u64,
        lease_id: u64,
        slices: Vec<Submitted>,
        now: Instant,
    ) -> Result<SubmitOutcome, CoreError> {
        let triage = {
            let mut inner = self.lock();
            Self::touch(&mut inner, worker, now)?;
            match self.triage(&mut inner, &slices) {
                Ok(t) => t,
                Err(Refusal::Reject(why)) => {
                    return Err(self.reject(&mut inner, worker, lease_id, why));
                }
                Err(Refusal::Internal(e)) => return Err(e),
            }
        };
        let (engine, below, fresh, duplicates) = match triage {
            Triage::AllLate(duplicates) => {
                return Ok(SubmitOutcome {
                    stored: 0,
                    duplicates,
                });
            }
            Triage::Check {
                engine,
                below,
                fresh,
                duplicates,
            } => (engine, below, fresh, duplicates),
        };
        // the expensive checks run without the lock
        let checked: Result<Vec<(u32, SliceBytes, u64)>, Refusal> = fresh
            .into_iter()
            .map(|s| {
                let values = self.check_slice(&engine, &below, &s)?;
                Ok((s.prize_rank, s.bytes, values))
            })
            .collect();
        let mut inner = self.lock();
        let checked = match checked {
            Ok(c) => c,
            Err(Refusal::Reject(why)) => return Err(self.reject(&mut inner, worker, lease_id, why)),
            // the coordinator's own failure: not the worker's fault, nothing is blamed
            Err(Refusal::Internal(e)) => return Err(e),
        };
        let Some(open) = inner.open.as_mut().filter(|o| o.size.k == engine.k()) else {
            // the layer completed meanwhile: everything here was a duplicate
            return Ok(SubmitOutcome {
                stored: 0,
                duplicates: duplicates + checked.len() as u32,
            });
        };
        let mut outcome = SubmitOutcome {
            stored: 0,
            duplicates,
        };
        let new: Vec<(u32, SliceBytes)> = checked
            .iter()
            .filter(|(rank, _, _)| open.ledger.is_missing(*rank))
            .map(|(rank, bytes, _)| (*rank, bytes.clone()))
            .collect();
        self.store.put_slice_bytes(open.size.k, &new)?;
        let mut games = 0u64;
        for (rank, bytes, values) in checked {
            if !open.ledger.is_missing(rank) {
                outcome.duplicates += 1;
                continue;
            }
            open.ledger.slice_stored(rank);
            open.digests[rank as usize] = Some(bytes.digest);
            open.max_gap = open.max_gap.max(bytes.max_gap);
            open.stored_values += values;
            games = games.saturating_add(bytes.games);
            outcome.stored += 1;
        }
        let k = open.size.k;
        let layer_done = open.ledger.is_done();
        inner.slices_this_run += u64::from(outcome.stored);
        inner.games_this_run = inner.games_this_run.saturating_add(games);
        if let Some(w) = inner.workers.get_mut(&worker) {
            w.slices += u64::from(outcome.stored);
        }
        if outcome.stored > 0 {
            self.observer.shard_done(k, outcome.stored as usize, games);
        }
        if layer_done {
            self.complete_layer(&mut inner)?;
        }
        Ok(outcome)
    }

    /// Sorts a submission into new slices and duplicates, and gathers what checking the
    /// new ones needs. Errors are reasons to reject.
    fn triage(&self, inner: &mut Inner, slices: &[Submitted]) -> Result<Triage, Refusal> {
        let Some(open) = inner.open.as_mut() else {
            // the run is complete: whatever arrives now is late
            return Ok(Triage::AllLate(slices.len() as u32));
        };
        let k = open.size.k;
        let mut fresh = Vec::new();
        let mut duplicates = 0;
        let mut seen = std::collections::HashSet::new();
        for s in slices {
            if s.layer < k && s.layer >= 1 {
                duplicates += 1; // a late submission for a layer already complete
                continue;
            }
            if s.layer != k {
                return Err(Refusal::Reject(format!(
                    "slice of layer {} while layer {k} is open",
                    s.layer
                )));
            }
            if s.prize_rank as usize >= open.size.slices {
                return Err(Refusal::Reject(format!(
                    "layer {k} has no slice {}",
                    s.prize_rank
                )));
            }
            if !seen.insert(s.prize_rank) {
                return Err(Refusal::Reject(format!(
                    "slice {} submitted twice in one request",
                    s.prize_rank
                )));
            }
            match open.digests[s.prize_rank as usize] {
                Some(stored) if stored == s.bytes.digest => duplicates += 1,
                Some(_) => {
                    return Err(Refusal::Reject(format!(
                        "slice {} differs from the one already stored",
                        s.prize_rank
                    )));
                }
                None => fresh.push(s.clone()),
            }
        }
        // dependencies of the new slices, for re-solving a sample
        let mut below = HashMap::new();
        for s in &fresh {
            let prizes = prize_unrank(s.prize_rank, k);
            for c in prizes.iter() {
                let rank = prize_rank(prizes.without(c));
                if below.contains_key(&rank) {
                    continue;
                }
                let slice = open
                    .below
                    .get_or_load(k - 1, rank, || -> Result<_, Refusal> {
                        if k == 1 {
                            return Ok(terminal_slice());
                        }
                        let record =
                            self.store
                                .slice(k - 1, rank)
                                .map_err(|e| Refusal::Internal(e.into()))?
                                .ok_or_else(|| {
                                    Refusal::Internal(CoreError::Store(StoreError::Corrupt(
                                        format!("dependency {rank} of layer {} missing", k - 1),
                                    )))
                                })?;
                        Ok(record.slice)
                    })?;
                below.insert(rank, slice);
            }
        }
        Ok(Triage::Check {
            engine: Arc::clone(&open.engine),
            below,
            fresh,
            duplicates,
        })
    }

    /// Checks one new slice: digest, shape, finite values, certificate, and a sample of
    /// states re-solved bit for bit. Returns its number of stored values.
    fn check_slice(
        &self,
        engine: &LayerEngine,
        below: &HashMap<u32, Arc<Slice>>,
        s: &Submitted,
    ) -> Result<u64, Refusal> {
        let rank = s.prize_rank;
        if digest_bytes(&s.bytes.body) != s.bytes.digest {
            return Err(Refusal::Reject(format!(
                "slice {rank}: bytes do not match their digest"
            )));
        }
        let slice = Slice::decode_for(self.n(), self.objective(), engine.k(), rank, &s.bytes.body)
            .map_err(|e| Refusal::Reject(format!("slice {rank}: {e}")))?;
        if let Some(bad) = slice.values.iter().find(|v| !v.is_finite()) {
            return Err(Refusal::Reject(format!("slice {rank}: value {bad}")));
        }
        let scale = 1.0 + f64::from(gops_common::CardSet::full(self.n()).sum());
        let gap = s.bytes.max_gap;
        if !(gap.is_finite() && (0.0..=GAP_TOLERANCE * scale).contains(&gap)) {
            return Err(Refusal::Reject(format!(
                "slice {rank}: certificate gap {gap:e} over tolerance"
            )));
        }
        let dependency = |prizes| &*below[&prize_rank(prizes)];
        let states = slice.patterns() * slice.width();
        let samples = if self.config.verify_fraction >= 1.0 {
            states
        } else {
            ((states as f64 * self.config.verify_fraction).ceil() as usize).clamp(1, states)
        };
        // a fresh seed each time: a worker cannot know which states will be checked
        let mut rng = StdRng::seed_from_u64(rand::random());
        let mut solver = GameSolver::new();
        for i in 0..samples {
            let state = if samples == states {
                i
            } else {
                rng.random_range(0..states)
            };
            let (p, slot) = (state / slice.width(), state % slice.width());
            let d = slot as i32 - slice.diff_range;
            let again = engine
                .recompute_value(&mut solver, rank, p, d, &dependency)
                .map_err(|e| Refusal::Internal(e.into()))?;
            let got = slice.value(gops_common::layout::Oriented::new(p as u32, false), d);
            if got.to_bits() != again.value.to_bits() {
                return Err(Refusal::Reject(format!(
                    "slice {rank}: pattern {p} at d {d} is {got}, a re-solve gives {}",
                    again.value
                )));
            }
            // the worker solved this state, so its games' gaps are in the reported maximum
            let solved = got.abs() != 1.0 || self.objective() == Objective::Points;
            if solved && again.gap > gap {
                return Err(Refusal::Reject(format!(
                    "slice {rank}: reported certificate gap {gap:e}, but pattern {p} at d {d} has a game with gap {:e}",
                    again.gap
                )));
            }
        }
        Ok(slice.values.len() as u64)
    }

    fn reject(&self, inner: &mut Inner, worker: u64, lease_id: u64, why: String) -> CoreError {
        warn!(worker, lease = lease_id, reason = %why, "submission rejected");
        inner.rejected += 1;
        if let Some(w) = inner.workers.get_mut(&worker) {
            w.rejected += 1;
        }
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
        let live = self.config.lease * 2;
        let workers: Vec<WorkerInfo> = inner
            .workers
            .values()
            .filter(|w| now.duration_since(w.last_seen) <= live)
            .cloned()
            .collect();
        let (open_layer, shards) = match &inner.open {
            Some(open) => {
                let c = open.ledger.counts();
                (
                    Some(open.size.k),
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
            workers,
            slices_per_second: inner.slices_this_run as f64 / elapsed,
            games_per_second: inner.games_this_run as f64 / elapsed,
            rejected_submissions: inner.rejected,
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct ShardCounts {
    pub pending: usize,
    pub leased: usize,
    pub done: usize,
}

/// `status --coordinator --json`: DESIGN §6's fields, then the cluster's.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterStatus {
    #[serde(flatten)]
    pub run: RunStatus,
    pub open_layer: Option<u8>,
    pub shards: Option<ShardCounts>,
    pub workers: Vec<WorkerInfo>,
    pub slices_per_second: f64,
    pub games_per_second: f64,
    pub rejected_submissions: u64,
}
