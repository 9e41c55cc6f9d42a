//! `gops status --db` of a db that a running coordinator holds: the status the holder
//! writes beside the db, marked as such, in text and in JSON; the db itself untouched.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Proc, gops_ok, listening_address, temp_db};

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
