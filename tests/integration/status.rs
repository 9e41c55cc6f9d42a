//! `gops status --db` of a db that a running coordinator holds: the status the holder
//! writes beside the db, marked as such, in text and in JSON; the db itself untouched.
//! The file's last write is the run's end.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Proc, checksums, gops_ok, listening_address, solve, temp_db};

#[test]
fn status_of_a_db_in_use_shows_what_its_holder_wrote() {
    let (_dir, db) = temp_db();
    let db_arg = db.to_str().unwrap();
    let mut coordinator = Proc::spawn(&[
        "coordinator",
        "--n",
        "5",
        "--db",
        db_arg,
        "--listen",
        "127.0.0.1:0",
    ]);
    listening_address(&mut coordinator);
    // the holder writes its status every few seconds: a file to wait for, with a deadline
    let deadline = Instant::now() + Duration::from_secs(60);
    while !db.join("status.json").exists() {
        assert!(Instant::now() < deadline, "no status file within a minute");
        std::thread::sleep(Duration::from_millis(100));
    }
    let text = gops_ok(&["status", "--db", db_arg]);
    assert!(
        text.contains("in use by a running solve or coordinator")
            && text.contains("5-card points game")
            && text.contains("incomplete"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&gops_ok(&["status", "--db", db_arg, "--json"])).unwrap();
    assert_eq!(json["in_use"], true, "{json}");
    assert_eq!(json["n"], 5);
    assert_eq!(json["complete"], false);
    assert_eq!(json["layers"].as_array().unwrap().len(), 5);
    assert!(json["as_of_unix_ms"].as_u64().unwrap() > 0);
    coordinator.terminate();
    let (code, lines) = coordinator.finish_code();
    assert_eq!(code, Some(130), "{lines:?}");
    // once it has stopped, status opens the db itself
    let text = gops_ok(&["status", "--db", db_arg]);
    assert!(!text.contains("in use"), "{text}");
    let json: Value =
        serde_json::from_str(&gops_ok(&["status", "--db", db_arg, "--json"])).unwrap();
    assert!(json.get("in_use").is_none(), "{json}");
}

#[test]
fn the_status_file_of_a_finished_solve_says_complete() {
    let (_dir, db) = temp_db();
    // a solve of well under the file's two-second period: only the last write says done
    solve(&db, 5, &[]);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(db.join("status.json")).unwrap()).unwrap();
    let written = &file["status"];
    assert_eq!(written["complete"], true, "{file}");
    let written_checksums: Vec<String> = written["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["checksum"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(written_checksums, checksums(&db));
}
