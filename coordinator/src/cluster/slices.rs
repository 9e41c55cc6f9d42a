//! Slices served to workers (fetched or located in the db directory), and damaged
//! slices solved again on the way.

use super::*;

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
        cache: &mut gops_common::cache::SliceCache,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<gops_common::slice::Slice>>, CoreError> {
        self.with_repairs(|| self.store.slices_below(cache, k, ranks.iter().copied()))
    }

    /// Runs a read of the store; where it meets a damaged slice, solves that slice again
    /// from the layer below (the engine is deterministic, so the new copy is the one
    /// that was lost), stores it and reads again.
    pub(super) fn with_repairs<T>(
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
    pub(super) fn repair(&self, k: u8, rank: u32, why: &str) -> Result<(), CoreError> {
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
        self.store.put_repaired(k, rank, &solved.to_bytes())?;
        {
            let mut inner = self.lock();
            inner.repaired += 1;
            inner.events.note(Happening::SliceRepaired {
                layer: k,
                slice: rank,
                why,
            });
        }
        Ok(())
    }
}
