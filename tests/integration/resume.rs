//! Determinism and resume: thread counts, interruptions and kill -9 never change a layer
//! checksum.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::support::{checksums, gops, solve, status_json, stderr, temp_db};

#[test]
fn one_and_two_threads_give_identical_checksums() {
    let (_d1, one) = temp_db();
    let (_d2, two) = temp_db();
    solve(&one, 9, &["--threads", "1"]);
    solve(&two, 9, &["--threads", "2"]);
    let (a, b) = (checksums(&one), checksums(&two));
    assert_eq!(a.len(), 9);
    assert_eq!(a, b);
}

#[test]
fn interrupted_solve_resumes_to_the_same_checksums() {
    let (_d1, whole) = temp_db();
    solve(&whole, 8, &[]);
    let (_d2, db) = temp_db();
    let path = db.to_str().unwrap();
    // 50 slices: layers 1 and 2 (8 + 28 slices) complete, layer 3 (56) in progress
    let out = gops(&[
        "solve",
        "--n",
        "8",
        "--db",
        path,
        "--stop-after-slices",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("run the same command again to resume"));
    let status = status_json(&db);
    assert_eq!(status["complete"], false);
    let layers = status["layers"].as_array().unwrap();
    assert_eq!(
        (
            layers[0]["complete"].as_bool(),
            layers[1]["complete"].as_bool()
        ),
        (Some(true), Some(true))
    );
    let done = layers[2]["done"].as_u64().unwrap();
    assert!(
        done > 0 && done < 56,
        "layer 3 must be part-done, has {done}"
    );
    assert_eq!(layers[2]["checksum"], serde_json::Value::Null);
    solve(&db, 8, &[]);
    assert_eq!(checksums(&db), checksums(&whole));
}

#[test]
fn killed_solve_resumes_to_the_same_checksums() {
    let (_d1, whole) = temp_db();
    solve(&whole, 10, &[]);
    let (_d2, db) = temp_db();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gops"))
        .args([
            "solve",
            "--n",
            "10",
            "--threads",
            "1",
            "--db",
            db.to_str().unwrap(),
        ])
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // wait until a shard of layer 6 (of four) is stored and flushed, then kill -9
    let reader = BufReader::new(child.stderr.take().unwrap());
    let mut shards = 0;
    for line in reader.lines() {
        let line = line.unwrap();
        if line.contains("shard stored") && line.contains("layer=6") {
            shards += 1;
            if shards == 1 {
                break;
            }
        }
    }
    assert_eq!(shards, 1, "the solve ended before layer 6 was under way");
    child.kill().unwrap();
    child.wait().unwrap();
    let status = status_json(&db);
    assert_eq!(status["complete"], false);
    assert_eq!(
        status["layers"][4]["complete"], true,
        "layer 5 was complete before the kill"
    );
    // every shard is flushed before it is logged: the kill came mid-layer
    let done = status["layers"][5]["done"].as_u64().unwrap();
    assert!(
        (1..210).contains(&done),
        "layer 6 must be part-done, has {done} of 210"
    );
    solve(&db, 10, &[]);
    assert_eq!(checksums(&db), checksums(&whole));
}
