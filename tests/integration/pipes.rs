//! No command panics when its stdout is closed (`gops status | head -1`): each command
//! that prints is run with stdout a pipe whose reader has gone, and must exit 0 without
//! a panic.

use crate::support::{solve, temp_db};

/// Runs `gops args` with its stdout a pipe whose reader exits first (the write then fails
/// with a broken pipe, as under `| true` or `| head -1`); its exit code and stderr.
fn with_closed_stdout(args: &[&str]) -> (i32, String) {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    // the reader (`true`) is gone by the time gops writes, 0.3 s later
    let script = format!(
        "(sleep 0.3; exec '{}' {}) | true; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_gops"),
        quoted.join(" ")
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .env("RUST_LOG", "warn")
        .output()
        .expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn no_command_panics_on_a_closed_stdout() {
    let (_dir, db) = temp_db();
    let (_win_dir, win) = temp_db();
    let db_arg = db.to_str().unwrap();
    let win_arg = win.to_str().unwrap();
    // solve prints its summary into the closed pipe too
    let (code, stderr) = with_closed_stdout(&["solve", "--n", "5", "--db", db_arg]);
    assert_eq!(code, 0, "solve: {stderr}");
    solve(&win, 4, &["--objective", "win"]);
    let commands: &[&[&str]] = &[
        &["status", "--db", db_arg],
        &["status", "--db", db_arg, "--json"],
        &["value", "--db", db_arg],
        &["value", "--db", db_arg, "--json"],
        &["strategy", "--db", db_arg, "--upcard", "3"],
        &["strategy", "--db", win_arg, "--upcard", "2", "--json"],
        &[
            "simulate", "--db", db_arg, "--a", "optimal", "--b", "random", "--games", "20",
        ],
        &["exploit", "--db", win_arg, "--policy", "random"],
        &["verify", "--db", db_arg, "--fraction", "0.1"],
        &["verify", "--db", win_arg, "--fraction", "0.1", "--json"],
    ];
    for args in commands {
        let (code, stderr) = with_closed_stdout(args);
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
}
