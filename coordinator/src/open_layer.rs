//! The layer being solved: its progress record (digests, largest gap), the engine that
//! re-solves samples of submissions, the lease ledger of its shards, and a bounded cache
//! of the slices of the layer below that those re-solves read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gops_common::cache::SliceCache;
use gops_common::engine::LayerEngine;
use gops_common::objective::Objective;
use gops_common::plan::{LayerSize, plan_shards_sized};
use gops_common::slice::Claim;
use gops_db::progress::LayerProgress;
use gops_db::store::{Store, StoreError};
use gops_proto::ids::{LeaseId, WorkerId};
use tracing::error;

use crate::config::CoordinatorConfig;
use crate::ledger::{LeaseLedger, Party};

/// A copy of a slice waiting for confirmation.
#[derive(Clone, Copy, Debug)]
pub struct FirstCopy {
    pub party: Party,
    pub worker: WorkerId,
    /// Its values (by digest), largest gap and games: a copy that claims otherwise is
    /// a dispute.
    pub claim: Claim,
}

pub struct OpenLayer {
    pub progress: LayerProgress,
    pub engine: Arc<LayerEngine>,
    pub ledger: LeaseLedger,
    /// Who submitted each slice stored this run (blamed if a full re-check fails it).
    pub stored_by: HashMap<u32, WorkerId>,
    /// Replicated verification: the first copy of each slice, waiting for a copy from
    /// another party (its bytes are in the store's unconfirmed tree).
    pub unconfirmed: HashMap<u32, FirstCopy>,
    /// Slices being written to the store without the coordinator's lock, by the claim
    /// of the copy being written: another copy of one is a duplicate or a race.
    pub storing: HashMap<u32, Claim>,
    /// Submissions to this layer sorted and not yet ended: the layer completes only
    /// when none is left (see `Coordinator::end_submission`).
    pub submissions_in_flight: usize,
    /// Slices of layer k - 1 loaded for verification, least recently used dropped first.
    pub below: Arc<Mutex<SliceCache>>,
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
}
