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
    gops, make_book, snapshot, solve, spawn_with_input, state_query, status_json, stderr, temp_db,
};

/// States along random games of the `n`-card game with fewer than `below` cards left,
/// each with an upcard.
fn states_below(n: u8, below: u8, count: usize) -> Vec<(GameState, u8)> {
    let mut rng = StdRng::seed_from_u64(52);
    random_game_states(n, count, &mut rng, |s| s.k() < below)
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

#[test]
fn the_explorer_lists_the_solves_under_way_and_none_once_answered() {
    let (dir, full) = temp_db();
    solve(&full, 9, &["--objective", "win"]);
    let book = dir.path().join("book");
    make_book(&full, 8, &book);
    let served = crate::serve::Served::start(&book, &[]);
    assert_eq!(
        served.json("/api/solving"),
        serde_json::json!({ "solving": [], "solves": 0 })
    );
    // the subtree of a state with 7 cards left, asked while the list is polled
    let (state, upcard) = states_below(9, 8, 1).remove(0);
    let path = strategy_path(&state, upcard);
    let address = served.address.clone();
    let asked = std::thread::spawn(move || crate::serve::http(&address, "GET", &path, None));
    while !asked.is_finished() {
        // whatever the poll catches is a solve of that state's subtree
        for solve in served.json("/api/solving")["solving"].as_array().unwrap() {
            assert_eq!(solve["cards_left"], state.k());
            assert_eq!(solve["prizes"], serde_json::json!(state.prizes.to_vec()));
            assert!(solve["done"].as_u64().unwrap() <= solve["total"].as_u64().unwrap());
        }
    }
    let (status, body) = asked.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        served.json("/api/solving"),
        serde_json::json!({ "solving": [], "solves": 1 })
    );
}

/// The explorer API's path of `state`'s strategies after `upcard`.
fn strategy_path(state: &GameState, upcard: u8) -> String {
    let join = |cards: Vec<u8>| {
        cards
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "/api/strategy?a={}&b={}&prizes={}&diff={}&upcard={upcard}",
        join(state.a.to_vec()),
        join(state.b.to_vec()),
        join(state.prizes.to_vec()),
        state.diff
    )
}

#[test]
fn eight_clients_asking_at_once_for_one_subtree_share_one_solve() {
    let (dir, full) = temp_db();
    solve(&full, 9, &["--objective", "win"]);
    let book = dir.path().join("book");
    make_book(&full, 8, &book);
    let served = crate::serve::Served::start(&book, &[]);
    let full_served = crate::serve::Served::start(&full, &[]);
    // a state with 7 cards left: 8 clients ask for its strategies, one upcard each (the
    // first upcard twice), all read that state's subtree
    let (state, _) = states_below(9, 8, 40)
        .into_iter()
        .find(|(s, _)| s.k() == 7)
        .expect("a state with 7 cards left");
    let upcards: Vec<u8> = state.prizes.iter().collect();
    let paths: Vec<String> = (0..8)
        .map(|i| strategy_path(&state, upcards[i % upcards.len()]))
        .collect();
    let start = std::sync::Barrier::new(paths.len());
    let answers: Vec<(u16, String)> = std::thread::scope(|scope| {
        let asked: Vec<_> = paths
            .iter()
            .map(|path| {
                let (address, start) = (served.address.clone(), &start);
                scope.spawn(move || {
                    start.wait();
                    crate::serve::http(&address, "GET", path, None)
                })
            })
            .collect();
        asked.into_iter().map(|a| a.join().unwrap()).collect()
    });
    assert_eq!(
        served.json("/api/solving"),
        serde_json::json!({ "solving": [], "solves": 1 }),
        "one solve for the 8 clients"
    );
    for ((status, body), path) in answers.iter().zip(&paths) {
        assert_eq!(*status, 200, "{body}");
        let want = full_served.get(path);
        assert_eq!(
            (*status, body),
            (want.0, &want.1),
            "{path}: the full db's answer"
        );
    }
}

/// The shipped 13-card win book, from the repository as a clone has it: a whole game
/// against the equilibrium, the rounds below its layers solved on demand (the subtree of
/// the state with 10 cards left once, about a minute on 2 cores, then the rest from it).
#[test]
fn the_shipped_13_card_win_book_plays_a_whole_game() {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/books/win-13");
    let before = snapshot(&book);
    let bids: String = (1..=13).map(|c| format!("{c}\n")).collect();
    let child = spawn_with_input(
        &["play", "--db", book.to_str().unwrap(), "--seed", "13"],
        &bids,
    );
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("final") || text.contains("Final"), "{text}");
    // rounds 3 to 13 read layers below the book's: only a solve on demand answers them
    assert!(text.contains("round 13: prize"), "{text}");
    assert_eq!(
        snapshot(&book),
        before,
        "a reader never changes what it reads"
    );
}
