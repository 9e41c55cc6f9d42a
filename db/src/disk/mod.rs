//! The disk a db takes, known before a solve starts: an estimate of its final size for
//! (N, objective), the bytes it holds now, and the free space of its file system, with
//! the verdict whether the rest fits.
//!
//! `points`: 8.25 bytes per value of the dense layout (every canonical pattern of every
//! prize set) plus 1 MiB. Measured on finished dbs of format 4 (slices in data files,
//! 8 bytes a value and 49 bytes a slice): 8.00 to 8.03 bytes per value at N = 12, 13 and
//! 14 (8.14 at N = 10, where the fixed costs weigh more). (Format 3, slices inside sled,
//! took 8.6 to 9.5.)
//!
//! `win` (format 6) stores, per canonical pattern, a window (4 bytes) and the values
//! inside it at the score differences that can occur (8 bytes each). The share of the
//! dense layout's reachable values that lie inside the windows grows with N: 0.382,
//! 0.422, 0.461 and 0.498 at N = 8, 9, 10 and 11 (finished dbs); the estimate takes
//! [`win_stored_share`] = 0.05 N, above each of those by 5 to 10 %, and adds the windows
//! and 66 bytes a slice. Extrapolated beyond 11 cards, it is a model there, not a bound.

use std::io;
use std::path::{Path, PathBuf};

use gops_common::objective::Objective;
use gops_common::plan::LayerSize;

pub mod check;

/// Bytes on disk per value of a dense `points` layout (see the module's text).
pub const BYTES_PER_DENSE_VALUE: f64 = 8.25;

/// The share of a `win` game's reachable dense values that its db stores, as the
/// estimate takes it: 0.05 N (see the module's text).
pub fn win_stored_share(n: u8) -> f64 {
    (0.05 * f64::from(n)).min(1.0)
}

/// What free space a solve needs beyond its estimate: 2 % of what is still to be written
/// (sled's log, a data file's last record).
pub const DISK_MARGIN: f64 = 0.02;

/// The db's estimated size once every layer is solved.
pub fn estimated_db_bytes(n: u8, objective: Objective) -> u64 {
    (1..=n)
        .map(|k| estimated_layer_bytes(n, k, objective))
        .sum::<u64>()
        + (1 << 20)
}

/// The estimated bytes of layer `k`'s data (see the module's text).
pub fn estimated_layer_bytes(n: u8, k: u8, objective: Objective) -> u64 {
    let layer = LayerSize::of(n, k, objective);
    let bytes = match objective {
        Objective::Points => layer.dense_values as f64 * BYTES_PER_DENSE_VALUE,
        // values inside the windows, a window (4 bytes) per canonical pattern (half the
        // states), a record header and an index entry per slice
        Objective::Win => {
            8.0 * win_stored_share(n) * layer.dense_values as f64
                + 2.0 * layer.states as f64
                + 66.0 * layer.slices as f64
        }
    };
    bytes as u64
}

/// The most a rolling solve that keeps layers `keep..=n` holds at once: while layer s
/// is solved, the kept layers below s, layer s - 1 (until s is sealed) and layer s.
pub fn estimated_rolling_peak(n: u8, objective: Objective, keep: u8) -> u64 {
    let layer = |k| estimated_layer_bytes(n, k, objective);
    let held = |s: u8| {
        let kept: u64 = (keep..s).map(layer).sum();
        let below = if s > 1 && s - 1 < keep {
            layer(s - 1)
        } else {
            0
        };
        kept + below + layer(s)
    };
    (1..=n).map(held).max().unwrap_or(0) + (1 << 20)
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
    /// The most it holds at once: its final size, or for a rolling solve
    /// ([`estimated_rolling_peak`]) two adjacent layers and those kept.
    pub peak: u64,
    /// What it holds now (a resumed solve).
    pub stored: u64,
    /// Free space on its file system.
    pub free: u64,
}

impl DiskPlan {
    /// The plan for solving the `n`-card `objective` game into `db`, keeping every
    /// layer, or with `keep_from` those from it (a rolling solve).
    pub fn of(
        db: &Path,
        n: u8,
        objective: Objective,
        keep_from: Option<u8>,
    ) -> io::Result<DiskPlan> {
        let (estimate, peak) = match keep_from {
            None => {
                let all = estimated_db_bytes(n, objective);
                (all, all)
            }
            Some(keep) => (
                (keep..=n)
                    .map(|k| estimated_layer_bytes(n, k, objective))
                    .sum::<u64>()
                    + (1 << 20),
                estimated_rolling_peak(n, objective, keep),
            ),
        };
        Ok(DiskPlan {
            estimate,
            peak,
            stored: db_bytes(db),
            free: free_bytes(db)?,
        })
    }

    /// Bytes still to be written before the peak (taken as still ahead).
    pub fn to_write(&self) -> u64 {
        self.peak.saturating_sub(self.stored)
    }

    /// Free space needed: what is still to be written and [`DISK_MARGIN`] of it.
    pub fn needed(&self) -> u64 {
        (self.to_write() as f64 * (1.0 + DISK_MARGIN)) as u64
    }

    /// Whether what is still to be written, with its margin, fits in the free space.
    pub fn fits(&self) -> bool {
        self.needed() <= self.free
    }

    /// Why a solve of the `n`-card `objective` game into `db` does not fit (`None`
    /// where it does), with the figures; `[db_name, skip_name]` name the settings of the
    /// db and of the way past the check (`--db`, `--skip-disk-check`).
    pub fn refusal(
        &self,
        db: &Path,
        n: u8,
        objective: Objective,
        [db_name, skip_name]: [&str; 2],
    ) -> Option<String> {
        (!self.fits()).then(|| {
            format!(
                "the {n}-card {objective} db needs about {} more on disk ({} still to write and a 2 % margin; {} in all{}), but only {} is free where {} goes; free some space, choose another {db_name}, or pass {skip_name}",
                human_bytes(self.needed()),
                human_bytes(self.to_write()),
                human_bytes(self.peak),
                if self.peak == self.estimate {
                    ""
                } else {
                    " at its peak, two adjacent layers and those kept"
                },
                human_bytes(self.free),
                db.display()
            )
        })
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
        // measured (format 6): win 8, 9, 10 and 11 cards; within 1.3x above
        for (n, measured) in [(8, 0.003_509), (9, 0.022_155), (10, 0.152_683), (11, 1.060)] {
            let estimate = gb(n, Objective::Win);
            assert!(
                (measured..measured * 1.3).contains(&estimate),
                "{n}: {estimate} GB for {measured} GB"
            );
        }
        // and grow about 5x per card
        assert!(gb(16, Objective::Points) > 100.0);
        // the standard game to win fits where 75 GB are free
        let plan = DiskPlan {
            estimate: estimated_db_bytes(13, Objective::Win),
            peak: estimated_db_bytes(13, Objective::Win),
            stored: 0,
            free: 75_000_000_000,
        };
        assert!(plan.fits(), "{} GB", plan.needed() as f64 / 1e9);
    }

    #[test]
    fn a_plan_fits_when_the_rest_fits() {
        let plan = DiskPlan {
            estimate: 100,
            peak: 100,
            stored: 40,
            free: 60,
        };
        assert!(!plan.fits(), "60 to write and 2 % more");
        assert!(DiskPlan { free: 61, ..plan }.fits());
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
    fn a_rolling_solve_holds_two_layers_and_those_kept() {
        let layer = |k| estimated_layer_bytes(13, k, Objective::Win);
        let whole = estimated_db_bytes(13, Objective::Win);
        let peak = estimated_rolling_peak(13, Objective::Win, 11);
        // the widest pair of adjacent layers (7 and 8: three quarters of the whole here)
        let widest = (1..13).map(|k| layer(k) + layer(k + 1)).max().unwrap();
        assert_eq!(peak, widest + (1 << 20));
        assert_eq!(widest, layer(7) + layer(8));
        assert!(peak < whole, "{peak} of {whole}");
        // keeping every layer is a full solve; keeping only the last, the widest pair
        assert_eq!(estimated_rolling_peak(13, Objective::Win, 1), whole);
        assert_eq!(estimated_rolling_peak(13, Objective::Win, 13), peak);
        let dir = tempfile::tempdir().unwrap();
        let plan = DiskPlan::of(dir.path(), 13, Objective::Win, Some(11)).unwrap();
        assert_eq!(plan.peak, peak);
        assert_eq!(plan.estimate, layer(11) + layer(12) + layer(13) + (1 << 20));
        let message = DiskPlan { free: 0, ..plan }
            .refusal(dir.path(), 13, Objective::Win, ["--db", "--skip"])
            .unwrap();
        assert!(message.contains("at its peak"), "{message}");
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
