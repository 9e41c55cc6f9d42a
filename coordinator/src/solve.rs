//! The solve driver: layers bottom-up, each layer's missing slices in shards, every
//! shard written to the store as one batch, a layer marked complete only once all its
//! slices are durable. A second run on the same store resumes where the first stopped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gops_common::engine::{LayerEngine, terminal_slice};
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_worker::{ShardSolver, WorkerError};
use tracing::{debug, info};

use crate::plan::{LayerSize, MIN_GAMES_PER_SHARD, plan_shards};
use crate::store::{LayerRecord, Store, StoreError};

/// What the driver reports as it goes (a progress bar, a log, a test probe).
pub trait SolveObserver: Sync {
    /// Called once before any work, with every layer's size and how many of its slices
    /// are already stored.
    fn plan(&self, _layers: &[(LayerSize, usize)]) {}
    fn layer_started(&self, _size: &LayerSize, _already_stored: usize) {}
    fn shard_done(&self, _k: u8, _slices: usize, _games: u64) {}
    fn layer_done(&self, _record: &LayerRecord) {}
}

/// Observes nothing.
pub struct Silent;
impl SolveObserver for Silent {}

#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Worker(#[from] WorkerError),
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
}

impl StopSignal {
    fn should_stop(&self, slices_this_run: usize) -> bool {
        self.flag.load(Ordering::SeqCst) || self.after_slices.is_some_and(|n| slices_this_run >= n)
    }
}

/// Solves every layer of the store's game that is not complete yet.
pub fn solve(
    store: &Store,
    solver: &ShardSolver,
    observer: &dyn SolveObserver,
    stop: &StopSignal,
) -> Result<SolveOutcome, SolveError> {
    let started = Instant::now();
    let (n, objective) = (store.n(), store.objective());
    let mut plan = Vec::new();
    for k in 1..=n {
        plan.push((LayerSize::of(n, k, objective), store.stored_count(k)?));
    }
    observer.plan(&plan);

    let mut below: Option<Vec<Slice>> = Some(vec![terminal_slice()]);
    let mut records = Vec::new();
    let mut games = 0u64;
    let mut slices_this_run = 0usize;
    for (size, _) in &plan {
        let k = size.k;
        if let Some(record) = store.layer(k)? {
            records.push(record);
            below = None; // loaded from the store only if a later layer needs it
            continue;
        }
        let below_values = match below.take() {
            Some(values) => values,
            None => load_layer(store, k - 1)?,
        };
        let stored = store.stored_ranks(k)?;
        observer.layer_started(size, stored.len());
        info!(
            layer = k,
            slices = size.slices,
            stored = stored.len(),
            games = size.games,
            "layer started"
        );
        let engine = LayerEngine::new(n, k, objective);
        let dependency = |prizes| &below_values[prize_rank(prizes) as usize];

        let mut current: Vec<Option<Slice>> = vec![None; size.slices];
        let mut digests = vec![[0u8; 32]; size.slices];
        let mut max_gap = 0.0f64;
        let mut stored_values = 0u64;
        for &rank in &stored {
            let record = store.slice(k, rank)?.ok_or_else(|| {
                StoreError::Corrupt(format!("slice {rank} of layer {k} vanished"))
            })?;
            max_gap = max_gap.max(record.max_gap);
            digests[rank as usize] = record.digest;
            stored_values += record.slice.values.len() as u64;
            current[rank as usize] = Some(record.slice);
        }
        let missing: Vec<u32> = (0..size.slices as u32)
            .filter(|&r| current[r as usize].is_none())
            .collect();
        for shard in plan_shards(
            &missing,
            size.games_per_slice(),
            4 * solver.threads(),
            MIN_GAMES_PER_SHARD,
        ) {
            if stop.should_stop(slices_this_run) {
                store.flush()?;
                let slices_stored = store.stored_count(k)?;
                info!(layer = k, slices_stored, "interrupted");
                return Ok(SolveOutcome::Interrupted {
                    layer: k,
                    slices_stored,
                });
            }
            let solved = solver.solve_shard(&engine, &shard, &dependency)?;
            store.put_slices(k, &solved)?;
            let shard_games: u64 = solved.iter().map(|s| s.games).sum();
            games += shard_games;
            slices_this_run += solved.len();
            debug!(
                layer = k,
                slices = solved.len(),
                games = shard_games,
                "shard stored"
            );
            observer.shard_done(k, solved.len(), shard_games);
            for slice in solved {
                max_gap = max_gap.max(slice.max_gap);
                digests[slice.prize_rank as usize] = slice.slice.digest();
                stored_values += slice.slice.values.len() as u64;
                current[slice.prize_rank as usize] = Some(slice.slice);
            }
        }
        let record = LayerRecord::complete(size, &digests, max_gap, stored_values);
        store.complete_layer(&record)?;
        info!(layer = k, checksum = %record.checksum, max_gap = record.max_gap, "layer complete");
        observer.layer_done(&record);
        records.push(record);
        below = Some(
            current
                .into_iter()
                .map(|v| v.expect("every slice solved"))
                .collect(),
        );
    }
    Ok(SolveOutcome::Complete(SolveSummary {
        states: records.iter().map(|r| r.states).sum(),
        layers: records,
        games,
        slices: slices_this_run,
        wall: started.elapsed(),
    }))
}

/// All slices of a complete layer, in prize-rank order (layer 0 is the terminal slice).
pub fn load_layer(store: &Store, k: u8) -> Result<Vec<Slice>, StoreError> {
    if k == 0 {
        return Ok(vec![terminal_slice()]);
    }
    let count = gops_common::prizes::prize_set_count(store.n(), k);
    (0..count as u32)
        .map(|rank| {
            store.slice(k, rank)?.map(|r| r.slice).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "layer {k} is marked complete but slice {rank} is missing"
                ))
            })
        })
        .collect()
}
