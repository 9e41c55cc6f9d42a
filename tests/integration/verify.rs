//! `gops verify` on a clean db, on a db with one value altered behind a consistent digest
//! (and, the second time, a consistent layer checksum too), and on bad input.

use gops_common::plan::LayerSize;
use gops_common::slice::SliceBytes;
use gops_db::book::{Book, ReadOptions};
use gops_db::store::Store;
use gops_db::store::progress::LayerProgress;
use gops_db::verify::{VerifyOptions, verify};
use serde_json::Value;

use crate::support::{gops, gops_ok, snapshot, solve, stderr, stdout, temp_db};

fn verify_json(db: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["verify", "--db", db, "--json"];
    args.extend_from_slice(extra);
    let out = gops(&args);
    let report = serde_json::from_str(&stdout(&out)).expect("a JSON report");
    (out.status.code().unwrap_or(-1), report)
}

/// Flips the lowest bit of value `index` of the slice of `rank` in layer `k`, stored
/// with a digest that matches the new bytes; with `fix_checksum`, the layer's record is
/// rewritten to match as well, so only a re-solve can tell.
fn alter_value(db: &std::path::Path, k: u8, rank: u32, index: usize, fix_checksum: bool) {
    let store = Store::open_live(db).unwrap();
    let record = store.require_slice(k, rank).unwrap();
    let mut slice = record.slice;
    slice.values[index] = f64::from_bits(slice.values[index].to_bits() ^ 1);
    let bytes = SliceBytes::of(&slice, record.max_gap, record.games);
    store.put_slice_bytes(k, &[(rank, &bytes)]).unwrap();
    if fix_checksum {
        let size = LayerSize::of(store.n(), k, store.objective());
        let progress = LayerProgress::resume(&store, size).unwrap();
        store
            .complete_layer(&progress.layer_record().unwrap())
            .unwrap();
    }
    store.flush().unwrap();
}

#[test]
fn a_clean_db_passes_and_one_altered_value_is_found() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    let path = db.to_str().unwrap();
    let (code, report) = verify_json(path, &["--fraction", "1", "--threads", "2"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["mismatch_count"], 0);
    assert_eq!(report["layers"].as_array().unwrap().len(), 5);
    assert!(
        report["layers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["checksum_matches"] == true)
    );
    // the same seed re-solves the same states, whatever the thread count
    let (_, one) = verify_json(
        path,
        &["--fraction", "0.3", "--seed", "11", "--threads", "1"],
    );
    let (_, two) = verify_json(
        path,
        &["--fraction", "0.3", "--seed", "11", "--threads", "2"],
    );
    assert_eq!(one["layers"], two["layers"]);

    // one value of layer 3 altered, digest and layer checksum consistent
    alter_value(&db, 3, 4, 2, true);
    let (code, report) = verify_json(path, &["--fraction", "1"]);
    assert_eq!(code, 1, "{report}");
    let mismatches = report["mismatches"].as_array().unwrap();
    assert!(
        mismatches
            .iter()
            .any(|m| m["k"] == 3 && m["prizes"] == serde_json::json!([1, 2, 5])),
        "{report}"
    );
    // layer 4 is re-solved from the altered layer 3 and disagrees too; layers 1, 2 don't
    assert!(report["layers"][1]["mismatches"] == 0 && report["layers"][0]["mismatches"] == 0);
    assert!(
        report["layers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["checksum_matches"] == true)
    );
    // the text report names the state and exits 1
    let out = gops(&["verify", "--db", path, "--fraction", "1", "--layers", "3"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("mismatch: layer 3 prizes [1, 2, 5]"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("mismatches"));
}

#[test]
fn an_altered_slice_under_an_old_layer_record_fails_its_checksum() {
    // read the old way (an unsealed db of an earlier build): the slices' digests are
    // folded again and disagree with the layer's record
    let (_dir, db) = temp_db();
    solve(&db, 4, &["--objective", "win"]);
    alter_value(&db, 2, 1, 0, false);
    for k in 1..=4 {
        std::fs::remove_file(db.join(format!("layer-{k:02}.json"))).unwrap();
    }
    let (code, report) = verify_json(
        db.to_str().unwrap(),
        &["--fraction", "0.01", "--layers", "2"],
    );
    assert_eq!(code, 1);
    assert_eq!(report["layers"][0]["checksum_matches"], false, "{report}");
}

#[test]
fn a_sealed_slice_rewritten_in_place_is_an_error_naming_it_never_a_value() {
    // one record of layer 2 overwritten by another, whole and self-consistent, slice's
    // record: its digest is not the one the sealed index names
    let (_dir, db) = temp_db();
    solve(&db, 4, &["--objective", "win"]);
    let (place, altered) = {
        let store = Store::open_existing(&db).unwrap();
        assert!(store.is_sealed_reader());
        let record = store.require_slice(2, 1).unwrap();
        let mut slice = record.slice;
        slice.values[0] = f64::from_bits(slice.values[0].to_bits() ^ 1);
        let bytes = SliceBytes::of(&slice, record.max_gap, record.games);
        (
            store.record_place(2, 1).unwrap().unwrap(),
            bytes.to_record(),
        )
    };
    assert_eq!(altered.len() as u32, place.len);
    let data = db.join("slices-02.dat");
    let file = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, &altered, place.offset).unwrap();
    let out = gops(&["verify", "--db", db.to_str().unwrap(), "--layers", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(
        said.contains("slice 1 of layer 2") && said.contains("layer-02.idx"),
        "{said}"
    );
    let csv = db.with_extension("csv");
    for query in [
        // the state's slice is {1, 3}, rank 1 of layer 2
        vec![
            "value",
            "--db",
            db.to_str().unwrap(),
            "--a",
            "1,2",
            "--b",
            "2,3",
            "--prizes",
            "1,3",
        ],
        vec![
            "export",
            "--db",
            db.to_str().unwrap(),
            "--format",
            "csv",
            "--layers",
            "2",
            "--out",
            csv.to_str().unwrap(),
        ],
    ] {
        let out = gops(&query);
        assert_eq!(out.status.code(), Some(1), "{query:?}: {}", stderr(&out));
    }
}

#[test]
fn bad_verify_input_is_refused_and_changes_nothing() {
    let (_dir, db) = temp_db();
    solve(&db, 3, &[]);
    let path = db.to_str().unwrap();
    let before = snapshot(&db);
    for args in [
        vec!["--fraction", "0"],
        vec!["--fraction", "1.5"],
        vec!["--fraction", "-0.1"],
        vec!["--layers", "4"],
        vec!["--layers", "3..1"],
        vec!["--threads", "0"],
        vec!["--memory-mb", "0"],
        // below what the game needs: refused with the figures
        vec!["--memory-mb", "1"],
    ] {
        let mut all = vec!["verify", "--db", path];
        all.extend_from_slice(&args);
        let out = gops(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let small = gops(&["verify", "--db", path, "--memory-mb", "1"]);
    assert!(
        stderr(&small).contains("--memory-mb is 1 MiB"),
        "{}",
        stderr(&small)
    );
    let missing = gops(&["verify", "--db", "/nonexistent/gops-db"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(snapshot(&db), before, "verify wrote to the db");
    gops_ok(&["verify", "--db", path]);
}

/// Batches of one prize set (a cache that holds nothing) check the same states with the
/// same outcome as batches of many: the memory budget changes how much is read at once,
/// not what is checked.
#[test]
fn the_memory_budget_does_not_change_what_is_checked() {
    for (n, objective) in [(6, "points"), (5, "win")] {
        let (_dir, db) = temp_db();
        solve(&db, n, &["--objective", objective]);
        let book = Book::open(&db, &ReadOptions::default()).unwrap();
        let report = |cache_bytes| {
            let options = VerifyOptions {
                fraction: 0.5,
                layers: 1..=n,
                seed: 5,
                cache_bytes,
                on_demand_states: 0,
            };
            verify(&book, &options, &|_| {}).unwrap()
        };
        let (tight, roomy) = (report(0), report(usize::MAX));
        assert!(tight.is_clean() && roomy.is_clean(), "{objective}");
        assert_eq!(tight.layers, roomy.layers, "{objective}");
        assert!(tight.states_checked > 0);
    }
}

/// A db with no complete layer verifies nothing: a non-zero exit and a message saying so,
/// not "0 states re-solved" and success.
#[test]
fn verifying_a_db_with_no_complete_layer_fails() {
    let (_dir, db) = temp_db();
    let path = db.to_str().unwrap();
    // a coordinator that no worker joins leaves a db with no layer complete
    let mut coordinator = crate::support::Proc::spawn(&[
        "coordinator",
        "--n",
        "4",
        "--db",
        path,
        "--listen",
        "127.0.0.1:0",
    ]);
    crate::support::listening_address(&mut coordinator);
    coordinator.terminate();
    let (code, lines) = coordinator.finish_code();
    assert_eq!(code, Some(130), "{lines:?}");
    let out = gops(&["verify", "--db", path]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing verified"),
        "{}",
        stderr(&out)
    );
    // and `status` of it gives the estimate, which a complete db does not
    let status = gops_ok(&["status", "--db", path]);
    assert!(status.contains("when complete"), "{status}");
    let (_done_dir, done) = temp_db();
    solve(&done, 4, &["--objective", "win"]);
    let status = gops_ok(&["status", "--db", done.to_str().unwrap()]);
    assert!(
        status.contains("complete") && !status.contains("when complete"),
        "{status}"
    );
}
