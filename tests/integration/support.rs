//! Helpers: run the real `gops` binary, solve into temporary dbs, read checksums.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub fn gops(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gops"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("gops runs")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `gops` and requires success.
pub fn gops_ok(args: &[&str]) -> String {
    let out = gops(args);
    assert!(
        out.status.success(),
        "gops {args:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// A fresh db path inside a temporary directory (the directory lives as long as the
/// returned guard).
pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    (dir, db)
}

pub fn solve(db: &Path, n: u8, extra: &[&str]) {
    let n = n.to_string();
    let db = db.to_str().unwrap();
    let mut args = vec!["solve", "--n", &n, "--db", db, "--no-first-moves"];
    args.extend_from_slice(extra);
    gops_ok(&args);
}

pub fn status_json(db: &Path) -> Value {
    serde_json::from_str(&gops_ok(&[
        "status",
        "--db",
        db.to_str().unwrap(),
        "--json",
    ]))
    .unwrap()
}

/// The layer checksums of a complete db.
pub fn checksums(db: &Path) -> Vec<String> {
    let status = status_json(db);
    assert_eq!(status["complete"], true, "{status}");
    status["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["checksum"].as_str().unwrap().to_string())
        .collect()
}

/// Every file under `dir` with its bytes, to prove a failed command changed nothing.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Cards as the command line takes them: `1,3,7`.
pub fn join(cards: &[u8]) -> String {
    cards
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `gops value --json` for a state, or `gops strategy --json` when `upcard` is given.
pub fn state_query(
    db: &Path,
    (a, b, prizes): (&[u8], &[u8], &[u8]),
    diff: i64,
    upcard: Option<u8>,
) -> Value {
    let (a, b, prizes, diff) = (join(a), join(b), join(prizes), diff.to_string());
    let upcard = upcard.map(|c| c.to_string());
    let mut args = vec![
        if upcard.is_some() {
            "strategy"
        } else {
            "value"
        },
        "--db",
        db.to_str().unwrap(),
        "--a",
        &a,
        "--b",
        &b,
        "--prizes",
        &prizes,
        "--diff",
        &diff,
        "--json",
    ];
    if let Some(c) = &upcard {
        args.extend(["--upcard", c]);
    }
    serde_json::from_str(&gops_ok(&args)).unwrap()
}
