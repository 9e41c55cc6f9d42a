//! The writer's side of the store: the live run's writes through sled (slices, copies
//! awaiting confirmation, layer records, the run counter) and the sealing of complete
//! layers ([`crate::sealed`]). A sealed reader has no sled: each of these refuses it
//! ([`StoreError::ReadOnly`]).

use std::path::Path;

use gops_common::engine::SolvedSlice;
use gops_common::slice::SliceBytes;

use super::error::io;
use super::file_io;
use super::records::read_indexed;
use super::{LEGACY_UNCONFIRMED_TREE, LayerRecord, Store, StoreError, slice_key};
use crate::sealed::{SealedEntry, SealedLayer, pending_index_file_name, record_file_name};

impl Store {
    /// Whether a process holds the db at `path` through sled (a running solve,
    /// coordinator, or a reader of an unsealed db): asked of the lock without taking it
    /// for longer than the question, and without opening the database.
    pub fn writer_running(path: &Path) -> bool {
        let Ok(file) = std::fs::File::open(path.join("db")) else {
            return false;
        };
        match fs4::FileExt::try_lock_shared(&file) {
            Ok(()) => {
                let _ = fs4::FileExt::unlock(&file);
                false
            }
            Err(_) => true,
        }
    }

    /// Counts this start of a coordinator and returns its number (1, 2, ...), flushed: ids
    /// handed out by different runs on this db then never collide.
    pub fn next_run(&self) -> Result<u64, StoreError> {
        let meta = self.live()?.db.open_tree("meta").map_err(io)?;
        let run = meta
            .update_and_fetch(b"runs", |old| {
                let n = old
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u64::from_be_bytes);
                Some((n + 1).to_be_bytes().to_vec())
            })
            .map_err(io)?
            .and_then(|b| b.as_ref().try_into().ok())
            .map_or(1, u64::from_be_bytes);
        self.flush()?;
        Ok(run)
    }

    /// Writes finished slices of layer `k` in one batch and flushes it, so a later run
    /// resumes after them even if this process is killed. A slice already stored is
    /// overwritten with identical bytes (the engine is deterministic).
    pub fn put_slices(&self, k: u8, slices: &[SolvedSlice]) -> Result<(), StoreError> {
        let bytes: Vec<SliceBytes> = slices.iter().map(SolvedSlice::to_bytes).collect();
        let batch: Vec<(u32, &SliceBytes)> = slices
            .iter()
            .zip(&bytes)
            .map(|(s, b)| (s.prize_rank, b))
            .collect();
        self.put_slice_bytes(k, &batch)
    }

    /// Stores a slice solved again because its stored copy was damaged: as
    /// [`Store::put_slice_bytes`], and if its layer is complete, the layer sealed anew
    /// pointing to it (the layer's checksum must still hold).
    pub fn put_repaired(&self, k: u8, rank: u32, slice: &SliceBytes) -> Result<(), StoreError> {
        self.put_slice_bytes(k, &[(rank, slice)])?;
        if let Some(record) = self.layer(k)? {
            self.seal_layer(&record)?;
        }
        Ok(())
    }

    /// Stores slices that arrive as bytes (from a worker), in one flushed batch: their
    /// records appended to the layer's data file and synced, then indexed. The caller has
    /// validated them. A complete layer's sealed files are not changed
    /// ([`Store::put_repaired`] changes them).
    pub fn put_slice_bytes(&self, k: u8, slices: &[(u32, &SliceBytes)]) -> Result<(), StoreError> {
        let live = self.live()?;
        let records: Vec<Vec<u8>> = slices.iter().map(|(_, s)| s.to_record()).collect();
        let places = self
            .files
            .append(k, &records)
            .map_err(|e| file_io(e, &self.files.path(k)))?;
        let mut batch = sled::Batch::default();
        for ((rank, _), place) in slices.iter().zip(places) {
            batch.insert(&slice_key(k, *rank), &place.encode());
        }
        live.index.apply_batch(batch).map_err(io)?;
        self.flush()
    }

    /// Keeps a copy of a slice that waits for a second, independent copy (replicated
    /// verification). The index entry is not flushed: a copy lost in a crash is solved
    /// again.
    pub fn put_unconfirmed(&self, k: u8, rank: u32, slice: &SliceBytes) -> Result<(), StoreError> {
        let live = self.live()?;
        let place = live
            .unconfirmed_files
            .append(k, &[slice.to_record()])
            .map_err(|e| file_io(e, &live.unconfirmed_files.path(k)))?[0];
        live.unconfirmed_index
            .insert(slice_key(k, rank), &place.encode())
            .map(|_| ())
            .map_err(io)
    }

    /// The copy of slice `rank` of layer `k` waiting for confirmation, if any.
    pub fn unconfirmed(&self, k: u8, rank: u32) -> Result<Option<SliceBytes>, StoreError> {
        let live = self.live()?;
        let Some(entry) = live.unconfirmed_index.get(slice_key(k, rank)).map_err(io)? else {
            return Ok(None);
        };
        let unreadable = |why: String| {
            StoreError::Corrupt(format!("unconfirmed slice {rank} of layer {k}: {why}"))
        };
        let bytes = match read_indexed(&live.unconfirmed_files, k, rank, &entry) {
            Ok(bytes) => bytes,
            Err(StoreError::DamagedSlice { why, .. }) => return Err(unreadable(why)),
            Err(other) => return Err(other),
        };
        SliceBytes::from_record(&bytes)
            .map(Some)
            .map_err(unreadable)
    }

    pub fn remove_unconfirmed(&self, k: u8, rank: u32) -> Result<(), StoreError> {
        self.live()?
            .unconfirmed_index
            .remove(slice_key(k, rank))
            .map(|_| ())
            .map_err(io)
    }

    /// Forgets every copy waiting for confirmation (a coordinator starting: whoever
    /// handed them in is gone with its session), and deletes their data files.
    pub fn clear_unconfirmed(&self) -> Result<(), StoreError> {
        let live = self.live()?;
        live.unconfirmed_index.clear().map_err(io)?;
        if live
            .db
            .tree_names()
            .iter()
            .any(|t| t.as_ref() == LEGACY_UNCONFIRMED_TREE)
        {
            live.db.drop_tree(LEGACY_UNCONFIRMED_TREE).map_err(io)?;
        }
        self.flush()?;
        live.unconfirmed_files
            .remove_all()
            .map_err(|e| StoreError::Io(format!("{}: {e}", self.path.display())))
    }

    /// Marks a layer complete: flushes its slices, seals it (its index and record files
    /// synced), then writes and flushes the layer record, so a complete layer is always
    /// durable and readable without sled.
    pub fn complete_layer(&self, record: &LayerRecord) -> Result<(), StoreError> {
        self.flush()?;
        self.seal_layer(record)?;
        let bytes = serde_json::to_vec(record).expect("layer record serialises");
        self.live()?.layers.insert([record.k], bytes).map_err(io)?;
        self.flush()?;
        // a rolling solve: the layer below no longer needed, and the last one makes a book
        self.roll()
    }

    /// Records a layer complete without sealing it: for simulations (the scale bench)
    /// whose layers below are only partly stored. A reader of sealed layers does not see
    /// such a layer; nothing a real run does calls this.
    #[doc(hidden)]
    pub fn complete_layer_unsealed(&self, record: &LayerRecord) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(record).expect("layer record serialises");
        self.live()?.layers.insert([record.k], bytes).map_err(io)?;
        self.flush()
    }

    pub fn flush(&self) -> Result<(), StoreError> {
        self.live()?.db.flush().map(|_| ()).map_err(io)
    }

    /// Removes the slice of `rank` from layer `k` (a damaged one, to be solved again),
    /// flushed.
    pub fn remove_slice(&self, k: u8, rank: u32) -> Result<(), StoreError> {
        let live = self.live()?;
        live.index.remove(slice_key(k, rank)).map_err(io)?;
        if let Some(legacy) = &live.legacy {
            legacy.remove(slice_key(k, rank)).map_err(io)?;
        }
        self.flush()
    }

    /// Seals every complete layer that is not sealed, or whose sealed files do not read
    /// back as its record says (a seal cut short, files damaged since); the layers
    /// sealed now.
    pub fn seal_complete_layers(&self) -> Result<Vec<u8>, StoreError> {
        let mut sealed = Vec::new();
        for k in 1..=self.n() {
            let Some(record) = self.layer(k)? else {
                continue;
            };
            if self.is_released(k)? {
                continue;
            }
            let intact = matches!(
                SealedLayer::load(&self.path, &self.manifest, k),
                Ok(Some(layer)) if layer.record == record
            );
            // a re-seal cut short (its index still pending) is done again whole
            let pending = self.path.join(pending_index_file_name(k)).exists();
            if !intact || pending {
                self.seal_layer(&record)?;
                sealed.push(k);
            }
        }
        Ok(sealed)
    }

    /// Complete layers without sealed files (an unsealed db of an earlier build): what
    /// `gops seal` would seal. Nothing for a sealed reader.
    pub fn unsealed_layers(&self) -> Result<Vec<u8>, StoreError> {
        if self.is_sealed_reader() {
            return Ok(Vec::new());
        }
        let mut unsealed = Vec::new();
        for k in 1..=self.n() {
            if self.layer(k)?.is_some()
                && !self.path.join(record_file_name(k)).exists()
                && !self.is_released(k)?
            {
                unsealed.push(k);
            }
        }
        Ok(unsealed)
    }

    /// Writes the sealed files of the complete layer `record` describes: every slice's
    /// place and digest (a format-3 db's slice kept inside sled is copied into the data
    /// file first), checked against the record's checksum before anything is written.
    fn seal_layer(&self, record: &LayerRecord) -> Result<(), StoreError> {
        let k = record.k;
        let mut entries = Vec::with_capacity(record.slices);
        for rank in 0..record.slices as u32 {
            let place = match self.record_place(k, rank)? {
                Some(place) => place,
                None => self.move_legacy_slice(k, rank)?,
            };
            let header = self.read_record_part(
                k,
                rank,
                place,
                0..u64::from(place.len).min(SliceBytes::RECORD_HEADER as u64),
            )?;
            let digest = SliceBytes::record_digest(&header)
                .map_err(|why| StoreError::DamagedSlice { k, rank, why })?;
            entries.push(SealedEntry { place, digest });
        }
        let mut checksum = gops_common::checksum::LayerChecksum::new();
        entries.iter().for_each(|e| checksum.add(&e.digest));
        if checksum.finish() != record.checksum {
            return Err(StoreError::Corrupt(format!(
                "layer {k}: its stored slices do not give its recorded checksum {}; not sealed (`gops verify` names the slices)",
                record.checksum
            )));
        }
        SealedLayer::new(record.clone(), self.files.file_name(k), entries)?
            .write(&self.path, &self.manifest)
    }

    /// Copies slice `rank` of layer `k` from a format-3 db's tree into the layer's data
    /// file and indexes it there; its place. Missing is damage.
    fn move_legacy_slice(
        &self,
        k: u8,
        rank: u32,
    ) -> Result<crate::store::files::Place, StoreError> {
        let live = self.live()?;
        let record = match &live.legacy {
            Some(legacy) => legacy.get(slice_key(k, rank)).map_err(io)?,
            None => None,
        }
        .ok_or_else(|| super::missing_slice(k, rank))?;
        let place = self
            .files
            .append(k, &[record.to_vec()])
            .map_err(|e| file_io(e, &self.files.path(k)))?[0];
        live.index
            .insert(slice_key(k, rank), &place.encode())
            .map_err(io)?;
        self.flush()?;
        Ok(place)
    }
}
