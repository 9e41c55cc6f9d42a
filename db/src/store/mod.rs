//! The run's one store (DESIGN §5): a sled database behind a typed handle, with the
//! slices' bytes in data files beside it. Nothing outside this module sees sled or raw
//! bytes.
//!
//! Trees: `meta` holds the manifest (N, objective, format version); `slice_index` maps
//! each stored slice, keyed by (layer, prize-set rank) big-endian so a layer is one key
//! range, to its record's place in the layer's data file ([`crate::store::files`]);
//! `layers` holds a record per *complete* layer (checksum, certificate maximum), written
//! only after the layer's slices are flushed. Slice bytes stay out of sled because sled
//! keeps in memory what it reads: with them inside, a process's memory followed the
//! bytes it had read (11 GB for the 14-card game) whatever its cache settings.
//!
//! A db of format 3 (slices inside sled, in the `slices` tree) is read as it is: its
//! slices are found there when the index lacks them. Opening it to solve marks it
//! format 4, so that an older build, which would not see the new slices, refuses it.
//!
//! A complete layer is also sealed ([`crate::sealed`]): its index and record as files,
//! through which [`Store::open_existing`] reads a db without sled, its lock or a write.
//!
//! Layout: this file holds the handle, its opening and its reads; [`live`] the writer's
//! writes and the sealing; [`manifest`] the format history, the manifest and the
//! records; [`error`] the errors; [`records`] reading a record from its place; [`parts`]
//! reading parts of one (the read side's point reads).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gops_common::cache::SliceCache;
use gops_common::checksum::Digest;
use gops_common::engine::{LayerEngine, terminal_slice};
use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_common::slice::Slice;
pub use gops_common::slice::SliceBytes;

use crate::sealed::SealedLayers;
use crate::store::files::{Place, SliceFiles};

mod book;
mod error;
pub mod files;
mod live;
mod manifest;
mod parts;
pub mod progress;
mod records;
mod rolling;
pub mod sealed;

pub use error::StoreError;
pub(crate) use error::file_io;
use error::{io, missing_slice};
pub use manifest::{
    BookInfo, FORMAT_4, FORMAT_5, FORMAT_VERSION, LEGACY_FORMAT_VERSION, LayerRecord, Manifest,
    REACHABLE_WIN_FORMAT,
};
use manifest::{MANIFEST_FILE, MANIFEST_KEY};
use records::{ranks_in, read_indexed, read_place};

/// A stored slice, verified against its digest when read.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceRecord {
    pub slice: Slice,
    pub max_gap: f64,
    pub games: u64,
    pub digest: Digest,
}

/// Where a stored slice's record lies in the db directory ([`Store::locate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The data file's name within the db directory.
    pub file_name: String,
    pub place: Place,
    /// The digest the record's header names (its body is checked by whoever reads it).
    pub digest: Digest,
}

/// The typed handle over one db directory: a live run's sled store (the writer's, or a
/// reader's of a db without sealed layers), or the sealed layers of a db read without
/// sled ([`crate::sealed`]).
pub struct Store {
    path: PathBuf,
    files: SliceFiles,
    manifest: Manifest,
    backend: Backend,
}

enum Backend {
    Live(Live),
    /// Sealed layers; read only, no lock, nothing written.
    Sealed(SealedLayers),
}

/// The sled trees of a live store.
struct Live {
    db: sled::Db,
    /// (layer, rank) -> [`Place`] of the slice's record in the store's files.
    index: sled::Tree,
    /// A format-3 db's slices, stored inside sled (read only; `None` in a newer db).
    legacy: Option<sled::Tree>,
    layers: sled::Tree,
    /// Copies of slices waiting for a second copy (replicated verification): index and
    /// bytes, as for stored slices.
    unconfirmed_index: sled::Tree,
    unconfirmed_files: SliceFiles,
}

/// The tree of a format-3 db's slices.
const LEGACY_SLICES_TREE: &[u8] = b"slices";
/// The tree of a format-3 db's unconfirmed copies (dropped when they are cleared).
const LEGACY_UNCONFIRMED_TREE: &[u8] = b"unconfirmed";

fn slice_key(k: u8, rank: u32) -> [u8; 5] {
    let r = rank.to_be_bytes();
    [k, r[0], r[1], r[2], r[3]]
}

impl Store {
    /// The manifest of the db at `path`, read from its manifest file without opening
    /// the database. `Ok(None)` when the directory has no manifest file yet.
    pub fn peek_manifest(path: &Path) -> Result<Option<Manifest>, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        if !path.is_dir() {
            return Err(StoreError::NotADatabase(path.to_path_buf()));
        }
        match std::fs::read(path.join(MANIFEST_FILE)) {
            Ok(bytes) => Self::decode_manifest(&bytes).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::Io(format!(
                "{}: {e}",
                path.join(MANIFEST_FILE).display()
            ))),
        }
    }

    /// Opens the db at `path` for solving the `n`-card game, creating it if it does not
    /// exist; refuses a db made for another game before opening it.
    pub fn open_or_create(path: &Path, n: u8, objective: Objective) -> Result<Store, StoreError> {
        let want = Manifest {
            format_version: FORMAT_VERSION,
            n,
            objective,
            created_by: format!("gops {}", env!("CARGO_PKG_VERSION")),
            book: None,
            keep_from_layer: None,
        };
        if path.exists() {
            if let Some(found) = Self::peek_manifest(path)? {
                // a finished rolling solve is a book, and still its solve's db
                if found.book.is_some() && found.keep_from_layer.is_none() {
                    return Err(StoreError::IsBook(path.to_path_buf()));
                }
                Self::check_same_game(path, &found, &want)?;
            } else if !Self::looks_like_sled(path) && !Self::is_empty_dir(path) {
                return Err(StoreError::NotADatabase(path.to_path_buf()));
            }
        }
        let db = Self::open_sled(path)?;
        let fresh = db.tree_names().len() == 1 && db.is_empty();
        if !fresh && !db.tree_names().iter().any(|name| name.as_ref() == b"meta") {
            // a sled database of someone else's: leave it alone
            return Err(StoreError::NotADatabase(path.to_path_buf()));
        }
        let meta = db.open_tree("meta").map_err(io)?;
        let manifest = match meta.get(MANIFEST_KEY).map_err(io)? {
            Some(bytes) => Self::decode_manifest(&bytes)?,
            None => {
                let bytes = serde_json::to_vec(&want).expect("manifest serialises");
                meta.insert(MANIFEST_KEY, bytes).map_err(io)?;
                db.flush().map_err(io)?;
                want.clone()
            }
        };
        Self::check_same_game(path, &manifest, &want)?;
        let manifest = if manifest.format_version == LEGACY_FORMAT_VERSION {
            Self::upgrade_manifest(path, &meta, &db, manifest)?
        } else {
            manifest
        };
        let store = Self::finish_open(path, db, manifest)?;
        // a db of an earlier build (or one whose sealing a crash cut short): its complete
        // layers sealed now, so that readers need no lock; a rolling solve's releases
        // that a crash cut short done now
        store.seal_complete_layers()?;
        store.roll()?;
        Ok(store)
    }

    /// Marks a format-3 db as format 4 (in sled and in its manifest file) before anything
    /// is stored the new way: its old slices stay where they are and are still read. Not
    /// format 5: its values are of format 4's arithmetic, and the rest of it is solved so.
    fn upgrade_manifest(
        path: &Path,
        meta: &sled::Tree,
        db: &sled::Db,
        old: Manifest,
    ) -> Result<Manifest, StoreError> {
        let manifest = Manifest {
            format_version: FORMAT_4,
            ..old
        };
        let bytes = serde_json::to_vec(&manifest).expect("manifest serialises");
        meta.insert(MANIFEST_KEY, bytes).map_err(io)?;
        db.flush().map_err(io)?;
        Self::write_manifest_file(path, &manifest)?;
        Ok(manifest)
    }

    fn check_same_game(path: &Path, found: &Manifest, want: &Manifest) -> Result<(), StoreError> {
        if found.n != want.n || found.objective != want.objective {
            return Err(StoreError::Mismatch {
                path: path.to_path_buf(),
                n: found.n,
                objective: found.objective.to_string(),
                want_n: want.n,
                want_objective: want.objective.to_string(),
            });
        }
        Ok(())
    }

    /// Opens an existing db to read it, whatever game it holds. A db with sealed layers
    /// is read through them alone: no lock taken, nothing in the directory created or
    /// changed, and any number of readers at once, a running writer included; its layers
    /// that are not sealed yet read as incomplete. A db without sealed layers (written
    /// by an earlier build, or a run that has completed no layer yet) is opened the old
    /// way, through sled, when no other process holds it ([`Store::unsealed_layers`]
    /// then says what `gops seal` would seal); while a writer holds it, it reads as a db
    /// with no complete layer.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        let Some(manifest) = Self::peek_manifest(path)? else {
            return Self::open_live(path);
        };
        if let Some(book) = &manifest.book {
            let book = book.clone();
            return Self::open_book(path, manifest, book);
        }
        let sealed = SealedLayers::load(path, &manifest)?;
        if sealed.any() {
            return Ok(Self::reading_sealed(path, manifest, sealed));
        }
        match Self::open_live(path) {
            Err(StoreError::Locked(_)) => Ok(Self::reading_sealed(path, manifest, sealed)),
            other => other,
        }
    }

    fn reading_sealed(path: &Path, manifest: Manifest, sealed: SealedLayers) -> Store {
        Store {
            path: path.to_path_buf(),
            files: SliceFiles::reading(path, "slices"),
            manifest,
            backend: Backend::Sealed(sealed),
        }
    }

    /// Opens an existing db through sled (its lock taken), whatever game it holds: the
    /// writer's way, for sealing it or counting a stopped run's slices.
    pub fn open_live(path: &Path) -> Result<Store, StoreError> {
        let file_manifest = Self::peek_manifest(path)?;
        if !Self::looks_like_sled(path) {
            return Err(StoreError::NotADatabase(path.to_path_buf()));
        }
        let db = Self::open_sled(path)?;
        if !db.tree_names().iter().any(|name| name.as_ref() == b"meta") {
            return Err(StoreError::NotADatabase(path.to_path_buf()));
        }
        let meta = db.open_tree("meta").map_err(io)?;
        let Some(bytes) = meta.get(MANIFEST_KEY).map_err(io)? else {
            return Err(StoreError::NotADatabase(path.to_path_buf()));
        };
        let manifest = Self::decode_manifest(&bytes)?;
        if let Some(file) = file_manifest
            && (file.n != manifest.n || file.objective != manifest.objective)
        {
            return Err(StoreError::Corrupt(format!(
                "{MANIFEST_FILE} says {}-card {}, the database says {}-card {}",
                file.n, file.objective, manifest.n, manifest.objective
            )));
        }
        Self::finish_open(path, db, manifest)
    }

    /// Whether this handle reads sealed layers only (no sled, nothing written).
    pub fn is_sealed_reader(&self) -> bool {
        matches!(self.backend, Backend::Sealed(_))
    }

    fn looks_like_sled(path: &Path) -> bool {
        path.join("conf").is_file() && path.join("db").is_file()
    }

    fn is_empty_dir(path: &Path) -> bool {
        path.read_dir()
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
    }

    /// Opens sled. A lock still held is retried for up to two seconds: a handle this
    /// process just dropped releases it from sled's background thread, a moment later.
    fn open_sled(path: &Path) -> Result<sled::Db, StoreError> {
        let mut attempts = 0;
        loop {
            let opened = sled::Config::new()
                .path(path)
                .cache_capacity(64 << 20)
                .open();
            match opened {
                Ok(db) => return Ok(db),
                Err(sled::Error::Io(ref e))
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.to_string().contains("lock") =>
                {
                    attempts += 1;
                    if attempts >= 20 {
                        return Err(StoreError::Locked(path.to_path_buf()));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(other) => return Err(io(other)),
            }
        }
    }

    /// Completes an open: the trees, and the manifest file if it is missing (a new db,
    /// or one whose creation was cut short).
    fn finish_open(path: &Path, db: sled::Db, manifest: Manifest) -> Result<Store, StoreError> {
        if !path.join(MANIFEST_FILE).exists() {
            Self::write_manifest_file(path, &manifest)?;
        }
        let has_tree = |name: &[u8]| db.tree_names().iter().any(|t| t.as_ref() == name);
        let legacy = if has_tree(LEGACY_SLICES_TREE) {
            Some(db.open_tree(LEGACY_SLICES_TREE).map_err(io)?)
        } else {
            None
        };
        Ok(Store {
            path: path.to_path_buf(),
            files: SliceFiles::new(path, "slices"),
            manifest,
            backend: Backend::Live(Live {
                index: db.open_tree("slice_index").map_err(io)?,
                legacy,
                layers: db.open_tree("layers").map_err(io)?,
                unconfirmed_index: db.open_tree("unconfirmed_index").map_err(io)?,
                unconfirmed_files: SliceFiles::new(path, "unconfirmed"),
                db,
            }),
        })
    }

    /// The live store's trees; a sealed reader cannot write.
    fn live(&self) -> Result<&Live, StoreError> {
        match &self.backend {
            Backend::Live(live) => Ok(live),
            Backend::Sealed(_) => Err(StoreError::ReadOnly(self.path.clone())),
        }
    }

    /// Layer `k` if this handle reads it sealed.
    fn sealed_layer(&self, k: u8) -> Option<&crate::sealed::SealedLayer> {
        match &self.backend {
            Backend::Sealed(layers) => layers.get(k),
            Backend::Live(_) => None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn n(&self) -> u8 {
        self.manifest.n
    }

    pub fn objective(&self) -> Objective {
        self.manifest.objective
    }

    /// The kernel's arithmetic of this db's values (from its format).
    pub fn pivot_start(&self) -> PivotStart {
        self.manifest.pivot_start()
    }

    /// The raw record of slice `rank` of layer `k`: from its data file through the
    /// sealed index (its digest the one the index names) or sled's, or from a format-3
    /// db's tree.
    fn record(&self, k: u8, rank: u32) -> Result<Option<Vec<u8>>, StoreError> {
        let live = match &self.backend {
            Backend::Live(live) => live,
            Backend::Sealed(_) => {
                let Some(entry) = self.sealed_layer(k).and_then(|l| l.entry(rank)) else {
                    return Ok(None);
                };
                let bytes = read_place(&self.files, k, rank, entry.place)?;
                let header = &bytes[..bytes.len().min(SliceBytes::RECORD_HEADER)];
                let digest = SliceBytes::record_digest(header)
                    .map_err(|why| StoreError::DamagedSlice { k, rank, why })?;
                if digest != entry.digest {
                    return Err(StoreError::DamagedSlice {
                        k,
                        rank,
                        why: format!(
                            "the record at {} of {} is not the slice {} names",
                            entry.place.offset,
                            self.files.path(k).display(),
                            crate::sealed::index_file_name(k)
                        ),
                    });
                }
                return Ok(Some(bytes));
            }
        };
        let key = slice_key(k, rank);
        if let Some(entry) = live.index.get(key).map_err(io)? {
            return read_indexed(&self.files, k, rank, &entry).map(Some);
        }
        match &live.legacy {
            Some(legacy) => Ok(legacy.get(key).map_err(io)?.map(|bytes| bytes.to_vec())),
            None => Ok(None),
        }
    }

    /// The stored slice of layer `k`, prize rank `rank`, checked against its digest.
    pub fn slice(&self, k: u8, rank: u32) -> Result<Option<SliceRecord>, StoreError> {
        match self.record(k, rank)? {
            None => Ok(None),
            Some(bytes) => self
                .decode_record(k, rank, &bytes)
                .map(Some)
                .map_err(|why| StoreError::DamagedSlice { k, rank, why }),
        }
    }

    /// The stored slice of layer `k`, rank `rank`, as checked bytes (not decoded).
    pub fn slice_bytes(&self, k: u8, rank: u32) -> Result<Option<SliceBytes>, StoreError> {
        let Some(bytes) = self.record(k, rank)? else {
            return Ok(None);
        };
        SliceBytes::from_record(&bytes)
            .map(Some)
            .map_err(|why| StoreError::DamagedSlice { k, rank, why })
    }

    /// Where the record of slice `rank` of layer `k` lies, for a reader of the db
    /// directory (a worker on a shared file system), with the digest its header names;
    /// `None` for a slice kept inside sled (a format-3 db). Missing or unreadable is
    /// damage, as for [`Store::slice`].
    pub fn locate(&self, k: u8, rank: u32) -> Result<Option<Located>, StoreError> {
        let Some(place) = self.record_place(k, rank)? else {
            return match self.live().ok().and_then(|live| live.legacy.as_ref()) {
                Some(legacy) if legacy.contains_key(slice_key(k, rank)).map_err(io)? => Ok(None),
                _ => Err(missing_slice(k, rank)),
            };
        };
        let header = u64::from(place.len).min(SliceBytes::RECORD_HEADER as u64);
        let header_bytes = self.read_record_part(k, rank, place, 0..header)?;
        let digest = SliceBytes::record_digest(&header_bytes)
            .map_err(|why| StoreError::DamagedSlice { k, rank, why })?;
        Ok(Some(Located {
            file_name: self.files.file_name(k),
            place,
            digest,
        }))
    }

    /// [`Store::slice`] of a slice that must be there (a complete layer's, or one listed
    /// as stored): missing is damage.
    pub fn require_slice(&self, k: u8, rank: u32) -> Result<SliceRecord, StoreError> {
        self.slice(k, rank)?.ok_or_else(|| missing_slice(k, rank))
    }

    /// [`Store::slice_bytes`] of a slice that must be there: missing is damage.
    pub fn require_slice_bytes(&self, k: u8, rank: u32) -> Result<SliceBytes, StoreError> {
        self.slice_bytes(k, rank)?
            .ok_or_else(|| missing_slice(k, rank))
    }

    /// The slices of layer `k - 1` that the slices of `ranks` in layer `k` read, by prize
    /// rank, through `cache` (layer 0 is the terminal slice). They must be stored.
    pub fn slices_below(
        &self,
        cache: &mut SliceCache,
        k: u8,
        ranks: impl IntoIterator<Item = u32>,
    ) -> Result<HashMap<u32, Arc<Slice>>, StoreError> {
        let mut below = HashMap::new();
        for rank in ranks {
            for dependency in LayerEngine::dependency_ranks(rank, k) {
                if below.contains_key(&dependency) {
                    continue;
                }
                below.insert(dependency, self.slice_below(cache, k, dependency)?);
            }
        }
        Ok(below)
    }

    /// Slice `rank` of layer `k - 1` (below layer 1, the terminal slice), through
    /// `cache`. It must be stored.
    pub fn slice_below(
        &self,
        cache: &mut SliceCache,
        k: u8,
        rank: u32,
    ) -> Result<Arc<Slice>, StoreError> {
        cache.get_or_load(k - 1, rank, || {
            if k == 1 {
                Ok(terminal_slice())
            } else {
                self.require_slice(k - 1, rank).map(|r| r.slice)
            }
        })
    }

    /// Prize ranks of layer `k` that have a stored slice, ascending (every rank of a
    /// sealed layer; none of a layer a sealed reader does not see sealed).
    pub fn stored_ranks(&self, k: u8) -> Result<Vec<u32>, StoreError> {
        let live = match &self.backend {
            Backend::Live(live) => live,
            Backend::Sealed(_) => {
                let count = self.sealed_layer(k).map_or(0, |l| l.entries().len());
                return Ok((0..count as u32).collect());
            }
        };
        let mut ranks = ranks_in(&live.index, k)?;
        if let Some(legacy) = &live.legacy {
            ranks.extend(ranks_in(legacy, k)?);
            ranks.sort_unstable();
            ranks.dedup();
        }
        Ok(ranks)
    }

    /// Number of slices stored for layer `k`.
    pub fn stored_count(&self, k: u8) -> Result<usize, StoreError> {
        Ok(self.stored_ranks(k)?.len())
    }

    /// The record of layer `k` if the layer is complete (for a sealed reader: sealed).
    pub fn layer(&self, k: u8) -> Result<Option<LayerRecord>, StoreError> {
        let live = match &self.backend {
            Backend::Live(live) => live,
            Backend::Sealed(_) => return Ok(self.sealed_layer(k).map(|l| l.record.clone())),
        };
        match live.layers.get([k]).map_err(io)? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Corrupt(format!("layer {k} record: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests;
