//! The run's status as a file beside the db (`status.json`), for `gops status --db` while
//! another process holds the db: sled lets one process open a db at a time, so the
//! process that holds it (a `solve` or a `coordinator`) writes its status there every few
//! seconds, and a second terminal reads it without touching the database.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::status::RunStatus;

/// The file's name inside the db directory.
pub const STATUS_FILE: &str = "status.json";

/// The status as written, with when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusSnapshot {
    /// When it was written, in milliseconds since the Unix epoch.
    pub written_unix_ms: u64,
    pub status: RunStatus,
}

impl StatusSnapshot {
    /// `status` as of now.
    pub fn now(status: RunStatus) -> StatusSnapshot {
        StatusSnapshot {
            written_unix_ms: unix_ms(SystemTime::now()),
            status,
        }
    }

    /// Seconds since it was written (0 if the clock went back).
    pub fn age_seconds(&self) -> u64 {
        age_seconds(self.written_unix_ms)
    }
}

/// Seconds since `written_unix_ms` (0 if the clock went back).
pub fn age_seconds(written_unix_ms: u64) -> u64 {
    unix_ms(SystemTime::now()).saturating_sub(written_unix_ms) / 1000
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// Writes `snapshot` into the db directory `dir`: to a temporary file, renamed over the
/// old one, so a reader sees the old status or the new one, never half of one.
pub fn write(dir: &Path, snapshot: &StatusSnapshot) -> std::io::Result<()> {
    let tmp = dir.join(format!("{STATUS_FILE}.tmp"));
    let bytes = serde_json::to_vec(snapshot).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(STATUS_FILE))
}

/// The snapshot in the db directory `dir`, if there is one that reads.
pub fn read(dir: &Path) -> Option<StatusSnapshot> {
    let bytes = std::fs::read(dir.join(STATUS_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::LayerStatus;

    #[test]
    fn a_snapshot_reads_back_and_a_damaged_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None);
        let status = RunStatus {
            n: 2,
            objective: "win".into(),
            complete: false,
            layers: vec![LayerStatus {
                k: 1,
                slices: 2,
                done: 1,
                states: 6,
                checksum: None,
                max_gap: None,
                complete: false,
                stored_values: None,
                dense_values: 4,
                matrix_games: None,
                on_demand: false,
            }],
            db: "db".into(),
            format_version: 6,
            db_bytes: 10,
            estimated_db_bytes: 20,
            book_from_layer: None,
        };
        let snapshot = StatusSnapshot::now(status);
        write(dir.path(), &snapshot).unwrap();
        assert_eq!(read(dir.path()), Some(snapshot.clone()));
        assert!(snapshot.age_seconds() < 60);
        assert!(!dir.path().join(format!("{STATUS_FILE}.tmp")).exists());
        std::fs::write(dir.path().join(STATUS_FILE), b"{ not json").unwrap();
        assert_eq!(read(dir.path()), None);
    }
}
