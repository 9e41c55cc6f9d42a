//! Slices served to workers (fetched or located in the db directory), and damaged
//! slices solved again on the way.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use gops_common::cache::SliceCache;
use gops_common::engine::LayerEngine;
use gops_common::prizes::{prize_rank, prize_set_count};
use gops_common::slice::{Slice, SliceBytes};
use gops_db::store::{Located, StoreError};
use tracing::error;

use super::{Coordinator, SliceTraffic};
use crate::error::{CoreError, ReadFailure};
use crate::report::happening::Happening;

impl Coordinator {
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
        cache: &mut SliceCache,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<Slice>>, CoreError> {
        Ok(self.read_below(cache, k, ranks)?)
    }

    /// [`Coordinator::slices_below`] with the narrower failure of a read.
    pub(super) fn read_below(
        &self,
        cache: &mut SliceCache,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<Slice>>, ReadFailure> {
        self.with_repairs(|| self.store.slices_below(cache, k, ranks.iter().copied()))
    }

    /// Runs a read of the store; where it meets a damaged slice, solves that slice again
    /// from the layer below (the engine is deterministic, so the new copy is the one
    /// that was lost), stores it and reads again.
    pub(super) fn with_repairs<T>(
        &self,
        mut read: impl FnMut() -> Result<T, StoreError>,
    ) -> Result<T, ReadFailure> {
        // each repair mends one slice (and those below it that it met on the way)
        for _ in 0..MAX_REPAIRS_PER_READ {
            match read() {
                Err(StoreError::DamagedSlice { k, rank, why }) => self.repair(k, rank, why)?,
                other => return Ok(other?),
            }
        }
        Err(StoreError::Corrupt(format!(
            "more than {MAX_REPAIRS_PER_READ} damaged slices met in one read: run `gops verify` on this db"
        ))
        .into())
    }

    /// Solves slice `rank` of layer `k` again from layer `k - 1` and stores it; a damaged
    /// slice of a lower layer met on the way is mended first. Each one waiting is of a
    /// higher layer than the one above it in the stack, so the stack holds at most `k`.
    fn repair(&self, k: u8, rank: u32, why: String) -> Result<(), ReadFailure> {
        let mut waiting = vec![(k, rank, why)];
        while let Some((k, rank, why)) = waiting.pop() {
            match self.solve_again(k, rank, &why)? {
                Some((lower, lower_rank, lower_why)) if lower < k => {
                    waiting.push((k, rank, why));
                    waiting.push((lower, lower_rank, lower_why));
                }
                Some((lower, lower_rank, lower_why)) => {
                    return Err(StoreError::DamagedSlice {
                        k: lower,
                        rank: lower_rank,
                        why: lower_why,
                    }
                    .into());
                }
                None => {
                    let mut inner = self.lock();
                    inner.trouble.repaired += 1;
                    inner.notices.note(Happening::SliceRepaired {
                        layer: k,
                        slice: rank,
                        why: &why,
                    });
                }
            }
        }
        Ok(())
    }

    /// One step of [`Self::repair`]: solves slice `rank` of layer `k` again and stores
    /// it, or finds a damaged slice below it first (its layer, rank and damage).
    #[allow(clippy::type_complexity)]
    fn solve_again(
        &self,
        k: u8,
        rank: u32,
        why: &str,
    ) -> Result<Option<(u8, u32, String)>, ReadFailure> {
        // not a Happening: this marks the start of a re-solve that may take long or find
        // damage below, outside the lock; its event is `SliceRepaired`, once it is stored
        error!(layer = k, slice = rank, reason = %why, "a stored slice is damaged: solving it again");
        let engine = LayerEngine::new(self.n(), k, self.objective()).with_start(self.pivot_start());
        let mut cache = SliceCache::new(self.config.verify_cache_bytes);
        let below = match self.store.slices_below(&mut cache, k, [rank]) {
            Err(StoreError::DamagedSlice { k, rank, why }) => return Ok(Some((k, rank, why))),
            other => other?,
        };
        let dependency = |prizes| &*below[&prize_rank(prizes)];
        let solved = engine.solve_slice(rank, &dependency)?;
        self.store.put_repaired(k, rank, &solved.to_bytes())?;
        Ok(None)
    }
}

/// Damaged slices one read may mend before it gives up: far more than a db damaged by
/// a crash holds (a write torn here and there), and a bound on the work a read does for
/// a store damaged throughout, which `gops verify` should look at instead.
const MAX_REPAIRS_PER_READ: usize = 64;
