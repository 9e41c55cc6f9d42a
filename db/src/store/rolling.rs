//! A rolling solve (`--keep-from-layer K`): the data of a layer below K removed once the
//! layer above it is sealed, its record kept, so that the disk holds the layers kept and
//! two adjacent layers at most; the finished db is a book of layers K..N whose manifest
//! carries every layer's record, as one `gops book` writes ([`crate::book`]).
//!
//! Every step is done again, harmlessly, when a run opens the db: a crash between a
//! layer's record and its release below, or between the last record and the book's
//! manifest, is finished by the next start.

use std::path::Path;

use crate::sealed::{index_file_name, pending_index_file_name, record_file_name};

use super::error::{file_io, io};
use super::{BookInfo, MANIFEST_KEY, Manifest, Store, StoreError};

impl Store {
    /// Makes this solve a rolling one that keeps layers `keep..=n`, applied to the
    /// layers already complete too, and recorded in the manifest, so that a resume
    /// without the flag goes on rolling. A db rolling already may raise its K (it keeps
    /// fewer layers); it may lower it only while no layer it would keep is released.
    pub fn set_keep_from_layer(&mut self, keep: u8) -> Result<(), StoreError> {
        let n = self.n();
        if !(1..=n).contains(&keep) {
            return Err(StoreError::KeepOutOfRange { n, want: keep });
        }
        if let Some(found) = self.manifest.keep_from_layer {
            if found == keep {
                return Ok(());
            }
            for k in keep..found {
                if self.is_released(k)? {
                    return Err(StoreError::KeepMismatch {
                        path: self.path.clone(),
                        n,
                        found,
                        want: keep,
                    });
                }
            }
        }
        let manifest = Manifest {
            keep_from_layer: Some(keep),
            ..self.manifest.clone()
        };
        self.write_manifest(&manifest)?;
        self.manifest = manifest;
        self.roll()
    }

    /// The lowest layer a rolling solve keeps; `None` for a full solve.
    pub fn keep_from_layer(&self) -> Option<u8> {
        self.manifest.keep_from_layer
    }

    /// Whether layer `k`'s data is released (or due to be): the db rolls, keeps layers
    /// from above `k`, and the layer above `k` is complete, so nothing reads `k` again.
    pub fn is_released(&self, k: u8) -> Result<bool, StoreError> {
        let Some(keep) = self.manifest.keep_from_layer else {
            return Ok(false);
        };
        Ok(k < keep && k < self.n() && self.layer(k)?.is_some() && self.layer(k + 1)?.is_some())
    }

    /// For a rolling solve: releases every layer due ([`Store::is_released`]), and once
    /// every layer is complete, makes the db a book (its manifest's `book`). Nothing for
    /// a full solve or a reader.
    pub(super) fn roll(&self) -> Result<(), StoreError> {
        let Some(keep) = self.manifest.keep_from_layer else {
            return Ok(());
        };
        if self.is_sealed_reader() {
            return Ok(());
        }
        for k in 1..keep.min(self.n()) {
            if self.is_released(k)? {
                self.release_layer(k)?;
            }
        }
        let records: Option<Vec<_>> = (1..=self.n())
            .map(|k| self.layer(k))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .collect();
        let Some(layers) = records else {
            return Ok(());
        };
        let book = Some(BookInfo {
            from_layer: keep,
            layers,
        });
        if Self::peek_manifest(&self.path)?.is_some_and(|m| m.book == book) {
            return Ok(());
        }
        // the in-memory manifest is left as it is: this handle still reads the db as
        // its solve's; a reader opened from now on reads it as a book
        self.write_manifest(&Manifest {
            book,
            ..self.manifest.clone()
        })
    }

    /// Removes layer `k`'s data: first its sealed record file, so that no reader opened
    /// from now on takes it as sealed, then its index file, its index entries and its
    /// data file. Its record stays in sled (and in the book's manifest at the end).
    fn release_layer(&self, k: u8) -> Result<(), StoreError> {
        let live = self.live()?;
        remove_present(&self.path, &record_file_name(k))?;
        remove_present(&self.path, &index_file_name(k))?;
        remove_present(&self.path, &pending_index_file_name(k))?;
        let mut batch = sled::Batch::default();
        for key in live.index.scan_prefix([k]).keys() {
            batch.remove(key.map_err(io)?);
        }
        live.index.apply_batch(batch).map_err(io)?;
        self.flush()?;
        self.files
            .remove(k)
            .map_err(|e| file_io(e, &self.files.path(k)))?;
        std::fs::File::open(&self.path)
            .and_then(|d| d.sync_all())
            .map_err(|e| file_io(e, &self.path))
    }

    /// Writes `manifest` where the db keeps it: in sled (what a writer reads) and in
    /// its manifest file (what readers read).
    fn write_manifest(&self, manifest: &Manifest) -> Result<(), StoreError> {
        let live = self.live()?;
        let meta = live.db.open_tree("meta").map_err(io)?;
        let bytes = serde_json::to_vec(manifest).expect("manifest serialises");
        meta.insert(MANIFEST_KEY, bytes).map_err(io)?;
        self.flush()?;
        Self::write_manifest_file(&self.path, manifest)
    }
}

/// Removes `dir/name` if it is there.
fn remove_present(dir: &Path, name: &str) -> Result<(), StoreError> {
    let path = dir.join(name);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(file_io(e, &path)),
    }
}

#[cfg(test)]
mod tests;
