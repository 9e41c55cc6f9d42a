//! What can go wrong with a store, and the mapping of sled's and the file system's
//! errors onto it (a full disk told apart).

use std::path::{Path, PathBuf};

use super::{FORMAT_VERSION, LEGACY_FORMAT_VERSION, REACHABLE_WIN_FORMAT};

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
        "database {0} is in use by another process (a running `gops solve` or `gops coordinator`, or a command reading an unsealed db of an earlier build): one writer at a time; wait for it or stop it (a coordinator started with --exit-when-done stops by itself once the run is complete), and ask a running coordinator with `gops status --coordinator URL`"
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
    /// A sealed layer's files disagree with each other or with the data file.
    #[error(
        "database is damaged: layer {k}: {}: {why} (`gops seal --db DIR` seals a solve's complete layer again from its slices, and `gops verify` names a damaged slice; a damaged book is made again with `gops book` from its full db)",
        .file.display()
    )]
    DamagedLayer { k: u8, file: PathBuf, why: String },
    #[error(
        "database {0} is open for reading only (its sealed layers): nothing can be written through it"
    )]
    ReadOnly(PathBuf),
    #[error(
        "{0} is a book (the top layers of a solved game, read only): nothing is solved into it; solve into another --db"
    )]
    IsBook(PathBuf),
    /// A rolling solve asked to keep layers other than those its db keeps.
    #[error(
        "database {path} is a rolling solve that keeps layers {found} to {n}; resume it with --keep-from-layer {found} or without the flag (its lower layers' data is gone, so it cannot keep from layer {want})"
    )]
    KeepMismatch {
        path: PathBuf,
        n: u8,
        found: u8,
        want: u8,
    },
    /// `--keep-from-layer` outside 1..=n.
    #[error("--keep-from-layer {want} is not a layer of the {n}-card game (1 to {n})")]
    KeepOutOfRange { n: u8, want: u8 },
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
            StoreError::Missing(_)
                | StoreError::NotADatabase(_)
                | StoreError::Mismatch { .. }
                | StoreError::IsBook(_)
                | StoreError::KeepMismatch { .. }
                | StoreError::KeepOutOfRange { .. }
        )
    }
}

pub(super) fn io(e: sled::Error) -> StoreError {
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

/// An error of a data file's I/O, naming the file.
pub(crate) fn file_io(e: std::io::Error, path: &Path) -> StoreError {
    if is_disk_full(&e) {
        StoreError::DiskFull(format!("{}: {e}", path.display()))
    } else {
        StoreError::Io(format!("{}: {e}", path.display()))
    }
}

pub(super) fn missing_slice(k: u8, rank: u32) -> StoreError {
    StoreError::DamagedSlice {
        k,
        rank,
        why: "missing".into(),
    }
}
