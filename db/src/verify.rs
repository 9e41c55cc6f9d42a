//! `gops verify`: checks a db someone computed (or this machine did, hours ago). For every
//! complete layer in range it re-folds the slices' digests into the layer checksum and
//! compares it with the layer's record, and re-solves a random sample (or all) of each
//! slice's states from the stored layer below, comparing bit for bit. The sample is drawn
//! per slice from a seed, so the same seed checks the same states on any thread count
//! and any memory budget. Prize sets are re-solved in batches whose slices below fit the
//! cache together, so memory follows the budget, not the size of the slices.

use std::collections::HashSet;
use std::ops::RangeInclusive;
use std::time::Instant;

use gops_common::audit::{resolve_state, sample_states};
use gops_common::cache::SliceCache;
use gops_common::checksum::LayerChecksum;
use gops_common::engine::{EngineError, LayerEngine};
use gops_common::kernel::GameSolver;
use gops_common::prizes::{prize_rank, prize_set_count, prize_unrank};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rayon::prelude::*;
use serde::Serialize;

use crate::store::{Store, StoreError};

/// What to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Fraction of each slice's states re-solved (at least one per slice; all at 1).
    pub fraction: f64,
    pub layers: RangeInclusive<u8>,
    /// Seeds the sample: the same seed checks the same states.
    pub seed: u64,
    /// Memory for slices of the layer below, least recently used dropped first; a batch
    /// of prize sets reads at most this much of them (at least one set a batch).
    pub cache_bytes: usize,
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
    pub states_checked: u64,
    /// The first mismatches found (at most [`MAX_REPORTED`]); `mismatch_count` has all.
    pub mismatches: Vec<Mismatch>,
    pub mismatch_count: u64,
    pub max_gap: f64,
    pub seconds: f64,
}

impl VerifyReport {
    /// Whether everything checked agrees with what is stored.
    pub fn is_clean(&self) -> bool {
        self.mismatch_count == 0 && self.layers.iter().all(|l| l.checksum_matches)
    }
}

/// Mismatches listed one by one in a report, at most.
pub const MAX_REPORTED: usize = 100;

/// Prize sets re-solved together at most: neighbours in colex order share the slices
/// below, and a batch keeps the threads busy.
const SLICES_PER_BATCH: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("re-solving a stored state failed: {0}")]
    Engine(#[from] EngineError),
}

/// Verifies the layers of `options` in `store`; `progress` is told each slice done.
pub fn verify(
    store: &Store,
    options: &VerifyOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<VerifyReport, VerifyError> {
    let started = Instant::now();
    let (n, objective) = (store.n(), store.objective());
    let mut report = VerifyReport {
        n,
        objective: objective.name().to_string(),
        fraction: options.fraction,
        seed: options.seed,
        layers: Vec::new(),
        incomplete_layers: Vec::new(),
        states_checked: 0,
        mismatches: Vec::new(),
        mismatch_count: 0,
        max_gap: 0.0,
        seconds: 0.0,
    };
    let mut below_cache = SliceCache::new(options.cache_bytes);
    for k in options.layers.clone() {
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
        let weights = weights_below(store, k)?;
        for batch in batches(k, layer.slices as u32, &weights, options.cache_bytes as u64) {
            let below = store.slices_below(&mut below_cache, k, batch.iter().copied())?;
            let dependency = |prizes| &*below[&prize_rank(prizes)];
            let checked = batch
                .par_iter()
                .map_init(GameSolver::new, |solver, &rank| {
                    let record = store.require_slice(k, rank)?;
                    let mut rng = StdRng::seed_from_u64(slice_seed(options.seed, k, rank));
                    let mut slice_report = SliceVerified::default();
                    for state in sample_states(&record.slice, options.fraction, &mut rng) {
                        let check = resolve_state(
                            &engine,
                            solver,
                            rank,
                            &record.slice,
                            state,
                            &dependency,
                        )?;
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
                .collect::<Result<Vec<_>, VerifyError>>()?;
            for (digest, slice) in checked {
                checksum.add(&digest);
                layer.states_checked += slice.states;
                layer.max_gap = layer.max_gap.max(slice.max_gap);
                layer.mismatches += slice.mismatches.len() as u64;
                let room = MAX_REPORTED.saturating_sub(report.mismatches.len());
                report
                    .mismatches
                    .extend(slice.mismatches.into_iter().take(room));
            }
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

/// The bytes each slice of layer `k - 1` takes, by prize rank (from the index; the
/// terminal slice below layer 1 counts nothing).
fn weights_below(store: &Store, k: u8) -> Result<Vec<u64>, StoreError> {
    if k == 1 {
        return Ok(vec![0]);
    }
    (0..prize_set_count(store.n(), k - 1) as u32)
        .map(|rank| store.record_bytes(k - 1, rank))
        .collect()
}

/// The prize ranks `0..slices` of layer `k` in batches, in order: at most
/// [`SLICES_PER_BATCH`] a batch, and a batch's slices below (each weighing
/// `weights[rank]`, counted once) weigh at most `limit` together, unless a batch of one
/// prize set alone weighs more. A batch takes the next prize set whenever it fits.
fn batches(k: u8, slices: u32, weights: &[u64], limit: u64) -> Vec<Vec<u32>> {
    let mut batches = Vec::new();
    let mut batch: Vec<u32> = Vec::new();
    let mut below: HashSet<u32> = HashSet::new();
    let mut weight = 0;
    for rank in 0..slices {
        let dependencies: Vec<u32> = LayerEngine::dependency_ranks(rank, k).collect();
        let added: u64 = dependencies
            .iter()
            .filter(|d| !below.contains(d))
            .map(|&d| weights[d as usize])
            .sum();
        if !batch.is_empty() && (batch.len() == SLICES_PER_BATCH || weight + added > limit) {
            batches.push(std::mem::take(&mut batch));
            below.clear();
            weight = 0;
        }
        for d in dependencies {
            if below.insert(d) {
                weight += weights[d as usize];
            }
        }
        batch.push(rank);
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    batches
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The weight of a batch's slices below, each counted once.
    fn weight_below(k: u8, batch: &[u32], weights: &[u64]) -> u64 {
        let below: HashSet<u32> = batch
            .iter()
            .flat_map(|&r| LayerEngine::dependency_ranks(r, k))
            .collect();
        below.iter().map(|&d| weights[d as usize]).sum()
    }

    #[test]
    fn batches_cover_the_layer_in_order_within_the_limit() {
        let (n, k) = (12u8, 6u8);
        let slices = prize_set_count(n, k) as u32;
        let below = prize_set_count(n, k - 1);
        let mut x = 7u64;
        let weights: Vec<u64> = (0..below)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                1 + (x >> 40) % 1000
            })
            .collect();
        let heaviest_set = (0..slices)
            .map(|r| weight_below(k, &[r], &weights))
            .max()
            .unwrap();
        for limit in [0, heaviest_set / 2, heaviest_set, 3 * heaviest_set, 40_000, u64::MAX] {
            let split = batches(k, slices, &weights, limit);
            let flat: Vec<u32> = split.iter().flatten().copied().collect();
            assert_eq!(flat, (0..slices).collect::<Vec<_>>(), "limit {limit}");
            for (i, batch) in split.iter().enumerate() {
                assert!(!batch.is_empty() && batch.len() <= SLICES_PER_BATCH);
                let weight = weight_below(k, batch, &weights);
                assert!(batch.len() == 1 || weight <= limit, "limit {limit}: {weight}");
                // greedy: the next prize set did not fit, or the batch was full
                if let Some(next) = split.get(i + 1) {
                    let mut grown = batch.clone();
                    grown.push(next[0]);
                    assert!(
                        batch.len() == SLICES_PER_BATCH
                            || weight_below(k, &grown, &weights) > limit,
                        "limit {limit}: batch {i} could have taken {}",
                        next[0]
                    );
                }
            }
            if limit == u64::MAX {
                assert_eq!(split.len(), (slices as usize).div_ceil(SLICES_PER_BATCH));
            }
            if limit < heaviest_set {
                assert!(split.iter().any(|b| b.len() == 1));
            }
        }
    }

    #[test]
    fn layer_one_reads_only_the_terminal_slice() {
        assert_eq!(batches(1, 13, &[0], 0), vec![(0..13).collect::<Vec<u32>>()]);
    }
}
