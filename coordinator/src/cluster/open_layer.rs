//! The layer being solved: its progress record (digests, largest gap), the engine that
//! re-solves samples of submissions, the lease ledger of its shards, and a bounded cache
//! of the slices of the layer below that those re-solves read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use gops_common::cache::SliceCache;
use gops_common::engine::LayerEngine;
use gops_common::objective::Objective;
use gops_common::plan::{LayerSize, plan_shards_sized};
use gops_common::slice::Claim;
use gops_db::store::progress::LayerProgress;
use gops_db::store::{Store, StoreError};
use gops_proto::ids::{LeaseId, WorkerId};
use tracing::error;

use crate::cluster::ledger::{Assignment, LeaseLedger, Party};
use crate::config::CoordinatorConfig;

/// A copy of a slice waiting for confirmation.
#[derive(Clone, Copy, Debug)]
pub struct FirstCopy {
    pub party: Party,
    pub worker: WorkerId,
    /// Its values (by digest), largest gap and games: a copy that claims otherwise is
    /// a dispute.
    pub claim: Claim,
}

/// Its state is kept by its methods: a slice is claimed for writing only while it is
/// missing and no other copy of it is being written; a slice stored is recorded in the
/// ledger, the progress and its author at once, and the first copy that waited for it
/// (replicated verification) is taken; the layer may complete only once no submission
/// to it is under way.
pub struct OpenLayer {
    progress: LayerProgress,
    engine: Arc<LayerEngine>,
    ledger: LeaseLedger,
    /// Who submitted each slice stored this run (blamed if a full re-check fails it).
    stored_by: HashMap<u32, WorkerId>,
    /// Replicated verification: the first copy of each slice, waiting for a copy from
    /// another party (its bytes are in the store's unconfirmed tree).
    unconfirmed: HashMap<u32, FirstCopy>,
    /// Slices being written to the store without the coordinator's lock, by the claim
    /// of the copy being written: another copy of one is a duplicate or a race.
    storing: HashMap<u32, Claim>,
    /// Submissions to this layer sorted and not yet ended: the layer completes only
    /// when none is left (see `Coordinator::end_submission`).
    submissions_in_flight: usize,
    /// Slices of layer k - 1 loaded for verification, least recently used dropped first.
    below: Arc<Mutex<SliceCache>>,
}

/// The shards a coordinator with `config` cuts the `missing` prize ranks of a layer of
/// `size` into.
pub fn plan_layer_shards(
    missing: &[u32],
    size: &LayerSize,
    config: &CoordinatorConfig,
) -> Vec<Vec<u32>> {
    plan_shards_sized(
        missing,
        size.games_per_slice(),
        config.min_shards,
        config
            .min_games_per_shard
            .min(config.target_games_per_shard),
        config.target_games_per_shard,
    )
}

impl OpenLayer {
    /// Layer `k` as the store holds it, its missing slices planned into shards whose
    /// leases are numbered from `first_lease`.
    pub fn open(
        store: &Store,
        k: u8,
        config: &CoordinatorConfig,
        first_lease: LeaseId,
    ) -> Result<OpenLayer, StoreError> {
        let (n, objective): (u8, Objective) = (store.n(), store.objective());
        let size = LayerSize::of(n, k, objective);
        // a damaged slice of this layer is set aside: removed, and solved again
        let (progress, damaged) = LayerProgress::resume_sparing(store, size)?;
        for (rank, why) in damaged {
            error!(layer = k, slice = rank, reason = %why, "a stored slice is damaged: removing it to solve it again");
            store.remove_slice(k, rank)?;
        }
        let shards = plan_layer_shards(&progress.missing(), &size, config);
        Ok(OpenLayer {
            progress,
            engine: Arc::new(LayerEngine::new(n, k, objective).with_start(store.pivot_start())),
            ledger: LeaseLedger::new(shards, config.lease, first_lease)
                .with_max_per_worker(config.max_leases_per_worker),
            stored_by: HashMap::new(),
            unconfirmed: HashMap::new(),
            storing: HashMap::new(),
            submissions_in_flight: 0,
            below: Arc::new(Mutex::new(SliceCache::new(config.verify_cache_bytes))),
        })
    }

    pub fn k(&self) -> u8 {
        self.progress.k()
    }

    /// The layer's record: digests and gaps of the slices stored.
    pub fn progress(&self) -> &LayerProgress {
        &self.progress
    }

    /// The engine that re-solves samples of this layer's submissions.
    pub fn engine(&self) -> &Arc<LayerEngine> {
        &self.engine
    }

    pub fn ledger(&self) -> &LeaseLedger {
        &self.ledger
    }

    // The leases change through the methods below; slices are marked stored through
    // [`OpenLayer::slice_stored`] and [`OpenLayer::slice_replaced`] only, which keep the
    // ledger, the progress and the authors together.

    /// Ends the leases past their deadline at `now`: each lease and its holder.
    pub fn expire_leases(&mut self, now: Instant) -> Vec<(LeaseId, WorkerId)> {
        self.ledger.expire(now)
    }

    /// A shard for `worker` of `party`, with `live_workers` at work
    /// ([`LeaseLedger::assign_among`]).
    pub fn assign(
        &mut self,
        worker: WorkerId,
        party: Party,
        now: Instant,
        live_workers: usize,
    ) -> Assignment {
        self.ledger.assign_among(worker, party, now, live_workers)
    }

    /// Extends `worker`'s lease; whether it is still held.
    pub fn heartbeat(&mut self, worker: WorkerId, lease_id: LeaseId, now: Instant) -> bool {
        self.ledger.heartbeat(worker, lease_id, now)
    }

    /// `worker` gives `lease_id` back unfinished (or its submission was rejected).
    pub fn release(&mut self, worker: WorkerId, lease_id: LeaseId) {
        self.ledger.release(worker, lease_id);
    }

    /// Gives back every lease `worker` holds: how many.
    pub fn release_all(&mut self, worker: WorkerId) -> usize {
        self.ledger.release_all(worker)
    }

    /// `party` (through `worker`) handed in a complete copy of the shard of `rank`, to
    /// be confirmed by another party ([`LeaseLedger::copy_handed_in`]).
    pub fn copy_handed_in(&mut self, rank: u32, party: Party, worker: WorkerId) {
        self.ledger.copy_handed_in(rank, party, worker);
    }

    /// The cache of slices of layer k - 1 that re-solves read.
    pub fn below(&self) -> Arc<Mutex<SliceCache>> {
        Arc::clone(&self.below)
    }

    /// Claims `rank` for a write of the copy `claim` without the coordinator's lock:
    /// whether it was claimed (the slice is missing and no other copy is being written).
    pub fn claim_for_writing(&mut self, rank: u32, claim: Claim) -> bool {
        if !self.ledger.is_missing(rank) || self.storing.contains_key(&rank) {
            return false;
        }
        self.storing.insert(rank, claim);
        true
    }

    /// The claim of the copy of `rank` being written, if one is.
    pub fn being_written(&self, rank: u32) -> Option<&Claim> {
        self.storing.get(&rank)
    }

    /// The writes of `ranks` ended, stored or failed.
    pub fn writes_ended(&mut self, ranks: &[u32]) {
        for rank in ranks {
            self.storing.remove(rank);
        }
    }

    /// A submission to this layer was sorted and is under way.
    pub fn submission_began(&mut self) {
        self.submissions_in_flight += 1;
    }

    /// A submission to this layer ended: whether the layer may complete now (every
    /// slice stored, and no other submission under way that could still dispute one).
    pub fn submission_ended(&mut self) -> bool {
        self.submissions_in_flight = self.submissions_in_flight.saturating_sub(1);
        self.submissions_in_flight == 0 && self.ledger.is_done()
    }

    /// The first copy of `rank` waiting for another party's (replicated verification).
    pub fn first_copy(&self, rank: u32) -> Option<&FirstCopy> {
        self.unconfirmed.get(&rank)
    }

    /// Keeps `copy` as the first copy of `rank`, to be confirmed by another party's.
    pub fn hold_first_copy(&mut self, rank: u32, copy: FirstCopy) {
        self.unconfirmed.insert(rank, copy);
    }

    /// `rank` was stored from `worker`'s copy (`claim`, holding `values` values): in the
    /// ledger, the progress and the authors at once. The first copy that waited for
    /// it, if any, is returned (its bytes are the caller's to remove from the store).
    pub fn slice_stored(
        &mut self,
        rank: u32,
        claim: Claim,
        values: u64,
        worker: WorkerId,
        now: Instant,
    ) -> Option<FirstCopy> {
        let first = self.unconfirmed.remove(&rank);
        self.ledger.slice_stored(rank, now);
        self.progress.record(
            rank,
            claim.digest,
            f64::from_bits(claim.max_gap_bits),
            values,
            claim.games,
        );
        self.stored_by.insert(rank, worker);
        first
    }

    /// `rank`, stored before, was replaced by `worker`'s copy after a full re-check
    /// failed the stored one: the first copy that waited for it, and who handed in the
    /// copy replaced (the author recorded, else that first copy's worker).
    pub fn slice_replaced(
        &mut self,
        rank: u32,
        claim: Claim,
        values: u64,
        worker: WorkerId,
        now: Instant,
    ) -> (Option<FirstCopy>, Option<WorkerId>) {
        self.progress.replace(
            rank,
            claim.digest,
            f64::from_bits(claim.max_gap_bits),
            values,
            claim.games,
        );
        let first = self.unconfirmed.remove(&rank);
        self.ledger.slice_stored(rank, now);
        let author = self
            .stored_by
            .insert(rank, worker)
            .or(first.map(|f| f.worker));
        (first, author)
    }
}
