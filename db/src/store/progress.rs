//! One record of a layer's progress: which slices are stored (with their digests), the
//! largest certificate gap and the values stored so far. Built from the store when a run
//! resumes, updated as slices are stored, and turned into the layer's durable record when
//! the last slice arrives. Every driver of a solve keeps its bookkeeping here, so the
//! checksum of a layer is computed in one place.

use gops_common::checksum::Digest;
use gops_common::plan::LayerSize;
use rayon::prelude::*;

use crate::store::{LayerRecord, Store, StoreError};

#[derive(Clone, Debug)]
pub struct LayerProgress {
    size: LayerSize,
    digests: Vec<Option<Digest>>,
    /// Per slice: its largest gap, its stored values and its matrix games (a replaced
    /// slice's are replaced).
    gaps: Vec<f64>,
    values: Vec<u64>,
    games: Vec<u64>,
    stored: usize,
}

impl LayerProgress {
    /// Nothing stored yet.
    pub fn empty(size: LayerSize) -> LayerProgress {
        LayerProgress {
            digests: vec![None; size.slices],
            gaps: vec![0.0; size.slices],
            values: vec![0; size.slices],
            games: vec![0; size.slices],
            size,
            stored: 0,
        }
    }

    /// The progress of layer `size.k` as the store holds it (every stored slice is read
    /// and checked against its digest).
    pub fn resume(store: &Store, size: LayerSize) -> Result<LayerProgress, StoreError> {
        let (progress, damaged) = LayerProgress::resume_sparing(store, size)?;
        match damaged.first() {
            Some(&(rank, ref why)) => Err(StoreError::DamagedSlice {
                k: size.k,
                rank,
                why: why.clone(),
            }),
            None => Ok(progress),
        }
    }

    /// [`LayerProgress::resume`], leaving out the stored slices that fail their digest
    /// or shape: those are returned (rank and why) to be removed and solved again.
    pub fn resume_sparing(
        store: &Store,
        size: LayerSize,
    ) -> Result<(LayerProgress, Vec<(u32, String)>), StoreError> {
        let mut progress = LayerProgress::empty(size);
        let mut damaged = Vec::new();
        // each slice read, its digest checked and decoded on all cores (a resume in the
        // middle of a large layer reads gigabytes), then recorded in rank order
        let read: Vec<_> = store
            .stored_ranks(size.k)?
            .into_par_iter()
            .map(|rank| {
                let summary = store.require_slice(size.k, rank).map(|record| {
                    let values = record.slice.stored_values().count() as u64;
                    (record.digest, record.max_gap, values, record.games)
                });
                (rank, summary)
            })
            .collect();
        for (rank, summary) in read {
            match summary {
                Ok((digest, max_gap, values, games)) => {
                    progress.record(rank, digest, max_gap, values, games);
                }
                Err(StoreError::DamagedSlice { why, .. }) => damaged.push((rank, why)),
                Err(e) => return Err(e),
            }
        }
        Ok((progress, damaged))
    }

    pub fn size(&self) -> &LayerSize {
        &self.size
    }

    pub fn k(&self) -> u8 {
        self.size.k
    }

    /// Slices stored so far.
    pub fn stored(&self) -> usize {
        self.stored
    }

    pub fn is_complete(&self) -> bool {
        self.stored == self.size.slices
    }

    /// The digest of the stored slice of `rank`, if it is stored (and in range).
    pub fn digest(&self, rank: u32) -> Option<&Digest> {
        self.digests.get(rank as usize).and_then(Option::as_ref)
    }

    /// The largest certificate gap recorded for the stored slice of `rank`.
    pub fn gap(&self, rank: u32) -> Option<f64> {
        self.digest(rank)?;
        self.gaps.get(rank as usize).copied()
    }

    /// Whether the stored slice of `rank` has this digest and this largest gap, bit for
    /// bit (another copy of the same claim: a duplicate, not a dispute).
    pub fn holds(&self, rank: u32, digest: &Digest, max_gap: f64) -> bool {
        self.digest(rank) == Some(digest)
            && self.gap(rank).map(f64::to_bits) == Some(max_gap.to_bits())
    }

    /// The ranks not stored yet, ascending.
    pub fn missing(&self) -> Vec<u32> {
        (0..self.size.slices as u32)
            .filter(|&r| self.digests[r as usize].is_none())
            .collect()
    }

    /// Records a stored slice (its digest, largest gap, stored values and matrix games);
    /// false (and nothing changes) if `rank` was recorded before. Panics if `rank` is
    /// outside the layer: callers check ranks they were sent.
    pub fn record(
        &mut self,
        rank: u32,
        digest: Digest,
        max_gap: f64,
        values: u64,
        games: u64,
    ) -> bool {
        let slot = &mut self.digests[rank as usize];
        if slot.is_some() {
            return false;
        }
        *slot = Some(digest);
        self.stored += 1;
        self.gaps[rank as usize] = max_gap;
        self.values[rank as usize] = values;
        self.games[rank as usize] = games;
        true
    }

    /// Replaces the record of a stored slice (one found wrong and solved again); records
    /// it if it was not stored.
    pub fn replace(&mut self, rank: u32, digest: Digest, max_gap: f64, values: u64, games: u64) {
        if self.digests[rank as usize].take().is_some() {
            self.stored -= 1;
        }
        self.record(rank, digest, max_gap, values, games);
    }

    /// The layer's record, once every slice is stored.
    pub fn layer_record(&self) -> Option<LayerRecord> {
        if !self.is_complete() {
            return None;
        }
        let digests = self.digests.iter().flatten();
        let max_gap = self.gaps.iter().copied().fold(0.0, f64::max);
        Some(LayerRecord::complete(
            &self.size,
            digests,
            max_gap,
            self.values.iter().sum(),
            self.games.iter().sum(),
        ))
    }

    /// Marks the layer complete in the store (its slices flushed first, then the record)
    /// and returns the record; `None` if slices are still missing.
    pub fn complete(&self, store: &Store) -> Result<Option<LayerRecord>, StoreError> {
        let Some(record) = self.layer_record() else {
            return Ok(None);
        };
        store.complete_layer(&record)?;
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::checksum::digest_bytes;
    use gops_common::objective::Objective;

    #[test]
    fn a_layer_is_complete_once_every_slice_is_recorded_once() {
        let size = LayerSize::of(4, 2, Objective::Points);
        let mut progress = LayerProgress::empty(size);
        assert_eq!(progress.missing().len(), size.slices);
        for rank in 0..size.slices as u32 {
            assert!(progress.layer_record().is_none());
            assert_eq!(progress.gap(rank), None);
            assert!(progress.record(rank, digest_bytes(&[rank as u8]), 1e-12, 3, 10));
            assert_eq!(progress.gap(rank), Some(1e-12));
            assert!(progress.holds(rank, &digest_bytes(&[rank as u8]), 1e-12));
            assert!(!progress.holds(rank, &digest_bytes(&[rank as u8]), 2e-12));
            assert!(!progress.record(rank, digest_bytes(b"other"), 1.0, 3, 99));
        }
        let record = progress.layer_record().expect("complete");
        assert_eq!(record.max_gap, 1e-12);
        assert_eq!(record.stored_values, 3 * size.slices as u64);
        assert_eq!(record.matrix_games, Some(10 * size.slices as u64));
        assert!(progress.missing().is_empty());
        // the checksum folds the digests in rank order, not in arrival order
        let mut reversed = LayerProgress::empty(size);
        for rank in (0..size.slices as u32).rev() {
            reversed.record(rank, digest_bytes(&[rank as u8]), 1e-12, 3, 10);
        }
        assert_eq!(reversed.layer_record().unwrap().checksum, record.checksum);
        // a replaced slice counts once, with its new digest, gap, values and games
        let mut fixed = progress.clone();
        fixed.replace(0, digest_bytes(b"fixed"), 1e-13, 2, 4);
        let after = fixed.layer_record().unwrap();
        assert_eq!(fixed.stored(), size.slices);
        assert_eq!(fixed.digest(0), Some(&digest_bytes(b"fixed")));
        assert_eq!(fixed.gap(0), Some(1e-13));
        assert_ne!(after.checksum, record.checksum);
        assert_eq!(after.stored_values, record.stored_values - 1);
        assert_eq!(after.matrix_games, Some(10 * size.slices as u64 - 6));
        assert_eq!(after.max_gap, 1e-12);
    }
}
