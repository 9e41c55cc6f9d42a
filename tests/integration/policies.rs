//! `gops play`, `gops simulate` and `gops exploit` on small solved games: a scripted game
//! to its end with the score recomputed from the transcript, optimal against itself
//! centred on 0, and exploitability 0 for the equilibrium and a hand-computed value for
//! the random policy.

use std::path::Path;

use serde_json::Value;

use crate::support::{gops, gops_ok, solve, spawn_with_input, stderr, temp_db};

fn play(db: &Path, seed: &str, input: &str) -> (i32, String) {
    let child = spawn_with_input(
        &["play", "--db", db.to_str().unwrap(), "--seed", seed],
        input,
    );
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The numbers after `key` in `line` ("prize 4," → 4).
fn number_after(line: &str, key: &str) -> u32 {
    let rest = &line[line.find(key).unwrap() + key.len()..];
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_scripted_game_runs_to_the_end_with_the_right_score() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    // bad answers first (asked again), a request for the bot's probabilities, then the
    // cards in order: each is valid in its round
    let (code, transcript) = play(&db, "7", "x\n?\n9\n0\n\n1\n2\n?\n3\n4\n5\n");
    assert_eq!(code, 0, "{transcript}");
    assert!(
        transcript.contains("'x' is not one of your cards"),
        "{transcript}"
    );
    assert!(
        transcript.contains("'9' is not one of your cards"),
        "{transcript}"
    );
    assert!(transcript.contains("bot bids  "), "{transcript}");
    let reveals: Vec<&str> = transcript
        .lines()
        .filter(|l| l.starts_with("round ") && l.contains(", you bid "))
        .collect();
    assert_eq!(reveals.len(), 5, "{transcript}");
    let (mut you, mut bot) = (0, 0);
    let (mut prizes, mut bot_cards) = (Vec::new(), Vec::new());
    for (i, line) in reveals.iter().enumerate() {
        let prize = number_after(line, "prize");
        let mine = number_after(line, "you bid");
        let theirs = number_after(line, "bot bid");
        assert_eq!(mine, i as u32 + 1, "{line}");
        if mine > theirs {
            you += prize;
        } else if theirs > mine {
            bot += prize;
        }
        prizes.push(prize);
        bot_cards.push(theirs);
    }
    prizes.sort();
    bot_cards.sort();
    assert_eq!(prizes, [1, 2, 3, 4, 5], "every prize turned up once");
    assert_eq!(bot_cards, [1, 2, 3, 4, 5], "the bot bid each card once");
    let last = transcript.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("final score: you {you}, bot {bot}")),
        "{last} vs {you}:{bot}"
    );

    // the same seed and answers give the same game
    assert_eq!(
        play(&db, "7", "1\n2\n3\n4\n5\n").1.lines().last().unwrap(),
        last
    );

    // end of input mid-game ends it cleanly
    let (code, transcript) = play(&db, "7", "1\n");
    assert_eq!(code, 0);
    let last = transcript.lines().last().unwrap();
    assert!(
        last.starts_with("game abandoned after 1 round, 4 prizes unplayed: score you "),
        "{transcript}"
    );
    assert!(
        !last.contains("win") && !last.contains("draw") && !transcript.contains("final score"),
        "an abandoned game has no winner: {transcript}"
    );
}

fn simulate(db: &Path, a: &str, b: &str, games: &str) -> Value {
    serde_json::from_str(&gops_ok(&[
        "simulate",
        "--db",
        db.to_str().unwrap(),
        "--a",
        a,
        "--b",
        b,
        "--games",
        games,
        "--seed",
        "11",
        "--json",
    ]))
    .unwrap()
}

#[test]
fn optimal_against_itself_is_centred_on_zero_and_beats_random() {
    let (_dir, db) = temp_db();
    solve(&db, 6, &[]);
    let even = simulate(&db, "optimal", "optimal", "4000");
    let s = &even["score_difference"];
    assert!(
        s["low"].as_f64().unwrap() <= 0.0 && 0.0 <= s["high"].as_f64().unwrap(),
        "{even}"
    );
    let counted = ["wins", "draws", "losses"]
        .iter()
        .map(|k| even[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(counted, 4000);
    // `outcome` is the mean of +1 a win, -1 a loss
    let wins_less_losses = even["wins"].as_f64().unwrap() - even["losses"].as_f64().unwrap();
    let outcome = &even["outcome"];
    assert!((outcome["mean"].as_f64().unwrap() - wins_less_losses / 4000.0).abs() < 1e-12);
    assert!(outcome["low"].as_f64().unwrap() < outcome["mean"].as_f64().unwrap());
    // the equilibrium guarantees value 0; against a random bidder it gains points
    let lopsided = simulate(&db, "optimal", "random", "4000");
    assert!(
        lopsided["score_difference"]["low"].as_f64().unwrap() > 0.0,
        "{lopsided}"
    );
    assert!(
        lopsided["win_rate"]["rate"].as_f64().unwrap()
            > lopsided["loss_rate"]["rate"].as_f64().unwrap()
    );
}

fn exploit(db: &Path, policy: &str) -> Value {
    serde_json::from_str(&gops_ok(&[
        "exploit",
        "--db",
        db.to_str().unwrap(),
        "--policy",
        policy,
        "--json",
    ]))
    .unwrap()
}

#[test]
fn the_equilibrium_cannot_be_exploited() {
    for (n, objective) in [(6, "points"), (5, "win")] {
        let (_dir, db) = temp_db();
        solve(&db, n, &["--objective", objective]);
        let result = exploit(&db, "optimal");
        assert!(
            result["exploitability"].as_f64().unwrap().abs() <= 1e-9,
            "{objective} {n}: {result}"
        );
        for policy in ["random", "match", "greedy", "plus-one"] {
            let result = exploit(&db, policy);
            assert!(
                result["exploitability"].as_f64().unwrap() > 1e-3,
                "{objective} {n} {policy}: {result}"
            );
        }
    }
}

/// Two cards. A bids at random; B sees the prize c (the other prize is c'). If both bid
/// alike, the second round ties too: 0. If A bids 2 on c and B 1, A wins c and loses
/// c': c - c'; the reverse gives c' - c. B bidding 1 gets (0 + (c - c')) / 2, bidding 2
/// gets ((c' - c) + 0) / 2; B takes the smaller, -|c - c'| / 2 = -1/2 for both prizes.
/// So the random policy's value is -1/2 and, the game's value being 0, B gains 1/2.
/// With `win` the same play gives sign(c - c') in place of c - c': again -1/2.
#[test]
fn random_policy_exploitability_matches_the_hand_computation() {
    for objective in ["points", "win"] {
        let (_dir, db) = temp_db();
        solve(&db, 2, &["--objective", objective]);
        let result = exploit(&db, "random");
        assert_eq!(result["game_value"].as_f64().unwrap(), 0.0);
        assert!(
            (result["policy_value"].as_f64().unwrap() + 0.5).abs() < 1e-12,
            "{objective}: {result}"
        );
        assert!((result["exploitability"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    }
}

#[test]
fn policy_commands_refuse_bad_input() {
    let (dir, db) = temp_db();
    let missing = dir.path().join("nothing");
    for args in [
        vec!["play", "--db", missing.to_str().unwrap()],
        vec![
            "simulate",
            "--db",
            missing.to_str().unwrap(),
            "--a",
            "optimal",
            "--b",
            "random",
            "--games",
            "10",
        ],
        vec![
            "exploit",
            "--db",
            missing.to_str().unwrap(),
            "--policy",
            "random",
        ],
    ] {
        let output = gops(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    solve(&db, 3, &[]);
    let db = db.to_str().unwrap();
    for args in [
        vec![
            "simulate", "--db", db, "--a", "bluff", "--b", "random", "--games", "10",
        ],
        vec![
            "simulate", "--db", db, "--a", "optimal", "--b", "random", "--games", "0",
        ],
        vec!["exploit", "--db", db, "--policy", "psychic"],
    ] {
        let output = gops(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    }
}
