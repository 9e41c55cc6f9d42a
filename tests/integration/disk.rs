//! The disk check: a db that cannot fit on its file system is refused before anything is
//! created. The small file system is a 4 MiB tmpfs the test mounts, so it needs root;
//! elsewhere it says SKIPPED on stderr and passes, unless GOPS_REQUIRE_ROOT=1 (set by
//! `.ci/run`) makes that a failure.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{gops, gops_ok, status_json, stderr};

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct SmallDisk {
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl SmallDisk {
    fn new(test: &str, size: &str) -> Option<SmallDisk> {
        let required = std::env::var_os("GOPS_REQUIRE_ROOT").is_some_and(|v| v == "1");
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("small");
        std::fs::create_dir(&mount).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { _dir: dir, mount }),
            other => {
                let why = match other {
                    Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                assert!(!required, "{test}: needs root to mount a tmpfs ({why})");
                let _ = writeln!(std::io::stderr(), "SKIPPED {test}: needs root ({why})");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        &self.mount
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
    }
}

#[test]
fn a_db_that_cannot_fit_is_refused_before_anything_is_created() {
    let Some(disk) = SmallDisk::new("disk check", "4m") else {
        return;
    };
    let db = disk.path().join("db");
    let db_arg = db.to_str().unwrap();
    // the 11-card points game needs about 50 MB
    for args in [
        vec!["solve", "--n", "11", "--db", db_arg],
        vec![
            "coordinator",
            "--n",
            "11",
            "--db",
            db_arg,
            "--listen",
            "127.0.0.1:0",
        ],
    ] {
        let out = gops(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let message = stderr(&out);
        let error: Vec<&str> = message.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(error.len(), 1, "{message}");
        assert!(error[0].contains("--skip-disk-check"), "{message}");
        assert!(!db.exists(), "{args:?} created the db");
    }
    // a game that fits is solved there, and its status shows bytes and estimate
    gops_ok(&["solve", "--n", "6", "--db", db_arg, "--no-first-moves"]);
    let status = status_json(&db);
    assert!(status["db_bytes"].as_u64().unwrap() > 0);
    assert!(status["estimated_db_bytes"].as_u64().unwrap() > 0);
}

impl SmallDisk {
    /// Gives the file system `size` (space returning).
    fn grow(&self, size: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.mount)
            .status()
            .unwrap();
        assert!(status.success(), "remount {size}");
    }
}

#[test]
fn a_full_disk_stops_the_run_with_its_reason_and_the_run_resumes_once_space_returns() {
    let Some(disk) = SmallDisk::new("full disk", "2m") else {
        return;
    };
    let db = disk.path().join("db");
    let db_arg = db.to_str().unwrap();
    // the 10-card points game needs about 12 MB: a coordinator past the disk check on
    // purpose fills the disk, names the cause and exits 1 (a supervisor restarts it)
    let mut coordinator = crate::support::Proc::spawn(&[
        "coordinator",
        "--n",
        "10",
        "--db",
        db_arg,
        "--listen",
        "127.0.0.1:0",
        "--skip-disk-check",
        "--lease-ms",
        "2000",
    ]);
    let url = format!(
        "http://{}",
        crate::support::listening_address(&mut coordinator)
    );
    let worker = crate::support::Proc::spawn(&[
        "worker",
        "--coordinator",
        &url,
        "--threads",
        "1",
        "--give-up-secs",
        "5",
    ]);
    let (code, lines) = coordinator.finish_code();
    assert_eq!(code, Some(1), "{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l.contains("file system is full")),
        "{}",
        lines.join("\n")
    );
    let _ = worker.finish_code();
    // on the full disk, a solve says why it cannot go on
    let args = [
        "solve",
        "--n",
        "10",
        "--db",
        db_arg,
        "--skip-disk-check",
        "--no-first-moves",
    ];
    let out = gops(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("file system is full"),
        "{}",
        stderr(&out)
    );
    // space returns: the same command finishes the game, with the reference checksums
    disk.grow("64m");
    gops_ok(&args);
    assert_eq!(
        crate::support::checksums(&db),
        crate::support::reference(10, "points")
    );
}
