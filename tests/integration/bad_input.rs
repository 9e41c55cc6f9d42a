//! Bad input gets a one-line error and exit code 2, no panic, and leaves the db as it was.

use crate::support::{gops, snapshot, solve, stderr, temp_db};

fn assert_refused(args: &[&str], expect: &str) {
    let out = gops(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "gops {args:?}: {err}");
    assert!(!err.contains("panicked"), "gops {args:?} panicked: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected from {args:?}: {err}");
    assert!(lines[0].starts_with("error"), "{err}");
    assert!(
        lines[0].contains(expect),
        "gops {args:?}: '{err}' lacks '{expect}'"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout for {args:?}");
}

#[test]
fn bad_game_sizes_are_refused_before_anything_is_created() {
    let (_dir, db) = temp_db();
    let path = db.to_str().unwrap();
    assert_refused(
        &["solve", "--n", "0", "--db", path],
        "n must be between 1 and 16, got 0",
    );
    assert_refused(&["solve", "--n", "17", "--db", path], "got 17");
    assert_refused(&["solve", "--n", "-3", "--db", path], "got -3");
    assert_refused(
        &["solve", "--n", "ten", "--db", path],
        "invalid value 'ten'",
    );
    assert_refused(
        &["solve", "--n", "5", "--objective", "draw", "--db", path],
        "unknown objective 'draw'",
    );
    assert_refused(
        &["solve", "--n", "5", "--threads", "0", "--db", path],
        "--threads",
    );
    for share in ["0", "1.5", "-0.1", "NaN", "half"] {
        assert_refused(
            &["solve", "--n", "5", "--verify-slices", share, "--db", path],
            "--verify-slices",
        );
    }
    for fraction in ["1.5", "-0.1", "NaN", "some"] {
        for command in ["solve", "coordinator"] {
            assert_refused(
                &[
                    command,
                    "--n",
                    "5",
                    "--verify-fraction",
                    fraction,
                    "--db",
                    path,
                ],
                "--verify-fraction",
            );
        }
    }
    assert_refused(
        &["solve", "--n", "5", "--verify-fraction", "2", "--db", path],
        "must be between 0 and 1, got 2",
    );
    assert_refused(
        &[
            "coordinator",
            "--n",
            "5",
            "--verify-mode",
            "trust",
            "--db",
            path,
        ],
        "invalid value 'trust' for '--verify-mode",
    );
    assert!(!db.exists(), "a refused solve must not create the db");
}

#[test]
fn missing_or_foreign_db_is_refused_untouched() {
    let (dir, db) = temp_db();
    assert_refused(&["status", "--db", db.to_str().unwrap()], "no database at");
    assert_refused(&["value", "--db", db.to_str().unwrap()], "no database at");
    assert!(!db.exists());
    let foreign = dir.path().join("photos");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("cat.jpg"), b"not a db").unwrap();
    let before = snapshot(&foreign);
    assert_refused(
        &["solve", "--n", "3", "--db", foreign.to_str().unwrap()],
        "is not a gops database",
    );
    assert_refused(
        &["status", "--db", foreign.to_str().unwrap()],
        "is not a gops database",
    );
    assert_eq!(snapshot(&foreign), before);
}

#[test]
fn bad_cards_and_mismatched_games_leave_the_db_intact() {
    let (_dir, db) = temp_db();
    solve(&db, 4, &[]);
    let path = db.to_str().unwrap();
    let before = snapshot(&db);
    let conf_file = format!("{path}/conf");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "value", "--db", path, "--a", "1,x", "--b", "1,2", "--prizes", "1,2",
            ],
            "--a: 'x' is not a card number",
        ),
        (
            &[
                "value", "--db", path, "--a", "1,5", "--b", "1,2", "--prizes", "1,2",
            ],
            "card 5 is outside 1..=4",
        ),
        (
            &[
                "value", "--db", path, "--a", "0,1", "--b", "1,2", "--prizes", "1,2",
            ],
            "card 0 is outside",
        ),
        (
            &[
                "value", "--db", path, "--a", "1,2", "--b", "1,-2", "--prizes", "1,2",
            ],
            "card -2 is outside",
        ),
        (
            &[
                "value", "--db", path, "--a", "2,2", "--b", "1,2", "--prizes", "1,2",
            ],
            "card 2 is listed twice",
        ),
        (
            &[
                "value", "--db", path, "--a", "1,2,3", "--b", "1,2", "--prizes", "1,2",
            ],
            "same size",
        ),
        (
            &[
                "value", "--db", path, "--a", "1,2", "--b", "1,2", "--prizes", "1",
            ],
            "same size",
        ),
        (
            &["value", "--db", path, "--diff", "11"],
            "score difference 11 is out of range",
        ),
        (
            &["value", "--db", path, "--diff", "-9223372036854775808"],
            "score difference -9223372036854775808 is out of range",
        ),
        (
            &["value", "--db", path, "--diff", "99999999999999999999"],
            "--diff",
        ),
        (
            &["value", "--db", &conf_file, "--a", "1"],
            "is not a gops database",
        ),
        (
            &[
                "strategy", "--db", path, "--a", "1,2", "--b", "3,4", "--prizes", "1,2",
                "--upcard", "3",
            ],
            "upcard 3 is not among the prizes",
        ),
        (
            &["strategy", "--db", path, "--upcard", "9"],
            "upcard 9 is not among the prizes",
        ),
        (
            &[
                "strategy", "--db", path, "--a", "", "--b", "", "--prizes", "", "--upcard", "1",
            ],
            "upcard 1 is not among the prizes",
        ),
        (&["strategy", "--db", path], "--upcard"),
        (
            &["solve", "--n", "5", "--db", path],
            "holds the 4-card points game",
        ),
        (
            &["solve", "--n", "4", "--objective", "win", "--db", path],
            "holds the 4-card points game",
        ),
    ];
    for (args, expect) in cases {
        assert_refused(args, expect);
        assert_eq!(snapshot(&db), before, "gops {args:?} changed the db");
    }
}

#[test]
fn a_memory_budget_below_the_games_need_is_refused_before_anything_is_created() {
    let (_dir, db) = crate::support::temp_db();
    let path = db.to_str().unwrap();
    for args in [
        vec!["solve", "--n", "13", "--db", path, "--memory-mb", "100"],
        vec![
            "coordinator",
            "--n",
            "13",
            "--db",
            path,
            "--listen",
            "127.0.0.1:0",
            "--memory-mb",
            "100",
        ],
        vec!["solve", "--n", "5", "--db", path, "--memory-mb", "0"],
        vec!["solve", "--n", "5", "--db", path, "--memory-mb", "-5"],
    ] {
        let out = crate::support::gops(&args);
        let err = crate::support::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!db.exists(), "{args:?} created the db");
    }
    let out = crate::support::gops(&["solve", "--n", "13", "--db", path, "--memory-mb", "100"]);
    assert!(
        crate::support::stderr(&out).contains("needs at least 303 MiB"),
        "{}",
        crate::support::stderr(&out)
    );
    // a worker's budget is checked once the game is known; --cache-mb and --memory-mb
    // are one or the other
    let out = crate::support::gops(&[
        "worker",
        "--coordinator",
        "http://127.0.0.1:9",
        "--cache-mb",
        "5",
        "--memory-mb",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `-n` is `--n`; an unknown flag's one line carries the command's usage.
#[test]
fn short_n_solves_and_an_unknown_flag_shows_the_usage() {
    let (_dir, db) = temp_db();
    let out = gops(&[
        "solve",
        "-n",
        "3",
        "--db",
        db.to_str().unwrap(),
        "--no-first-moves",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(crate::support::status_json(&db)["n"], 3);
    assert_refused(
        &["solve", "-n", "3", "--colour", "red"],
        "usage: gops solve",
    );
}
