//! SIGINT and SIGTERM sent the moment a server says it is listening end it cleanly
//! (exit 0 on a complete db), many times over: the listeners exist before the line.

use std::time::Duration;

use crate::support::{Proc, solve, temp_db};

/// How many times each command is started and signalled at once.
const TRIES: usize = 30;

/// Starts `args` `TRIES` times, sends SIGTERM or SIGINT (alternating) as soon as a line
/// satisfying `listening` appears, and requires exit 0 every time.
fn signalled_at_once_exits_cleanly(args: &[&str], listening: fn(&str) -> bool) {
    let mut failures = Vec::new();
    for attempt in 0..TRIES {
        let signal = if attempt % 2 == 0 { "TERM" } else { "INT" };
        let mut server = Proc::spawn(args);
        server.wait_for("the listening line", listening);
        server.signal(signal);
        let (code, lines) = server
            .finish_within_code(Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{args:?} still running a minute after SIG{signal}"));
        if code != Some(0) {
            failures.push(format!(
                "try {attempt}, SIG{signal}: exit {code:?}\n{}",
                lines.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {TRIES} tries of {args:?} did not exit 0:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn serve_signalled_right_after_listening_exits_0_every_time() {
    let (_dir, db) = temp_db();
    solve(&db, 3, &[]);
    let db = db.to_str().unwrap();
    signalled_at_once_exits_cleanly(&["serve", "--db", db, "--listen", "127.0.0.1:0"], |l| {
        l.contains("explorer listening")
    });
}

#[test]
fn coordinator_signalled_right_after_listening_exits_0_every_time() {
    let (_dir, db) = temp_db();
    solve(&db, 3, &[]);
    let db = db.to_str().unwrap();
    signalled_at_once_exits_cleanly(
        &[
            "coordinator",
            "--n",
            "3",
            "--db",
            db,
            "--listen",
            "127.0.0.1:0",
        ],
        |l| l.contains("coordinator listening"),
    );
}
