//! Parts of a stored slice's record, for the read side's point reads
//! ([`crate::read::slices`]): where the record lies, and byte ranges of it, each checked
//! to lie within the record. The whole-record digest is checked only by whole reads.

use std::ops::Range;

use super::error::io;
use super::records::{indexed_place, read_place};
use super::{Backend, Store, StoreError, slice_key};
use crate::store::files::Place;

impl Store {
    /// Where the record of slice `rank` of layer `k` lies in its layer's data file;
    /// `None` when the index does not name it (a format-3 db keeps its slices inside
    /// sled; a slice not stored).
    pub fn record_place(&self, k: u8, rank: u32) -> Result<Option<Place>, StoreError> {
        let live = match &self.backend {
            Backend::Live(live) => live,
            Backend::Sealed(_) => {
                return Ok(self
                    .sealed_layer(k)
                    .and_then(|l| l.entry(rank))
                    .map(|e| e.place));
            }
        };
        match live.index.get(slice_key(k, rank)).map_err(io)? {
            Some(entry) => indexed_place(k, rank, &entry).map(Some),
            None => Ok(None),
        }
    }

    /// Bytes `range` of the record at `place` (slice `rank` of layer `k`): a range
    /// beyond the record is damage to the slice, as bytes missing from the file are.
    pub fn read_record_part(
        &self,
        k: u8,
        rank: u32,
        place: Place,
        range: Range<u64>,
    ) -> Result<Vec<u8>, StoreError> {
        if range.start > range.end || range.end > u64::from(place.len) {
            return Err(StoreError::DamagedSlice {
                k,
                rank,
                why: format!(
                    "bytes {}..{} asked of a record of {}",
                    range.start, range.end, place.len
                ),
            });
        }
        let part = Place {
            offset: place.offset + range.start,
            len: (range.end - range.start) as u32,
        };
        read_place(&self.files, k, rank, part)
    }
}
