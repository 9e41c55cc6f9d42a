//! `gops verify`: checks a db someone computed (or this machine did, hours ago). For every
//! complete layer in range it re-folds the slices' digests into the layer checksum and
//! compares it with the layer's record, and re-solves a random sample (or all) of each
//! slice's states from the stored layer below, comparing bit for bit. The sample is drawn
//! per slice from a seed, so the same seed checks the same states on any thread count
//! and any memory budget. Prize sets are re-solved in batches whose slices below fit the
//! cache together, so memory follows the budget, not the size of the slices.

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Instant;

use gops_common::audit::{resolve_state, sample_states};
use gops_common::cache::{SliceCache, Weigh};
use gops_common::checksum::{Digest, LayerChecksum};
use gops_common::engine::{EngineError, LayerEngine};
use gops_common::kernel::GameSolver;
use gops_common::prizes::{prize_rank, prize_set_count, prize_unrank};
use gops_common::slice::Slice;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rayon::prelude::*;
use serde::Serialize;

use crate::book::Book;
use crate::store::{Store, StoreError};
use crate::verify::batch::{Batch, Ready};

pub mod batch;
mod book;
mod text;

pub use text::VerifyText;

/// What to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Fraction of each slice's states re-solved (at least one per slice; all at 1).
    pub fraction: f64,
    pub layers: RangeInclusive<u8>,
    /// Seeds the sample: the same seed checks the same states.
    pub seed: u64,
    /// Memory for slices of the layer below, least recently used dropped first. Prize
    /// sets are re-solved in batches whose slices below weigh (decoded, as the cache
    /// weighs them) at most this much together, a prize set alone excepted.
    pub cache_bytes: usize,
    /// A book: states of its lowest layer re-solved from children solved on demand
    /// ([`book`]).
    pub on_demand_states: usize,
}

/// A stored value that a re-solve does not reproduce.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    pub k: u8,
    /// The prize set, ascending.
    pub prizes: Vec<u8>,
    /// The merged order of the hands, lowest card first (`A`, `B`, `S` for both).
    pub pattern: String,
    pub diff: i32,
    pub stored: f64,
    pub resolved: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayerVerified {
    pub k: u8,
    pub slices: usize,
    pub states_checked: u64,
    pub mismatches: u64,
    /// Whether the slices' digests fold into the checksum the layer record holds.
    pub checksum_matches: bool,
    /// The largest certificate gap of the games re-solved.
    pub max_gap: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerifyReport {
    pub n: u8,
    pub objective: String,
    pub fraction: f64,
    pub seed: u64,
    pub layers: Vec<LayerVerified>,
    /// Layers in range that are not complete, so not verified.
    pub incomplete_layers: Vec<u8>,
    /// A book's layers in range below its lowest: solved on demand, not stored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_demand_layers: Vec<u8>,
    pub states_checked: u64,
    /// The first mismatches found (at most [`MAX_REPORTED`]); `mismatch_count` has all.
    pub mismatches: Vec<Mismatch>,
    pub mismatch_count: u64,
    pub max_gap: f64,
    pub seconds: f64,
    /// Whether the layers were read through their sealed files: each layer's index and
    /// record checked against each other and the data file when the db was opened, and
    /// each slice's record against the digest its index names.
    pub sealed: bool,
}

impl VerifyReport {
    /// Whether everything checked agrees with what is stored.
    pub fn is_clean(&self) -> bool {
        self.mismatch_count == 0 && self.layers.iter().all(|l| l.checksum_matches)
    }
}

/// Mismatches listed one by one in a report, at most.
pub const MAX_REPORTED: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("re-solving a stored state failed: {0}")]
    Engine(#[from] EngineError),
    #[error(transparent)]
    OnDemand(crate::book::on_demand::OnDemandError),
}

/// Verifies the layers of `options` in `book`; `progress` is told each slice done.
pub fn verify(
    book: &Book,
    options: &VerifyOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<VerifyReport, VerifyError> {
    let started = Instant::now();
    let store = book.store();
    let (n, objective) = (store.n(), store.objective());
    let mut report = VerifyReport {
        n,
        objective: objective.name().to_string(),
        fraction: options.fraction,
        seed: options.seed,
        layers: Vec::new(),
        incomplete_layers: Vec::new(),
        on_demand_layers: Vec::new(),
        states_checked: 0,
        mismatches: Vec::new(),
        mismatch_count: 0,
        max_gap: 0.0,
        seconds: 0.0,
        sealed: store.is_sealed_reader(),
    };
    let mut below_cache = SliceCache::new(options.cache_bytes);
    for k in options.layers.clone() {
        let on_demand = book.below().filter(|o| k <= o.from_layer());
        if on_demand.is_some_and(|o| k < o.from_layer()) {
            report.on_demand_layers.push(k);
            continue;
        }
        if let (Some(on_demand), Some(record)) = (on_demand, store.layer(k)?) {
            let layer = book::verify_lowest_layer(
                store,
                on_demand,
                options,
                k,
                &record,
                &mut report.mismatches,
            )?;
            report.states_checked += layer.states_checked;
            report.mismatch_count += layer.mismatches;
            report.max_gap = report.max_gap.max(layer.max_gap);
            report.layers.push(layer);
            continue;
        }
        let Some(record) = store.layer(k)? else {
            report.incomplete_layers.push(k);
            continue;
        };
        below_cache.keep_layer(k - 1);
        let engine = LayerEngine::new(n, k, objective).with_start(store.pivot_start());
        let mut layer = LayerVerified {
            k,
            slices: prize_set_count(n, k),
            states_checked: 0,
            mismatches: 0,
            checksum_matches: false,
            max_gap: 0.0,
        };
        let mut checksum = LayerChecksum::new();
        let mut batch = Batch::new(options.cache_bytes as u64);
        for rank in 0..layer.slices as u32 {
            let dependencies: Vec<u32> = LayerEngine::dependency_ranks(rank, k).collect();
            let mut loaded = Vec::new();
            for d in batch.missing(&dependencies) {
                let slice = store.slice_below(&mut below_cache, k, d)?;
                let weight = slice.weight() as u64;
                loaded.push((d, slice, weight));
            }
            if let Some(ready) = batch.add(rank, &dependencies, loaded) {
                let checked = check_batch(store, &engine, options, k, &ready, progress)?;
                tally(&mut layer, &mut checksum, &mut report.mismatches, checked);
            }
        }
        if let Some(ready) = batch.finish() {
            let checked = check_batch(store, &engine, options, k, &ready, progress)?;
            tally(&mut layer, &mut checksum, &mut report.mismatches, checked);
        }
        layer.checksum_matches = checksum.finish() == record.checksum;
        report.states_checked += layer.states_checked;
        report.mismatch_count += layer.mismatches;
        report.max_gap = report.max_gap.max(layer.max_gap);
        report.layers.push(layer);
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Re-solves the sample of every prize set of a batch from the batch's slices below:
/// each one's digest and findings, in rank order.
fn check_batch(
    store: &Store,
    engine: &LayerEngine,
    options: &VerifyOptions,
    k: u8,
    (ranks, below): &Ready<Arc<Slice>>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<(Digest, SliceVerified)>, VerifyError> {
    let dependency = |prizes| &*below[&prize_rank(prizes)];
    ranks
        .par_iter()
        .map_init(GameSolver::new, |solver, &rank| -> Result<_, VerifyError> {
            let record = store.require_slice(k, rank)?;
            let mut rng = StdRng::seed_from_u64(slice_seed(options.seed, k, rank));
            let mut slice_report = SliceVerified::default();
            for state in sample_states(&record.slice, options.fraction, &mut rng) {
                let check = resolve_state(engine, solver, rank, &record.slice, state, &dependency)?;
                slice_report.states += 1;
                slice_report.max_gap = slice_report.max_gap.max(check.gap);
                if !check.matches() {
                    slice_report.mismatches.push(Mismatch {
                        k,
                        prizes: prize_unrank(rank, k).iter().collect(),
                        pattern: engine.layout.canonical[check.pattern].letters(),
                        diff: check.d,
                        stored: check.stored,
                        resolved: check.resolved,
                    });
                }
            }
            progress(1);
            Ok((record.digest, slice_report))
        })
        .collect()
}

/// Adds a batch's findings, in rank order, to its layer's (the first mismatches to
/// `mismatches`, up to [`MAX_REPORTED`]).
fn tally(
    layer: &mut LayerVerified,
    checksum: &mut LayerChecksum,
    mismatches: &mut Vec<Mismatch>,
    checked: Vec<(Digest, SliceVerified)>,
) {
    for (digest, slice) in checked {
        checksum.add(&digest);
        layer.states_checked += slice.states;
        layer.max_gap = layer.max_gap.max(slice.max_gap);
        layer.mismatches += slice.mismatches.len() as u64;
        let room = MAX_REPORTED.saturating_sub(mismatches.len());
        mismatches.extend(slice.mismatches.into_iter().take(room));
    }
}

#[derive(Default)]
struct SliceVerified {
    states: u64,
    mismatches: Vec<Mismatch>,
    max_gap: f64,
}

/// The seed of one slice's sample.
fn slice_seed(seed: u64, k: u8, rank: u32) -> u64 {
    seed ^ (u64::from(k) << 56) ^ u64::from(rank).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
