//! A db's status as `gops status --db` reports it, whoever holds the db, read without
//! disturbing a writer: complete layers from the db (sealed, read without a lock), the
//! open layers of a stopped run from sled, and those of a running writer as it last
//! wrote them ([`crate::status::file`]); and that status as people read it.

use std::fmt;

use serde::Serialize;

use crate::status::file as status_file;
use crate::status::{RunStatus, run_status};
use crate::store::{Store, StoreError};

/// A db's status as `gops status --db` reports it, whoever holds the db: complete layers
/// from the db (sealed, read without a lock), the open layers of a stopped run from sled,
/// and those of a running writer as it last wrote them ([`status_file`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DbStatus {
    #[serde(flatten)]
    pub run: RunStatus,
    /// A running solve or coordinator holds the db (absent from JSON when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_use: bool,
    /// When the running writer wrote the live progress shown (milliseconds since the
    /// epoch); absent when it has written none, or nobody holds the db.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of_unix_ms: Option<u64>,
}

impl DbStatus {
    /// The status of the db `reader` was opened on (to read, [`Store::open_existing`]);
    /// the reader is closed before sled is opened, for a run that is not complete.
    pub fn read(reader: Store) -> Result<DbStatus, StoreError> {
        let status = run_status(&reader)?;
        let idle = |run| DbStatus {
            run,
            in_use: false,
            as_of_unix_ms: None,
        };
        if status.complete || !reader.is_sealed_reader() {
            return Ok(idle(status));
        }
        let db = reader.path().to_path_buf();
        drop(reader);
        if !Store::writer_running(&db) {
            // a stopped run: its open layer's slices counted in sled
            match Store::open_live(&db) {
                Ok(live) => return Ok(idle(run_status(&live)?)),
                Err(StoreError::Locked(_)) => {} // a writer started meanwhile
                Err(e) => return Err(e),
            }
        }
        // a running writer: the live progress of its open layers as it last wrote it
        let snapshot = status_file::read(&db);
        Ok(DbStatus {
            run: match &snapshot {
                Some(snapshot) => with_live_progress(status, &snapshot.status),
                None => status,
            },
            in_use: true,
            as_of_unix_ms: snapshot.as_ref().map(|s| s.written_unix_ms),
        })
    }
}

/// `status` (complete layers from the db) with the layers it lacks taken from what the
/// running writer wrote.
fn with_live_progress(mut status: RunStatus, written: &RunStatus) -> RunStatus {
    for layer in status.layers.iter_mut().filter(|l| !l.complete) {
        if let Some(live) = written.layers.iter().find(|w| w.k == layer.k) {
            *layer = live.clone();
        }
    }
    status.complete = status.layers.iter().all(|l| l.complete);
    status
}

impl fmt::Display for DbStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (
            self.in_use,
            self.as_of_unix_ms.map(status_file::age_seconds),
        ) {
            (true, Some(age)) => writeln!(
                f,
                "(in use by a running solve or coordinator: complete layers from the db, the others as it wrote them {age} s ago)"
            )?,
            (true, None) => writeln!(
                f,
                "(in use by a running solve or coordinator, which has not written its progress yet: complete layers from the db)"
            )?,
            (false, _) => {}
        }
        write!(f, "{}", self.run)
    }
}
