//! Books through the command line: `gops book`, then the JSON of `value`, `strategy` and
//! `status` on the book against the full db's, a whole game of `play`, `verify`, and
//! the refusals (bad input exits 2 and changes nothing; a subtree over the limit exits
//! 1 before any work).

use std::path::Path;

use gops_common::rules::random_game_states;
use gops_common::state::GameState;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::support::{
    gops, gops_ok, snapshot, solve, spawn_with_input, state_query, status_json, stderr, temp_db,
};

/// States along random games of the `n`-card game with fewer than `below` cards left,
/// each with an upcard.
fn states_below(n: u8, below: u8, count: usize) -> Vec<(GameState, u8)> {
    let mut rng = StdRng::seed_from_u64(52);
    random_game_states(n, count, &mut rng, |s| s.k() < below)
}

fn make_book(full: &Path, from: u8, out: &Path) {
    gops_ok(&[
        "book",
        "--db",
        full.to_str().unwrap(),
        "--from-layer",
        &from.to_string(),
        "--out",
        out.to_str().unwrap(),
    ]);
}

#[test]
fn a_books_answers_through_the_command_line_are_the_full_dbs() {
    for (n, objective, from) in [(9, "win", 6), (10, "points", 7)] {
        let (dir, full) = temp_db();
        solve(&full, n, &["--objective", objective]);
        let book = dir.path().join("book");
        make_book(&full, from, &book);
        for (state, upcard) in states_below(n, from, 40) {
            let hands = (
                &state.a.to_vec()[..],
                &state.b.to_vec()[..],
                &state.prizes.to_vec()[..],
            );
            let diff = i64::from(state.diff);
            assert_eq!(
                state_query(&book, hands, diff, None),
                state_query(&full, hands, diff, None)
            );
            assert_eq!(
                state_query(&book, hands, diff, Some(upcard)),
                state_query(&full, hands, diff, Some(upcard))
            );
        }
        // status: every layer's checksum the full db's, the lower ones solved on demand
        let (ours, theirs) = (status_json(&book), status_json(&full));
        assert_eq!(ours["book_from_layer"], from);
        for (l, f) in ours["layers"]
            .as_array()
            .unwrap()
            .iter()
            .zip(theirs["layers"].as_array().unwrap())
        {
            assert_eq!(l["checksum"], f["checksum"]);
            assert_eq!(l["on_demand"], l["k"].as_u64().unwrap() < u64::from(from));
        }
        let out = gops(&[
            "verify",
            "--db",
            book.to_str().unwrap(),
            "--seed",
            "3",
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn a_whole_game_is_played_against_a_book_and_bad_requests_change_nothing() {
    let (dir, full) = temp_db();
    solve(&full, 8, &["--objective", "win"]);
    let book = dir.path().join("book");
    make_book(&full, 6, &book);
    let before = snapshot(&book);
    // play: the human bids its lowest card each round
    let child = spawn_with_input(
        &["play", "--db", book.to_str().unwrap(), "--seed", "4"],
        "1\n2\n3\n4\n5\n6\n7\n8\n",
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("final") || text.contains("Final"), "{text}");
    // a state over the limit: exit 1 before any work, with the estimate
    let out = gops(&[
        "value",
        "--db",
        book.to_str().unwrap(),
        "--a",
        "1,2,3,4,5",
        "--b",
        "1,2,3,4,5",
        "--prizes",
        "1,2,3,4,5",
        "--diff",
        "0",
        "--max-on-demand-games",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("over the limit of 10"),
        "{}",
        stderr(&out)
    );
    // bad input: exit 2
    for args in [
        vec!["value", "--a", "1,2", "--b", "1,2,3", "--prizes", "1,2"],
        vec!["book", "--from-layer", "3", "--out", "/nonexistent/x"],
    ] {
        let mut args = args;
        args.extend(["--db", book.to_str().unwrap()]);
        assert_eq!(gops(&args).status.code(), Some(2), "{args:?}");
    }
    assert!(
        gops(&[
            "solve",
            "-n",
            "8",
            "--objective",
            "win",
            "--db",
            book.to_str().unwrap()
        ])
        .status
        .code()
            == Some(2)
    );
    assert_eq!(snapshot(&book), before, "the book is never written");
}
