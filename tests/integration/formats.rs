//! Databases keep the kernel's arithmetic they were solved with: a db of format 4 (the
//! simplex started on the leftmost column) is resumed and verified with that start, and
//! has the checksums of format 4; a new db is format 6 (B's minimax column first, as in
//! format 5), whose checksums differ. A `win` db from before format 6 (which stored every
//! score difference) is refused with what to do.

use gops_common::engine::DiffSearch;
use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_common::solution::InMemorySolution;
use serde_json::json;

use crate::support::{checksums, gops, solve, status_json, stdout, temp_db};

/// An empty db of format 4 for the `n`-card points game, as a build of that format
/// leaves it between creating it and storing the first slice (the manifest in sled's
/// `meta` tree under `manifest`, and a copy beside it).
fn empty_format_4_db(path: &std::path::Path, n: u8) {
    empty_db(path, 4, n, "points");
}

/// An empty db of `format` for the `n`-card `objective` game (see [`empty_format_4_db`]).
fn empty_db(path: &std::path::Path, format: u32, n: u8, objective: &str) {
    let manifest = serde_json::to_vec(&json!({
        "format_version": format,
        "n": n,
        "objective": objective,
        "created_by": "gops 0.1.0",
    }))
    .unwrap();
    let db = sled::Config::new().path(path).open().unwrap();
    db.open_tree("meta")
        .unwrap()
        .insert("manifest", manifest.clone())
        .unwrap();
    db.flush().unwrap();
    drop(db);
    std::fs::write(path.join("manifest.json"), manifest).unwrap();
}

fn in_memory_checksums(n: u8, start: PivotStart) -> Vec<String> {
    InMemorySolution::solve_as(n, Objective::Points, DiffSearch::Bisect, start)
        .unwrap()
        .checksums()
}

#[test]
fn a_format_4_db_is_solved_and_verified_with_its_own_arithmetic() {
    let n = 7;
    let (leftmost, minimax) = (
        in_memory_checksums(n, PivotStart::Leftmost),
        in_memory_checksums(n, PivotStart::Minimax),
    );
    assert_ne!(leftmost, minimax, "the two starts give the same bits");

    let (_dir, old) = temp_db();
    empty_format_4_db(&old, n);
    solve(&old, n, &[]);
    assert_eq!(status_json(&old)["format_version"], 4);
    assert_eq!(checksums(&old), leftmost);
    let out = gops(&[
        "verify",
        "--db",
        old.to_str().unwrap(),
        "--fraction",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    let (_dir, new) = temp_db();
    solve(&new, n, &[]);
    // new dbs are format 6: the same points bytes as format 5
    assert_eq!(status_json(&new)["format_version"], 6);
    assert_eq!(checksums(&new), minimax);
}

#[test]
fn a_win_db_from_before_format_6_is_refused_with_what_to_do() {
    let (_dir, old) = temp_db();
    empty_db(&old, 5, 6, "win");
    let path = old.to_str().unwrap();
    for args in [
        vec!["status", "--db", path],
        vec!["value", "--db", path],
        vec!["solve", "--n", "6", "--objective", "win", "--db", path],
    ] {
        let out = gops(&args);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("win game in format 5") && err.contains("solve the game again"),
            "{args:?}: {err}"
        );
    }
    // and it is left as it was
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(old.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format_version"], 5);
}
