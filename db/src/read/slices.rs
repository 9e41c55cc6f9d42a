//! How a reader reaches slices ([`super::Slices`]): whole and kept by nobody
//! ([`WholeReads`]), through one thread's caches ([`SliceReads`]), or through caches
//! that threads share ([`SharedReads`]). Through the caches, a lookup reads from the
//! store only what it needs. A slice whose record is at most
//! [`POINT_READ_MIN_BYTES`] is read whole, checked against its digest, decoded and kept
//! in a cache of slices; a larger one is read in part: its window table once
//! (kept in a cache of tables), then, for each lookup, the values of the patterns it
//! needs, as a partial slice ([`gops_common::slice_table`]). On the 47 GB 13-card win db
//! a middle-layer slice is several MB, while a lookup needs one pattern's values, or
//! those of the `k x k` children of one.
//!
//! What a part read checks is in [`gops_common::slice_table`]; the whole-record digest is
//! checked by whole reads and by `gops verify`.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use gops_common::cache::{LayerCache, SliceCache, Weigh};
use gops_common::slice::{Slice, SliceBytes};
use gops_common::slice_table::{SliceShape, SliceTable};

use gops_common::sync::lock;

use super::{QueryError, Slices, complete_slice};
use crate::book::Book;
use crate::store::files::Place;
use crate::store::{Store, StoreError};

/// Records larger than this are read in part. Below it a whole read costs about what a
/// few part reads do, and the decoded slice serves every later lookup from memory.
pub const POINT_READ_MIN_BYTES: u64 = 1 << 20;

/// Two ranges of a record closer than this are read as one.
const MERGE_GAP: u64 = 4096;

/// A slice read in part: where its record lies, and its table.
struct PartTable {
    place: Place,
    table: SliceTable,
}

impl Weigh for PartTable {
    fn weight(&self) -> usize {
        self.table.weight() + 16
    }
}

impl PartTable {
    /// The table of slice `rank` of layer `k`, from the record's header and window
    /// table at `place`.
    fn load(store: &Store, k: u8, rank: u32, place: Place) -> Result<PartTable, StoreError> {
        let damaged = |why: String| StoreError::DamagedSlice { k, rank, why };
        let shape = SliceShape::of(store.n(), store.objective(), k, rank).map_err(damaged)?;
        let header = SliceBytes::RECORD_HEADER as u64;
        let end = (header + shape.table_bytes() as u64).min(u64::from(place.len));
        let bytes = store.read_record_part(k, rank, place, 0..end)?;
        // the header's version and length; its digest is for whole reads
        SliceBytes::record_digest(&bytes).map_err(damaged)?;
        let body_len = u64::from(place.len) - header;
        let table = SliceTable::new(shape, &bytes[header as usize..], body_len).map_err(damaged)?;
        Ok(PartTable { place, table })
    }

    /// The partial slice of `patterns` (canonical patterns of the slice, in any order,
    /// repeats allowed), read from the record in as few reads as their places allow.
    fn read(
        &self,
        store: &Store,
        k: u8,
        rank: u32,
        patterns: &[usize],
    ) -> Result<Slice, QueryError> {
        let damaged = |why: String| StoreError::DamagedSlice { k, rank, why };
        let count = self.table.shape().patterns;
        let mut wanted = patterns.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        if let Some(&p) = wanted.iter().find(|&&p| p >= count) {
            return Err(damaged(format!("pattern {p} asked of a slice of {count}")).into());
        }
        let header = SliceBytes::RECORD_HEADER as u64;
        let places: Vec<Range<u64>> = wanted.iter().map(|&p| self.table.values_at(p)).collect();
        // runs of nearby ranges, each read at once
        let mut runs: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut first = 0;
        while first < places.len() {
            let (start, mut end) = (places[first].start, places[first].end);
            let mut next = first + 1;
            while next < places.len() && places[next].start <= end + MERGE_GAP {
                end = end.max(places[next].end);
                next += 1;
            }
            let bytes =
                store.read_record_part(k, rank, self.place, header + start..header + end)?;
            runs.push((start, bytes));
            first = next;
        }
        let mut reads: Vec<(usize, &[u8])> = Vec::with_capacity(wanted.len());
        let mut run = 0;
        for (&p, range) in wanted.iter().zip(&places) {
            while run + 1 < runs.len() && runs[run + 1].0 <= range.start {
                run += 1;
            }
            let (start, bytes) = &runs[run];
            let at = (range.start - start) as usize..(range.end - start) as usize;
            reads.push((p, &bytes[at]));
        }
        self.table
            .partial(&reads)
            .map_err(|why| damaged(why).into())
    }
}

/// Where one slice is read from: whole, in memory, or in part, through its table.
#[derive(Clone)]
enum SliceSource {
    Whole(Arc<Slice>),
    Parts(Arc<PartTable>),
}

impl SliceSource {
    /// Slice `rank` of layer `k` from `store` (nothing cached): in part when its record
    /// is larger than `min_bytes` (and the db keeps it in a data file), else whole.
    fn load(store: &Store, k: u8, rank: u32, min_bytes: u64) -> Result<SliceSource, QueryError> {
        if k > 0 {
            super::check_stored(store, k)?;
            let place = store.record_place(k, rank)?;
            if let Some(place) = place.filter(|p| u64::from(p.len) > min_bytes) {
                let table = PartTable::load(store, k, rank, place)?;
                return Ok(SliceSource::Parts(Arc::new(table)));
            }
        }
        Ok(SliceSource::Whole(Arc::new(complete_slice(
            store, k, rank,
        )?)))
    }

    /// The slice, holding at least the canonical patterns `patterns` gives (asked for
    /// only when the slice is read in part).
    fn slice(
        &self,
        store: &Store,
        k: u8,
        rank: u32,
        patterns: &dyn Fn() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError> {
        match self {
            SliceSource::Whole(slice) => Ok(Arc::clone(slice)),
            SliceSource::Parts(part) => Ok(Arc::new(part.read(store, k, rank, &patterns())?)),
        }
    }
}

/// Slices read whole when asked for, nothing kept: for one question.
pub struct WholeReads;

impl Slices for WholeReads {
    fn slice(
        &mut self,
        book: &Book,
        k: u8,
        rank: u32,
        _patterns: &dyn Fn() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError> {
        Ok(Arc::new(complete_slice(book.store(), k, rank)?))
    }
}

/// The slices and tables one reader keeps: half of its bytes each.
pub struct SliceReads {
    slices: SliceCache,
    tables: LayerCache<PartTable>,
    min_bytes: u64,
}

impl SliceReads {
    /// A reader keeping at most about `cache_bytes`, reading records larger than
    /// [`POINT_READ_MIN_BYTES`] in part.
    pub fn new(cache_bytes: usize) -> SliceReads {
        SliceReads::reading_in_part_above(cache_bytes, POINT_READ_MIN_BYTES)
    }

    /// The same, reading records larger than `min_bytes` in part (`u64::MAX`: none).
    pub fn reading_in_part_above(cache_bytes: usize, min_bytes: u64) -> SliceReads {
        SliceReads {
            slices: SliceCache::new(cache_bytes / 2),
            tables: LayerCache::new(cache_bytes / 2),
            min_bytes,
        }
    }

    fn min_bytes(&self) -> u64 {
        self.min_bytes
    }

    /// What is kept of slice `rank` of layer `k`, if anything.
    fn cached(&mut self, k: u8, rank: u32) -> Option<SliceSource> {
        if let Some(slice) = self.slices.get(k, rank) {
            return Some(SliceSource::Whole(slice));
        }
        self.tables.get(k, rank).map(SliceSource::Parts)
    }

    /// Keeps `source` for slice `rank` of layer `k`.
    fn keep(&mut self, k: u8, rank: u32, source: &SliceSource) {
        match source {
            SliceSource::Whole(slice) => self.slices.insert(k, rank, Arc::clone(slice)),
            SliceSource::Parts(part) => self.tables.insert(k, rank, Arc::clone(part)),
        }
    }
}

impl Slices for SliceReads {
    fn slice(
        &mut self,
        book: &Book,
        k: u8,
        rank: u32,
        patterns: &dyn Fn() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError> {
        let store = book.store();
        let source = match self.cached(k, rank) {
            Some(source) => source,
            None => {
                let source = SliceSource::load(store, k, rank, self.min_bytes)?;
                self.keep(k, rank, &source);
                source
            }
        };
        source.slice(store, k, rank, patterns)
    }
}

/// One set of caches that any number of threads read through. The lock is held only to
/// look up or insert: a slice is read and decoded outside it (two threads missing the
/// same slice both read it; the second insert replaces the first).
pub struct SharedReads(Mutex<SliceReads>);

impl SharedReads {
    pub fn new(reads: SliceReads) -> SharedReads {
        SharedReads(Mutex::new(reads))
    }

    fn reads(&self) -> MutexGuard<'_, SliceReads> {
        // a poisoned lock only means another thread panicked between two cache calls:
        // the caches are still whole
        lock(&self.0)
    }
}

impl Slices for &SharedReads {
    fn slice(
        &mut self,
        book: &Book,
        k: u8,
        rank: u32,
        patterns: &dyn Fn() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError> {
        let store = book.store();
        let cached = self.reads().cached(k, rank);
        let source = match cached {
            Some(source) => source,
            None => {
                let min_bytes = self.reads().min_bytes();
                let source = SliceSource::load(store, k, rank, min_bytes)?;
                self.reads().keep(k, rank, &source);
                source
            }
        };
        source.slice(store, k, rank, patterns)
    }
}

#[cfg(test)]
mod tests;
