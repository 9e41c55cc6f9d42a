//! A book's store ([`crate::book`]): its sealed layers, checked against the records its
//! manifest carries from the full db. The layers below it are the book's to solve
//! ([`crate::book::Book`]), not the store's.

use std::path::Path;

use crate::sealed::{SealedLayer, SealedLayers, record_file_name};

use super::{BookInfo, Manifest, Store, StoreError};

impl Store {
    /// Opens the book at `path` (its manifest's `book` is `book`): layers
    /// `book.from_layer..=n` sealed, each record the one the manifest names; nothing
    /// written.
    pub(super) fn open_book(
        path: &Path,
        manifest: Manifest,
        book: BookInfo,
    ) -> Result<Store, StoreError> {
        let n = manifest.n;
        let bad = |why: String| StoreError::Corrupt(format!("book manifest: {why}"));
        if !(1..=n).contains(&book.from_layer) {
            return Err(bad(format!("lowest layer {} of {n}", book.from_layer)));
        }
        let ks: Vec<u8> = book.layers.iter().map(|r| r.k).collect();
        if ks != (1..=n).collect::<Vec<u8>>() {
            return Err(bad(format!("records of layers {ks:?}, not 1 to {n}")));
        }
        let mut sealed = SealedLayers::none(n);
        for k in book.from_layer..=n {
            let layer =
                SealedLayer::load(path, &manifest, k)?.ok_or_else(|| StoreError::DamagedLayer {
                    k,
                    file: path.join(record_file_name(k)),
                    why: "missing: the book keeps this layer".into(),
                })?;
            if layer.record != book.layers[usize::from(k) - 1] {
                return Err(StoreError::DamagedLayer {
                    k,
                    file: path.join(record_file_name(k)),
                    why: "not the record the book's manifest gives for this layer".into(),
                });
            }
            sealed.set(k, layer);
        }
        Ok(Self::reading_sealed(path, manifest, sealed))
    }

    /// The name of layer `k`'s data file within the db directory.
    pub fn data_file_name(&self, k: u8) -> String {
        self.files.file_name(k)
    }

    /// What the db's manifest says of it as a book; `None` for a full db.
    pub fn book(&self) -> Option<&BookInfo> {
        self.manifest.book.as_ref()
    }
}
