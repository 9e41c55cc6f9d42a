//! `gops book`: the top layers of a complete db written as a book, for users who lack
//! the whole db's disk: layers K..N's sealed files copied as they are (data file, index,
//! record) and a manifest that says K and carries every layer's record from the full db.
//! The rest is solved on demand when read ([`crate::book::on_demand`]).

use std::path::{Path, PathBuf};

use crate::sealed::{index_file_name, record_file_name};
use crate::store::{BookInfo, LayerRecord, Manifest, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("--from-layer {from} is not a layer of the {n}-card game (1 to {n})")]
    NoSuchLayer { from: u8, n: u8 },
    #[error(
        "layer {k} of {db} is not complete: a book is made of a complete db (finish it with `gops solve`)"
    )]
    Incomplete { k: u8, db: PathBuf },
    #[error(
        "{db} is not sealed (an earlier build wrote it): run `gops seal --db {db}` first, then make the book"
    )]
    Unsealed { db: PathBuf },
    #[error(
        "{db} is a book from layer {has}: a book of it can keep layers {has} and above, not {from}"
    )]
    BelowBook { db: PathBuf, has: u8, from: u8 },
    #[error("{0} exists and is not an empty directory: choose a new --out (nothing was written)")]
    OutExists(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl BookError {
    /// Whether the error is the user's input (exit 2), not the machine's.
    pub fn is_usage(&self) -> bool {
        match self {
            BookError::Store(e) => e.is_usage(),
            _ => true,
        }
    }
}

/// What [`write_book`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct BookWritten {
    pub from_layer: u8,
    /// Bytes of the book's files.
    pub bytes: u64,
    /// Every layer's record, layer 1 first.
    pub layers: Vec<LayerRecord>,
}

/// Writes the book of layers `from_layer..=n` of the complete db `full` to `out` (a
/// path that does not exist, or an empty directory). The files are written into a
/// directory beside `out` and renamed into place once complete and opened as a book, so
/// that `out` never holds half a book. `full` is only read.
pub fn write_book(full: &Store, from_layer: u8, out: &Path) -> Result<BookWritten, BookError> {
    let n = full.n();
    if !(1..=n).contains(&from_layer) {
        return Err(BookError::NoSuchLayer {
            from: from_layer,
            n,
        });
    }
    if let Some(book) = full.book()
        && from_layer < book.from_layer
    {
        return Err(BookError::BelowBook {
            db: full.path().to_path_buf(),
            has: book.from_layer,
            from: from_layer,
        });
    }
    let mut layers = Vec::with_capacity(usize::from(n));
    for k in 1..=n {
        let record = match full.book() {
            Some(book) if k < book.from_layer => Some(book.layers[usize::from(k) - 1].clone()),
            _ => full.layer(k)?,
        };
        layers.push(record.ok_or_else(|| BookError::Incomplete {
            k,
            db: full.path().to_path_buf(),
        })?);
    }
    if !full.is_sealed_reader() {
        return Err(BookError::Unsealed {
            db: full.path().to_path_buf(),
        });
    }
    let out_is_free = match std::fs::read_dir(out) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !out_is_free {
        return Err(BookError::OutExists(out.to_path_buf()));
    }
    let partial = partial_dir(out);
    let written = copy_layers(full, from_layer, &layers, &partial);
    let written = written.and_then(|bytes| {
        // the book must open as one before it takes `out`'s place
        Store::open_existing(&partial)?;
        if out.exists() {
            std::fs::remove_dir(out).map_err(|e| crate::store::file_io(e, out))?;
        }
        std::fs::rename(&partial, out).map_err(|e| crate::store::file_io(e, out))?;
        Ok(bytes)
    });
    match written {
        Ok(bytes) => Ok(BookWritten {
            from_layer,
            bytes,
            layers,
        }),
        Err(e) => {
            // what was copied so far is of no use; the full db was never touched
            let _ = std::fs::remove_dir_all(&partial);
            Err(e.into())
        }
    }
}

/// The directory a book is written into before it is renamed to `out`.
fn partial_dir(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "book".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// Copies the sealed files of layers `from_layer..=n` of `full` into `dir` (made anew)
/// with the book's manifest; the bytes written.
fn copy_layers(
    full: &Store,
    from_layer: u8,
    layers: &[LayerRecord],
    dir: &Path,
) -> Result<u64, StoreError> {
    let io = |e: std::io::Error, path: &Path| crate::store::file_io(e, path);
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| io(e, dir))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
    for k in from_layer..=full.n() {
        let data = full.data_file_name(k);
        for name in [data, index_file_name(k), record_file_name(k)] {
            let (from, to) = (full.path().join(&name), dir.join(&name));
            std::fs::copy(&from, &to).map_err(|e| io(e, &from))?;
            std::fs::File::open(&to)
                .and_then(|f| f.sync_all())
                .map_err(|e| io(e, &to))?;
        }
    }
    let manifest = Manifest {
        book: Some(BookInfo {
            from_layer,
            layers: layers.to_vec(),
        }),
        keep_from_layer: None,
        ..full.manifest().clone()
    };
    Store::write_manifest_file(dir, &manifest)?;
    // the book's files: those copied and the manifest
    let written = std::fs::read_dir(dir).map_err(|e| io(e, dir))?;
    Ok(written
        .filter_map(|entry| entry.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum())
}
