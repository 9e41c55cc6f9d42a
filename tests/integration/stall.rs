//! A run that does not move says so in its log: the in-process solve as the cluster's
//! coordinator does (tests/integration/cluster.rs has the coordinator's case).

use crate::support::{Proc, temp_db};

#[test]
fn an_in_process_solve_that_stalls_says_so() {
    let (_dir, db) = temp_db();
    // the 7-card game has 127 slices: held after 20, its one worker keeps asking and
    // nothing more is stored; a stall after 1 s
    let mut solve = Proc::spawn(&[
        "solve",
        "--n",
        "7",
        "--db",
        db.to_str().unwrap(),
        "--hold-after-slices",
        "20",
        "--stall-secs",
        "1",
        "--log",
        "info",
    ]);
    let line = solve.wait_for("the stall", |l| l.contains("nothing stored for"));
    assert!(line.contains("1 worker(s) are connected (local)"), "{line}");
    solve.kill();
}
