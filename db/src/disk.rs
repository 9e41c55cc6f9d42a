//! The disk a db takes, known before a solve starts: an estimate of its final size for
//! (N, objective), the bytes it holds now, and the free space of its file system, with
//! the verdict whether the rest fits.
//!
//! The estimate is 8.25 bytes per value of a dense layout (every canonical pattern, every
//! live score difference) plus 1 MiB. Measured on finished dbs of format 4 (slices in
//! data files, 8 bytes a value and 49 bytes a slice): `points` takes 8.00 to 8.03 bytes
//! per value at N = 12, 13 and 14 (8.14 at N = 10, where the fixed costs weigh more);
//! `win` stores only the undecided windows of score differences and takes 2.8 and 3.0
//! bytes per dense value at N = 9 and 10, so for `win` the estimate is an upper bound.
//! (Format 3, slices inside sled, took 8.6 to 9.5 for `points`.)

use std::io;
use std::path::{Path, PathBuf};

use gops_common::objective::Objective;
use gops_common::plan::LayerSize;

/// Bytes on disk per value of a dense layout (see the module's text).
pub const BYTES_PER_DENSE_VALUE: f64 = 8.25;

/// The db's estimated size once every layer is solved.
pub fn estimated_db_bytes(n: u8, objective: Objective) -> u64 {
    let dense: u64 = (1..=n)
        .map(|k| LayerSize::of(n, k, objective).dense_values)
        .sum();
    (dense as f64 * BYTES_PER_DENSE_VALUE) as u64 + (1 << 20)
}

/// Bytes in the files under `dir` (0 if it does not exist).
pub fn db_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => db_bytes(&entry.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Free bytes (for an unprivileged user) on the file system where `path` is or would be
/// created: that of its nearest existing ancestor.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let absolute = std::path::absolute(path)?;
    let existing: PathBuf = absolute
        .ancestors()
        .find(|p| p.exists())
        .map(Path::to_path_buf)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no existing ancestor"))?;
    fs4::available_space(existing)
}

/// What a solve into a db will need of its disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskPlan {
    /// The db's estimated final size.
    pub estimate: u64,
    /// What it holds now (a resumed solve).
    pub stored: u64,
    /// Free space on its file system.
    pub free: u64,
}

impl DiskPlan {
    /// The plan for solving the `n`-card `objective` game into `db`.
    pub fn of(db: &Path, n: u8, objective: Objective) -> io::Result<DiskPlan> {
        Ok(DiskPlan {
            estimate: estimated_db_bytes(n, objective),
            stored: db_bytes(db),
            free: free_bytes(db)?,
        })
    }

    /// Bytes still to be written.
    pub fn to_write(&self) -> u64 {
        self.estimate.saturating_sub(self.stored)
    }

    /// Whether what is still to be written fits in the free space.
    pub fn fits(&self) -> bool {
        self.to_write() <= self.free
    }
}

/// Bytes for people: `1.6 GB`, `273 MB`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000_000 => format!("{:.0} kB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.0} MB", b / 1e6),
        1_000_000_000..1_000_000_000_000 => format!("{:.1} GB", b / 1e9),
        _ => format!("{:.2} TB", b / 1e12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_follow_the_measured_dbs() {
        // measured (format 4): 13-card points 1.35 GB, 12-card points 254 MB, 14-card
        // points 7.21 GB, 10-card win 229 MB
        let gb = |n, o| estimated_db_bytes(n, o) as f64 / 1e9;
        for (n, measured) in [(12, 0.254), (13, 1.349), (14, 7.207)] {
            let estimate = gb(n, Objective::Points);
            assert!(
                (measured..measured * 1.05).contains(&estimate),
                "{n}: {estimate} GB for {measured} GB"
            );
        }
        assert!(gb(10, Objective::Win) > 0.229, "an upper bound for win");
        // and grow about 5x per card
        assert!(gb(16, Objective::Points) > 100.0);
    }

    #[test]
    fn a_plan_fits_when_the_rest_fits() {
        let plan = DiskPlan {
            estimate: 100,
            stored: 40,
            free: 60,
        };
        assert!(plan.fits());
        assert!(!DiskPlan { free: 59, ..plan }.fits());
        assert_eq!(
            DiskPlan {
                stored: 200,
                ..plan
            }
            .to_write(),
            0
        );
    }

    #[test]
    fn sizes_and_free_space_of_real_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 1000]).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 24]).unwrap();
        assert_eq!(db_bytes(dir.path()), 1024);
        assert_eq!(db_bytes(&dir.path().join("missing")), 0);
        // a path not created yet is on its ancestor's file system
        assert!(free_bytes(&dir.path().join("not/yet/there")).unwrap() > 0);
        assert_eq!(human_bytes(1_600_000_000), "1.6 GB");
        assert_eq!(human_bytes(273_000_000), "273 MB");
    }
}
