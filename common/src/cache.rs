//! A cache of slices, bounded in bytes, the least recently used going first: a worker's
//! dependency slices, the coordinator's verification reads and the read side's lookups
//! (which also keep the tables of the slices they read in part, in a cache of the same
//! kind). Entries still in use stay alive through their `Arc`s even when evicted here.
//! What an entry costs the bound is what it says it weighs ([`Weigh`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::slice::Slice;

/// What an entry costs the cache's bound, in bytes (about what it holds in memory).
pub trait Weigh {
    fn weight(&self) -> usize;
}

impl Weigh for Slice {
    fn weight(&self) -> usize {
        8 * self.values.len() + 8 * self.windows.as_ref().map_or(0, Vec::len) + 64
    }
}

/// The cache of whole slices.
pub type SliceCache = LayerCache<Slice>;

/// Entries of type `T` by (layer, prize rank), bounded by their weight.
pub struct LayerCache<T> {
    limit_bytes: usize,
    bytes: usize,
    tick: u64,
    /// Each entry by (layer, rank), with the tick of its last use.
    entries: HashMap<(u8, u32), (Arc<T>, u64)>,
    /// The same slices by the tick of their last use: the least recently used first, so an
    /// eviction takes O(log n), not a scan of every entry.
    by_use: BTreeMap<u64, (u8, u32)>,
}

impl<T: Weigh> LayerCache<T> {
    pub fn new(limit_bytes: usize) -> Self {
        LayerCache {
            limit_bytes,
            bytes: 0,
            tick: 0,
            entries: HashMap::new(),
            by_use: BTreeMap::new(),
        }
    }

    pub fn get(&mut self, layer: u8, rank: u32) -> Option<Arc<T>> {
        self.tick += 1;
        let tick = self.tick;
        let (slice, used) = self.entries.get_mut(&(layer, rank))?;
        self.by_use.remove(used);
        self.by_use.insert(tick, (layer, rank));
        *used = tick;
        Some(Arc::clone(slice))
    }

    pub fn insert(&mut self, layer: u8, rank: u32, slice: Arc<T>) {
        self.tick += 1;
        self.bytes += slice.weight();
        if let Some((old, used)) = self.entries.insert((layer, rank), (slice, self.tick)) {
            self.bytes -= old.weight();
            self.by_use.remove(&used);
        }
        self.by_use.insert(self.tick, (layer, rank));
        while self.bytes > self.limit_bytes && self.entries.len() > 1 {
            let (_, oldest) = self.by_use.pop_first().expect("one entry a slice");
            let (old, _) = self.entries.remove(&oldest).expect("one slice an entry");
            self.bytes -= old.weight();
        }
    }

    /// The entry of `layer` and `rank`, from the cache or, on a miss, from `load` (kept
    /// for next time).
    pub fn get_or_load<E>(
        &mut self,
        layer: u8,
        rank: u32,
        load: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        if let Some(slice) = self.get(layer, rank) {
            return Ok(slice);
        }
        let slice = Arc::new(load()?);
        self.insert(layer, rank, Arc::clone(&slice));
        Ok(slice)
    }

    /// Drops every entry not of `layer` (a new layer makes the old ones useless).
    pub fn keep_layer(&mut self, layer: u8) {
        self.entries.retain(|(l, _), _| *l == layer);
        self.by_use.retain(|_, (l, _)| *l == layer);
        self.bytes = self.entries.values().map(|(s, _)| s.weight()).sum();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(values: usize) -> Arc<Slice> {
        Arc::new(Slice::dense(0, vec![0.0; values]))
    }

    #[test]
    fn evicts_least_recently_used_within_the_bound() {
        let per = slice(100).weight();
        let mut cache = SliceCache::new(3 * per);
        for r in 0..3 {
            cache.insert(1, r, slice(100));
        }
        assert!(cache.get(1, 0).is_some()); // 0 is now the most recent
        cache.insert(1, 3, slice(100));
        assert!(cache.get(1, 1).is_none(), "1 was least recently used");
        assert!(cache.get(1, 0).is_some() && cache.get(1, 3).is_some());
        assert!(cache.bytes() <= 3 * per);
        cache.insert(2, 0, slice(100));
        cache.keep_layer(2);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.bytes(), per);
    }

    #[test]
    fn evicts_as_a_scan_for_the_oldest_would() {
        // a model that finds the least recently used by scanning every entry
        let per = slice(10).weight();
        let mut cache = SliceCache::new(50 * per);
        let mut model: Vec<((u8, u32), u64)> = Vec::new();
        let mut x = 12_345u64;
        for tick in 1..20_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let key = ((x >> 60) as u8 % 2, (x >> 33) as u32 % 90);
            if x >> 63 == 0 {
                let hit = cache.get(key.0, key.1).is_some();
                let at = model.iter().position(|(k, _)| *k == key);
                assert_eq!(hit, at.is_some(), "get {key:?} at {tick}");
                if let Some(at) = at {
                    model[at].1 = tick;
                }
            } else {
                cache.insert(key.0, key.1, slice(10));
                model.retain(|(k, _)| *k != key);
                model.push((key, tick));
                while model.len() > 50 {
                    let oldest = model.iter().enumerate().min_by_key(|(_, (_, t))| *t);
                    let at = oldest.map(|(at, _)| at).unwrap();
                    model.remove(at);
                }
            }
            assert_eq!(cache.len(), model.len());
            assert_eq!(cache.bytes(), model.len() * per);
            assert_eq!(cache.by_use.len(), model.len());
        }
        let mut held: Vec<(u8, u32)> = cache.entries.keys().copied().collect();
        let mut want: Vec<(u8, u32)> = model.iter().map(|(k, _)| *k).collect();
        held.sort_unstable();
        want.sort_unstable();
        assert_eq!(held, want);
        cache.keep_layer(1);
        assert!(cache.by_use.values().all(|(layer, _)| *layer == 1));
        assert_eq!(cache.by_use.len(), cache.len());
    }

    #[test]
    fn get_or_load_loads_once_and_passes_errors_on() {
        let mut cache = SliceCache::new(1 << 20);
        let mut loads = 0;
        for _ in 0..3 {
            let got = cache.get_or_load(1, 7, || -> Result<Slice, ()> {
                loads += 1;
                Ok(Slice::dense(0, vec![1.0; 4]))
            });
            assert_eq!(got.unwrap().values, vec![1.0; 4]);
        }
        assert_eq!(loads, 1);
        assert_eq!(cache.get_or_load(1, 8, || Err("gone")), Err("gone"));
        assert!(cache.get(1, 8).is_none());
    }
}
