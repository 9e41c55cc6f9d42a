//! A cache of slices, bounded in bytes, the least recently used going first: a worker's
//! dependency slices, the coordinator's verification reads and the read side's lookups.
//! Slices still in use stay alive through their `Arc`s even when evicted here.

use std::collections::HashMap;
use std::sync::Arc;

use crate::slice::Slice;

pub struct SliceCache {
    limit_bytes: usize,
    bytes: usize,
    tick: u64,
    entries: HashMap<(u8, u32), (Arc<Slice>, u64)>,
}

fn size_of(slice: &Slice) -> usize {
    8 * slice.values.len() + 8 * slice.windows.as_ref().map_or(0, Vec::len) + 64
}

impl SliceCache {
    pub fn new(limit_bytes: usize) -> Self {
        SliceCache {
            limit_bytes,
            bytes: 0,
            tick: 0,
            entries: HashMap::new(),
        }
    }

    pub fn get(&mut self, layer: u8, rank: u32) -> Option<Arc<Slice>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(&(layer, rank)).map(|(slice, used)| {
            *used = tick;
            Arc::clone(slice)
        })
    }

    pub fn insert(&mut self, layer: u8, rank: u32, slice: Arc<Slice>) {
        self.tick += 1;
        self.bytes += size_of(&slice);
        if let Some((old, _)) = self.entries.insert((layer, rank), (slice, self.tick)) {
            self.bytes -= size_of(&old);
        }
        while self.bytes > self.limit_bytes && self.entries.len() > 1 {
            let oldest = *self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key)
                .expect("not empty");
            let (old, _) = self.entries.remove(&oldest).expect("present");
            self.bytes -= size_of(&old);
        }
    }

    /// The slice of `layer` and `rank`, from the cache or, on a miss, from `load` (kept
    /// for next time).
    pub fn get_or_load<E>(
        &mut self,
        layer: u8,
        rank: u32,
        load: impl FnOnce() -> Result<Slice, E>,
    ) -> Result<Arc<Slice>, E> {
        if let Some(slice) = self.get(layer, rank) {
            return Ok(slice);
        }
        let slice = Arc::new(load()?);
        self.insert(layer, rank, Arc::clone(&slice));
        Ok(slice)
    }

    /// Drops every slice not of `layer` (a new layer makes the old ones useless).
    pub fn keep_layer(&mut self, layer: u8) {
        self.entries.retain(|(l, _), _| *l == layer);
        self.bytes = self.entries.values().map(|(s, _)| size_of(s)).sum();
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
        let per = size_of(&slice(100));
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
