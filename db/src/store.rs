//! The run's one store (DESIGN §5): a sled database behind a typed handle, with the
//! slices' bytes in data files beside it. Nothing outside this module sees sled or raw
//! bytes.
//!
//! Trees: `meta` holds the manifest (N, objective, format version); `slice_index` maps
//! each stored slice, keyed by (layer, prize-set rank) big-endian so a layer is one key
//! range, to its record's place in the layer's data file ([`crate::slice_files`]);
//! `layers` holds a record per *complete* layer (checksum, certificate maximum), written
//! only after the layer's slices are flushed. Slice bytes stay out of sled because sled
//! keeps in memory what it reads: with them inside, a process's memory followed the
//! bytes it had read (11 GB for the 14-card game) whatever its cache settings.
//!
//! A db of format 3 (slices inside sled, in the `slices` tree) is read as it is: its
//! slices are found there when the index lacks them. Opening it to solve marks it
//! format 4, so that an older build, which would not see the new slices, refuses it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gops_common::cache::SliceCache;
use gops_common::checksum::Digest;
use gops_common::engine::{LayerEngine, SolvedSlice, terminal_slice};
use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_common::slice::Slice;
pub use gops_common::slice::SliceBytes;
use serde::{Deserialize, Serialize};

use crate::slice_files::{Place, SliceFiles};

/// Bumped whenever the byte layout of any record changes, or the engine's arithmetic does
/// (a resumed layer must be computed exactly as its first part was). New dbs are made in
/// this format.
///
/// 6: `win` slices hold only the score differences that can occur
/// ([`gops_common::reach::Reach`]); `points` dbs are laid out and computed as in format 5.
pub const FORMAT_VERSION: u32 = 6;
/// The kernel starts each simplex on B's minimax column ([`PivotStart::Minimax`]); the
/// bytes are laid out as in format 4. `points` dbs of this format are read and resumed
/// as they are; `win` dbs of it are refused ([`StoreError::WinFormat`]).
pub const FORMAT_5: u32 = 5;
/// The first format whose `win` slices hold only the score differences that can occur.
pub const REACHABLE_WIN_FORMAT: u32 = 6;
/// Slices in data files beside sled, values from the kernel that starts on the leftmost
/// column: read, solved into (resumed) with that kernel, and kept in that format.
pub const FORMAT_4: u32 = 4;
/// The format before slice bytes moved out of sled: read, and upgraded to format 4 (its
/// arithmetic) when solved into.
pub const LEGACY_FORMAT_VERSION: u32 = 3;
const MANIFEST_KEY: &[u8] = b"manifest";
/// A copy of the manifest beside sled's files, so commands can validate their input
/// against the game (N, objective) without opening, and so touching, the database.
const MANIFEST_FILE: &str = "manifest.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub n: u8,
    pub objective: String,
    pub created_by: String,
}

impl Manifest {
    pub fn objective(&self) -> Result<Objective, StoreError> {
        self.objective
            .parse()
            .map_err(|e: String| StoreError::Corrupt(format!("manifest: {e}")))
    }

    /// How the kernel started its simplex for this db's values, so that resuming,
    /// checking and querying it compute exactly as its solve did.
    pub fn pivot_start(&self) -> PivotStart {
        if self.format_version >= FORMAT_5 {
            PivotStart::Minimax
        } else {
            PivotStart::Leftmost
        }
    }
}

/// A complete layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerRecord {
    pub k: u8,
    pub slices: usize,
    /// Canonical (pattern, prize set) states of the layer, both orientations.
    pub states: u64,
    /// Values stored (one orientation; for `win`, only the windows between ±1).
    pub stored_values: u64,
    /// Values a dense layout would store (every live score difference).
    pub dense_values: u64,
    /// Hex digest of the layer's values in prize-rank order.
    pub checksum: String,
    /// Largest certificate gap over the layer's matrix games.
    pub max_gap: f64,
}

impl LayerRecord {
    /// The record of a complete layer: its size, and the digests of its slices in
    /// prize-rank order folded into the checksum.
    pub fn complete<'a>(
        size: &gops_common::plan::LayerSize,
        digests: impl IntoIterator<Item = &'a Digest>,
        max_gap: f64,
        stored_values: u64,
    ) -> LayerRecord {
        let mut checksum = gops_common::checksum::LayerChecksum::new();
        digests.into_iter().for_each(|d| checksum.add(d));
        LayerRecord {
            k: size.k,
            slices: size.slices,
            states: size.states,
            stored_values,
            dense_values: size.dense_values,
            checksum: checksum.finish(),
            max_gap,
        }
    }
}

/// A stored slice, verified against its digest when read.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceRecord {
    pub slice: Slice,
    pub max_gap: f64,
    pub games: u64,
    pub digest: Digest,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no database at {0} (run `gops solve` first)")]
    Missing(PathBuf),
    #[error("{0} is not a gops database")]
    NotADatabase(PathBuf),
    #[error(
        "database {path} holds the {n}-card {objective} game; refusing to use it for the {want_n}-card {want_objective} game (choose another --db)"
    )]
    Mismatch {
        path: PathBuf,
        n: u8,
        objective: String,
        want_n: u8,
        want_objective: String,
    },
    #[error(
        "database {0} is in use by another process (a running `gops coordinator`, `gops solve` or `gops serve`): stop it (a coordinator started with --exit-when-done stops by itself once the run is complete), ask a running coordinator with `gops status --coordinator URL`, or ask a running `gops serve` over HTTP (/api/value, /api/strategy)"
    )]
    Locked(PathBuf),
    #[error("database is damaged: {0}")]
    Corrupt(String),
    /// One slice's record fails its digest or its shape (or is missing from a layer that
    /// must have it): it can be solved again from the layer below.
    #[error("database is damaged: slice {rank} of layer {k}: {why}")]
    DamagedSlice { k: u8, rank: u32, why: String },
    #[error(
        "database format version {found} is not supported by this build (it reads {LEGACY_FORMAT_VERSION} to {FORMAT_VERSION}; a newer gops made this db)"
    )]
    Version { found: u32 },
    #[error(
        "database holds the {n}-card win game in format {found}, which stored every score difference; this build reads win dbs of format {REACHABLE_WIN_FORMAT} on, which store only those that can occur: solve the game again into a new db (`gops solve --n {n} --objective win --db NEW_DIR`; its values at every state that can occur are the same), or read this one with a gops built before format {REACHABLE_WIN_FORMAT} (points dbs of any format are read)"
    )]
    WinFormat { n: u8, found: u32 },
    #[error("storage error: {0}")]
    Io(String),
    #[error(
        "the db's file system is full ({0}): free space on it and start again (everything stored so far is kept and the run resumes)"
    )]
    DiskFull(String),
}

impl StoreError {
    /// Whether the error comes from what the user asked (a wrong db), not from the
    /// machine or the data.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            StoreError::Missing(_) | StoreError::NotADatabase(_) | StoreError::Mismatch { .. }
        )
    }
}

fn io(e: sled::Error) -> StoreError {
    match e {
        sled::Error::Corruption { .. } => StoreError::Corrupt(e.to_string()),
        sled::Error::Io(ref io) if is_disk_full(io) => StoreError::DiskFull(io.to_string()),
        other => StoreError::Io(other.to_string()),
    }
}

/// Whether an I/O error says the file system is full (sled wraps the original error, so
/// its text is looked at too).
fn is_disk_full(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull
        || e.raw_os_error() == Some(28)
        || e.to_string().contains("No space left on device")
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

/// The typed handle over one db directory.
pub struct Store {
    path: PathBuf,
    db: sled::Db,
    /// (layer, rank) -> [`Place`] of the slice's record in `files`.
    index: sled::Tree,
    files: SliceFiles,
    /// A format-3 db's slices, stored inside sled (read only; `None` in a newer db).
    legacy: Option<sled::Tree>,
    layers: sled::Tree,
    /// Copies of slices waiting for a second copy (replicated verification): index and
    /// bytes, as for stored slices.
    unconfirmed_index: sled::Tree,
    unconfirmed_files: SliceFiles,
    manifest: Manifest,
}

/// The tree of a format-3 db's slices.
const LEGACY_SLICES_TREE: &[u8] = b"slices";
/// The tree of a format-3 db's unconfirmed copies (dropped when they are cleared).
const LEGACY_UNCONFIRMED_TREE: &[u8] = b"unconfirmed";

/// An error of a data file's I/O, naming the file.
fn file_io(e: std::io::Error, path: &Path) -> StoreError {
    if is_disk_full(&e) {
        StoreError::DiskFull(format!("{}: {e}", path.display()))
    } else {
        StoreError::Io(format!("{}: {e}", path.display()))
    }
}

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
            objective: objective.name().to_string(),
            created_by: format!("gops {}", env!("CARGO_PKG_VERSION")),
        };
        if path.exists() {
            if let Some(found) = Self::peek_manifest(path)? {
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
        Self::finish_open(path, db, manifest)
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
                objective: found.objective.clone(),
                want_n: want.n,
                want_objective: want.objective.clone(),
            });
        }
        Ok(())
    }

    /// Opens an existing db, whatever game it holds.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
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

    fn decode_manifest(bytes: &[u8]) -> Result<Manifest, StoreError> {
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| StoreError::Corrupt(format!("manifest: {e}")))?;
        if !(LEGACY_FORMAT_VERSION..=FORMAT_VERSION).contains(&manifest.format_version) {
            return Err(StoreError::Version {
                found: manifest.format_version,
            });
        }
        let objective = manifest.objective()?;
        if !(1..=gops_common::MAX_N).contains(&manifest.n) {
            return Err(StoreError::Corrupt(format!("manifest: n = {}", manifest.n)));
        }
        if objective == Objective::Win && manifest.format_version < REACHABLE_WIN_FORMAT {
            return Err(StoreError::WinFormat {
                n: manifest.n,
                found: manifest.format_version,
            });
        }
        Ok(manifest)
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
            index: db.open_tree("slice_index").map_err(io)?,
            files: SliceFiles::new(path, "slices"),
            legacy,
            layers: db.open_tree("layers").map_err(io)?,
            unconfirmed_index: db.open_tree("unconfirmed_index").map_err(io)?,
            unconfirmed_files: SliceFiles::new(path, "unconfirmed"),
            db,
            manifest,
        })
    }

    /// Writes the manifest file, replacing any: durable before it is in place, and its
    /// directory entry durable after, so a power cut leaves the old file or the new one,
    /// never an empty one.
    fn write_manifest_file(path: &Path, manifest: &Manifest) -> Result<(), StoreError> {
        let file = path.join(MANIFEST_FILE);
        let tmp = path.join(format!("{MANIFEST_FILE}.tmp"));
        let bytes = serde_json::to_vec_pretty(manifest).expect("manifest serialises");
        write_synced(&tmp, &bytes)
            .and_then(|()| std::fs::rename(&tmp, &file))
            .and_then(|()| std::fs::File::open(path)?.sync_all())
            .map_err(|e| StoreError::Io(format!("{}: {e}", file.display())))
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
        self.manifest.objective().expect("checked at open")
    }

    /// The kernel's arithmetic of this db's values (from its format).
    pub fn pivot_start(&self) -> PivotStart {
        self.manifest.pivot_start()
    }

    /// Counts this start of a coordinator and returns its number (1, 2, ...), flushed: ids
    /// handed out by different runs on this db then never collide.
    pub fn next_run(&self) -> Result<u64, StoreError> {
        let meta = self.db.open_tree("meta").map_err(io)?;
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

    /// The raw record of slice `rank` of layer `k`: from its data file through the
    /// index, or from a format-3 db's tree.
    fn record(&self, k: u8, rank: u32) -> Result<Option<Vec<u8>>, StoreError> {
        let key = slice_key(k, rank);
        if let Some(entry) = self.index.get(key).map_err(io)? {
            return read_indexed(&self.files, k, rank, &entry).map(Some);
        }
        match &self.legacy {
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
        let key = slice_key(k, rank);
        let Some(entry) = self.index.get(key).map_err(io)? else {
            return match &self.legacy {
                Some(legacy) if legacy.contains_key(key).map_err(io)? => Ok(None),
                _ => Err(missing_slice(k, rank)),
            };
        };
        let place = indexed_place(k, rank, &entry)?;
        let header = Place {
            offset: place.offset,
            len: place.len.min(SliceBytes::RECORD_HEADER as u32),
        };
        let header_bytes = read_place(&self.files, k, rank, header)?;
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
                let slice = cache.get_or_load(k - 1, dependency, || {
                    if k == 1 {
                        Ok(terminal_slice())
                    } else {
                        self.require_slice(k - 1, dependency).map(|r| r.slice)
                    }
                })?;
                below.insert(dependency, slice);
            }
        }
        Ok(below)
    }

    /// Stores slices that arrive as bytes (from a worker), in one flushed batch: their
    /// records appended to the layer's data file and synced, then indexed. The caller has
    /// validated them.
    pub fn put_slice_bytes(&self, k: u8, slices: &[(u32, &SliceBytes)]) -> Result<(), StoreError> {
        let records: Vec<Vec<u8>> = slices.iter().map(|(_, s)| s.to_record()).collect();
        let places = self
            .files
            .append(k, &records)
            .map_err(|e| file_io(e, &self.files.path(k)))?;
        let mut batch = sled::Batch::default();
        for ((rank, _), place) in slices.iter().zip(places) {
            batch.insert(&slice_key(k, *rank), &place.encode());
        }
        self.index.apply_batch(batch).map_err(io)?;
        self.flush()
    }

    /// Keeps a copy of a slice that waits for a second, independent copy (replicated
    /// verification). The index entry is not flushed: a copy lost in a crash is solved
    /// again.
    pub fn put_unconfirmed(&self, k: u8, rank: u32, slice: &SliceBytes) -> Result<(), StoreError> {
        let place = self
            .unconfirmed_files
            .append(k, &[slice.to_record()])
            .map_err(|e| file_io(e, &self.unconfirmed_files.path(k)))?[0];
        self.unconfirmed_index
            .insert(slice_key(k, rank), &place.encode())
            .map(|_| ())
            .map_err(io)
    }

    /// The copy of slice `rank` of layer `k` waiting for confirmation, if any.
    pub fn unconfirmed(&self, k: u8, rank: u32) -> Result<Option<SliceBytes>, StoreError> {
        let Some(entry) = self.unconfirmed_index.get(slice_key(k, rank)).map_err(io)? else {
            return Ok(None);
        };
        let unreadable = |why: String| {
            StoreError::Corrupt(format!("unconfirmed slice {rank} of layer {k}: {why}"))
        };
        let bytes = match read_indexed(&self.unconfirmed_files, k, rank, &entry) {
            Ok(bytes) => bytes,
            Err(StoreError::DamagedSlice { why, .. }) => return Err(unreadable(why)),
            Err(other) => return Err(other),
        };
        SliceBytes::from_record(&bytes)
            .map(Some)
            .map_err(unreadable)
    }

    pub fn remove_unconfirmed(&self, k: u8, rank: u32) -> Result<(), StoreError> {
        self.unconfirmed_index
            .remove(slice_key(k, rank))
            .map(|_| ())
            .map_err(io)
    }

    /// Forgets every copy waiting for confirmation (a coordinator starting: whoever
    /// handed them in is gone with its session), and deletes their data files.
    pub fn clear_unconfirmed(&self) -> Result<(), StoreError> {
        self.unconfirmed_index.clear().map_err(io)?;
        if self
            .db
            .tree_names()
            .iter()
            .any(|t| t.as_ref() == LEGACY_UNCONFIRMED_TREE)
        {
            self.db.drop_tree(LEGACY_UNCONFIRMED_TREE).map_err(io)?;
        }
        self.flush()?;
        self.unconfirmed_files
            .remove_all()
            .map_err(|e| StoreError::Io(format!("{}: {e}", self.path.display())))
    }

    /// Prize ranks of layer `k` that have a stored slice, ascending.
    pub fn stored_ranks(&self, k: u8) -> Result<Vec<u32>, StoreError> {
        let mut ranks = ranks_in(&self.index, k)?;
        if let Some(legacy) = &self.legacy {
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

    /// The record of layer `k` if the layer is complete.
    pub fn layer(&self, k: u8) -> Result<Option<LayerRecord>, StoreError> {
        match self.layers.get([k]).map_err(io)? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StoreError::Corrupt(format!("layer {k} record: {e}"))),
        }
    }

    /// Marks a layer complete: flushes its slices first, then writes and flushes the
    /// layer record, so a complete layer is always durable.
    pub fn complete_layer(&self, record: &LayerRecord) -> Result<(), StoreError> {
        self.flush()?;
        let bytes = serde_json::to_vec(record).expect("layer record serialises");
        self.layers.insert([record.k], bytes).map_err(io)?;
        self.flush()
    }

    pub fn flush(&self) -> Result<(), StoreError> {
        self.db.flush().map(|_| ()).map_err(io)
    }
}

fn missing_slice(k: u8, rank: u32) -> StoreError {
    StoreError::DamagedSlice {
        k,
        rank,
        why: "missing".into(),
    }
}

impl Store {
    /// Removes the slice of `rank` from layer `k` (a damaged one, to be solved again),
    /// flushed.
    pub fn remove_slice(&self, k: u8, rank: u32) -> Result<(), StoreError> {
        self.index.remove(slice_key(k, rank)).map_err(io)?;
        if let Some(legacy) = &self.legacy {
            legacy.remove(slice_key(k, rank)).map_err(io)?;
        }
        self.flush()
    }
}

/// The prize ranks of layer `k` keyed in `tree`, ascending.
fn ranks_in(tree: &sled::Tree, k: u8) -> Result<Vec<u32>, StoreError> {
    tree.scan_prefix([k])
        .keys()
        .map(|key| {
            let key = key.map_err(io)?;
            let bytes: [u8; 4] = key[1..]
                .try_into()
                .map_err(|_| StoreError::Corrupt("slice key of wrong length".into()))?;
            Ok(u32::from_be_bytes(bytes))
        })
        .collect()
}

/// The record that index `entry` points to in `files`: an entry that cannot be read, or
/// bytes that are not there, are damage to that slice.
fn read_indexed(files: &SliceFiles, k: u8, rank: u32, entry: &[u8]) -> Result<Vec<u8>, StoreError> {
    read_place(files, k, rank, indexed_place(k, rank, entry)?)
}

/// The place index `entry` of slice `rank` of layer `k` names; one that does not decode
/// is damage to that slice.
fn indexed_place(k: u8, rank: u32, entry: &[u8]) -> Result<Place, StoreError> {
    Place::decode(entry).ok_or_else(|| StoreError::DamagedSlice {
        k,
        rank,
        why: format!("index entry of {} bytes", entry.len()),
    })
}

/// The bytes at `place` of layer `k`'s file in `files`: bytes that are not there are
/// damage to slice `rank`.
fn read_place(files: &SliceFiles, k: u8, rank: u32, place: Place) -> Result<Vec<u8>, StoreError> {
    let damaged = |why: String| StoreError::DamagedSlice { k, rank, why };
    files.read(k, place).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::UnexpectedEof => damaged(format!(
            "{} bytes at {} of {}: {e}",
            place.len,
            place.offset,
            files.path(k).display()
        )),
        _ => file_io(e, &files.path(k)),
    })
}

/// Writes `bytes` to `path` and syncs them to the disk.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

impl Store {
    /// Decodes a slice record of layer `k`, rank `rank`, its digest checked.
    fn decode_record(&self, k: u8, rank: u32, bytes: &[u8]) -> Result<SliceRecord, String> {
        let parts = SliceBytes::from_record(bytes)?;
        let slice = Slice::decode_for(self.n(), self.objective(), k, rank, &parts.body)?;
        Ok(SliceRecord {
            slice,
            max_gap: parts.max_gap,
            games: parts.games,
            digest: parts.digest,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solved(rank: u32, values: Vec<f64>) -> SolvedSlice {
        SolvedSlice {
            prize_rank: rank,
            slice: Slice::dense(0, values),
            max_gap: 1e-15,
            games: 3,
        }
    }

    #[test]
    fn slices_round_trip_and_manifest_is_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        {
            // layer 2 of the 5-card game has 13 patterns, 7 canonical
            let store = Store::open_or_create(&path, 5, Objective::Points).unwrap();
            let seven: Vec<f64> = (0..7).map(f64::from).collect();
            store
                .put_slices(2, &[solved(7, seven.clone()), solved(3, vec![0.25; 7])])
                .unwrap();
            assert_eq!(store.stored_ranks(2).unwrap(), vec![3, 7]);
            assert_eq!(store.stored_ranks(1).unwrap(), Vec::<u32>::new());
            let record = store.slice(2, 7).unwrap().unwrap();
            assert_eq!(record.slice.values, seven);
            assert_eq!(record.games, 3);
            assert!(store.layer(2).unwrap().is_none());
            // a record of the wrong shape is damage, not data
            store.put_slices(2, &[solved(4, vec![1.0; 6])]).unwrap();
            assert!(matches!(
                store.slice(2, 4),
                Err(StoreError::DamagedSlice { k: 2, rank: 4, .. })
            ));
        }
        let err = Store::open_or_create(&path, 6, Objective::Points)
            .err()
            .unwrap();
        assert!(matches!(err, StoreError::Mismatch { n: 5, .. }), "{err}");
        let err = Store::open_or_create(&path, 5, Objective::Win)
            .err()
            .unwrap();
        assert!(err.is_usage(), "{err}");
        let peeked = Store::peek_manifest(&path).unwrap().unwrap();
        assert_eq!((peeked.n, peeked.objective.as_str()), (5, "points"));
        let store = Store::open_existing(&path).unwrap();
        assert_eq!((store.n(), store.objective()), (5, Objective::Points));
        assert_eq!(
            store.slice(2, 3).unwrap().unwrap().slice.values,
            vec![0.25; 7]
        );
    }

    /// A 5-card points db at `path` with slices 3 and 7 of layer 2 stored.
    fn two_slices_in_layer_2(path: &Path) -> Store {
        let store = Store::open_or_create(path, 5, Objective::Points).unwrap();
        store
            .put_slices(2, &[solved(3, vec![0.5; 7]), solved(7, vec![1.5; 7])])
            .unwrap();
        store
    }

    /// Cuts the file at `path` to `len` bytes (a data file that lost its end).
    fn cut_to(path: &Path, len: u64) {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(len)
            .unwrap();
    }

    #[test]
    fn slice_bytes_live_in_data_files_and_a_damaged_place_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let store = two_slices_in_layer_2(&path);
        let file = path.join("slices-02.dat");
        let before = std::fs::metadata(&file).unwrap().len();
        assert!(before > 2 * 7 * 8, "both bodies are in the data file");
        assert_eq!(store.stored_ranks(2).unwrap(), vec![3, 7]);
        // stored again (a repair): appended, and the new copy is the one read
        store.put_slices(2, &[solved(3, vec![2.5; 7])]).unwrap();
        assert!(std::fs::metadata(&file).unwrap().len() > before);
        assert_eq!(
            store.require_slice(2, 3).unwrap().slice.values,
            vec![2.5; 7]
        );
        store.remove_slice(2, 7).unwrap();
        assert_eq!(store.stored_ranks(2).unwrap(), vec![3]);
        drop(store);
        // the data file cut short: the slice is damaged, not gone and not garbage
        cut_to(&file, before);
        let store = Store::open_existing(&path).unwrap();
        assert!(matches!(
            store.slice(2, 3),
            Err(StoreError::DamagedSlice { k: 2, rank: 3, .. })
        ));
        // the data file gone: damage too
        drop(store);
        std::fs::remove_file(&file).unwrap();
        let store = Store::open_existing(&path).unwrap();
        assert!(matches!(
            store.slice_bytes(2, 3),
            Err(StoreError::DamagedSlice { k: 2, rank: 3, .. })
        ));
    }

    #[test]
    fn a_located_record_is_the_slice_and_its_digest_and_a_missing_one_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let store = two_slices_in_layer_2(&path);
        let located = store.locate(2, 7).unwrap().expect("in a data file");
        assert_eq!(located.file_name, "slices-02.dat");
        let stored = store.require_slice_bytes(2, 7).unwrap();
        assert_eq!(located.digest, stored.digest);
        // what a reader of the directory finds there is the record of that slice
        let bytes = std::fs::read(path.join(&located.file_name)).unwrap();
        let start = located.place.offset as usize;
        let record = &bytes[start..start + located.place.len as usize];
        assert_eq!(SliceBytes::from_record(record).unwrap(), stored);
        assert!(matches!(
            store.locate(2, 4),
            Err(StoreError::DamagedSlice { k: 2, rank: 4, .. })
        ));
        // a data file cut inside the record's header: damage, not a wrong digest
        drop(store);
        cut_to(&path.join("slices-02.dat"), located.place.offset + 10);
        let store = Store::open_existing(&path).unwrap();
        assert!(matches!(
            store.locate(2, 7),
            Err(StoreError::DamagedSlice { k: 2, rank: 7, .. })
        ));
    }

    /// A db of format 3 (slices inside sled), as that build wrote it.
    fn legacy_db(path: &Path) {
        let db = sled::Config::new().path(path).open().unwrap();
        let manifest = Manifest {
            format_version: LEGACY_FORMAT_VERSION,
            n: 5,
            objective: "points".into(),
            created_by: "gops 0.1.0".into(),
        };
        let meta = db.open_tree("meta").unwrap();
        meta.insert(MANIFEST_KEY, serde_json::to_vec(&manifest).unwrap())
            .unwrap();
        let slices = db.open_tree(LEGACY_SLICES_TREE).unwrap();
        for rank in [1u32, 4] {
            let bytes = solved(rank, vec![f64::from(rank); 7])
                .to_bytes()
                .to_record();
            slices.insert(slice_key(2, rank), bytes).unwrap();
        }
        let unconfirmed = db.open_tree(LEGACY_UNCONFIRMED_TREE).unwrap();
        unconfirmed
            .insert(
                slice_key(2, 5),
                solved(5, vec![0.0; 7]).to_bytes().to_record(),
            )
            .unwrap();
        db.flush().unwrap();
        std::fs::write(
            path.join(MANIFEST_FILE),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn a_format_3_db_is_read_and_upgraded_when_solved_into() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        legacy_db(&path);
        {
            // read as it is, and left as it is
            let store = Store::open_existing(&path).unwrap();
            assert_eq!(store.manifest().format_version, LEGACY_FORMAT_VERSION);
            assert_eq!(store.stored_ranks(2).unwrap(), vec![1, 4]);
            assert_eq!(
                store.require_slice(2, 4).unwrap().slice.values,
                vec![4.0; 7]
            );
        }
        let peeked = Store::peek_manifest(&path).unwrap().unwrap();
        assert_eq!(peeked.format_version, LEGACY_FORMAT_VERSION);
        // opened to solve: marked format 4 (its arithmetic stays), old slices still read
        // beside new ones
        let store = Store::open_or_create(&path, 5, Objective::Points).unwrap();
        assert_eq!(store.manifest().format_version, FORMAT_4);
        assert_eq!(store.pivot_start(), PivotStart::Leftmost);
        let peeked = Store::peek_manifest(&path).unwrap().unwrap();
        assert_eq!(peeked.format_version, FORMAT_4);
        store.put_slices(2, &[solved(2, vec![2.0; 7])]).unwrap();
        assert_eq!(store.stored_ranks(2).unwrap(), vec![1, 2, 4]);
        // an old slice has no place in a data file; a new one has
        assert_eq!(store.locate(2, 1).unwrap(), None);
        assert!(store.locate(2, 2).unwrap().is_some());
        assert_eq!(
            store.require_slice(2, 1).unwrap().slice.values,
            vec![1.0; 7]
        );
        // a repaired old slice: the new copy wins; a removed one is gone from both
        store.put_slices(2, &[solved(1, vec![9.0; 7])]).unwrap();
        assert_eq!(
            store.require_slice(2, 1).unwrap().slice.values,
            vec![9.0; 7]
        );
        store.remove_slice(2, 4).unwrap();
        assert_eq!(store.stored_ranks(2).unwrap(), vec![1, 2]);
        // the old copies awaiting confirmation are cleared with the new ones
        store.clear_unconfirmed().unwrap();
        assert!(store.unconfirmed(2, 5).unwrap().is_none());
        assert!(
            !store
                .db
                .tree_names()
                .iter()
                .any(|t| t.as_ref() == LEGACY_UNCONFIRMED_TREE)
        );
    }

    #[test]
    fn unconfirmed_copies_round_trip_and_are_cleared_with_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let store = Store::open_or_create(&path, 5, Objective::Points).unwrap();
        let copy = solved(3, vec![0.75; 7]).to_bytes();
        store.put_unconfirmed(2, 3, &copy).unwrap();
        assert_eq!(store.unconfirmed(2, 3).unwrap(), Some(copy));
        assert!(store.unconfirmed(2, 4).unwrap().is_none());
        assert!(store.stored_ranks(2).unwrap().is_empty(), "not stored");
        store.remove_unconfirmed(2, 3).unwrap();
        assert!(store.unconfirmed(2, 3).unwrap().is_none());
        store
            .put_unconfirmed(2, 4, &solved(4, vec![1.0; 7]).to_bytes())
            .unwrap();
        assert!(path.join("unconfirmed-02.dat").exists());
        store.clear_unconfirmed().unwrap();
        assert!(store.unconfirmed(2, 4).unwrap().is_none());
        assert!(!path.join("unconfirmed-02.dat").exists());
    }

    #[test]
    fn missing_and_foreign_directories_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nothing-here");
        assert!(matches!(
            Store::open_existing(&missing),
            Err(StoreError::Missing(_))
        ));
        assert!(!missing.exists(), "a read must not create a db");
        let foreign = dir.path().join("foreign");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
        assert!(matches!(
            Store::open_or_create(&foreign, 4, Objective::Points),
            Err(StoreError::NotADatabase(_))
        ));
        assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
    }

    #[test]
    fn damaged_record_is_reported_not_returned() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_or_create(&dir.path().join("db"), 3, Objective::Points).unwrap();
        // layer 1 of the 3-card game: 3 patterns, 2 canonical
        let good = solved(0, vec![1.0, 2.0]).to_bytes().to_record();
        assert!(store.decode_record(1, 0, &good).is_ok());
        assert!(store.decode_record(1, 0, &good[..10]).is_err());
        assert!(
            store.decode_record(1, 3, &good).is_err(),
            "rank out of range"
        );
        assert!(
            store.decode_record(4, 0, &good).is_err(),
            "layer out of range"
        );
        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x40;
        assert_eq!(
            store.decode_record(1, 0, &flipped).unwrap_err(),
            "bytes do not match their digest"
        );
    }
}
