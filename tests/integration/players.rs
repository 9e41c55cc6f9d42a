//! The players' commands end to end: agents by their names and aliases, `simulate
//! --record` feeding `gops fit`, and the refusals of bad models and bad games files.

use serde_json::Value;

use crate::support::{gops, gops_ok, solve, stderr, temp_db};

#[test]
fn old_names_are_aliases_and_outputs_use_the_new_ones() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    let db = db.to_str().unwrap();
    let run = |a: &str, b: &str| -> Value {
        let out = gops_ok(&[
            "simulate", "--db", db, "--a", a, "--b", b, "--games", "500", "--seed", "3", "--json",
        ]);
        serde_json::from_str(out.trim()).unwrap()
    };
    let old = run("optimal", "match");
    let new = run("equilibrium", "upcard");
    assert_eq!(old, new, "an alias plays the very same games");
    assert_eq!(
        (new["a"].as_str(), new["b"].as_str()),
        (Some("equilibrium"), Some("upcard"))
    );
    let mixed = run("equilibrium", "0.6*upcard+0.4*uniform");
    assert_eq!(mixed["b"], "0.4*uniform+0.6*upcard");
    for (bad, said) in [
        ("bluff", "unknown agent"),
        ("0.6*upcard+0.5*uniform", "sum to"),
        ("0.5*upcard+0.5*match", "named twice"),
        ("-0.5*upcard+1.5*uniform", "between 0 and 1"),
        ("fit:/nonexistent/games.jsonl", "cannot read"),
    ] {
        let b = format!("--b={bad}");
        let out = gops(&["simulate", "--db", db, "--a", "uniform", &b, "--games", "1"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains(said), "{bad}: {}", stderr(&out));
    }
}

#[test]
fn recorded_games_are_fitted_and_a_bad_line_is_named() {
    let (dir, db) = temp_db();
    solve(&db, 6, &[]);
    let db = db.to_str().unwrap();
    let games = dir.path().join("games.jsonl");
    let games = games.to_str().unwrap();
    gops_ok(&[
        "simulate",
        "--db",
        db,
        "--a",
        "equilibrium",
        "--b",
        "0.7*upcard-plus-one+0.3*uniform",
        "--games",
        "300",
        "--seed",
        "5",
        "--record",
        games,
    ]);
    let fit: Value =
        serde_json::from_str(gops_ok(&["fit", "--games", games, "--json"]).trim()).unwrap();
    assert_eq!(fit["decisions"], 1800, "{fit}");
    let w = &fit["weights"];
    assert!(
        (w["upcard-plus-one"].as_f64().unwrap() - 0.7).abs() <= 0.1,
        "{fit}"
    );
    assert!((w["uniform"].as_f64().unwrap() - 0.3).abs() <= 0.1, "{fit}");
    assert!(fit["log_likelihood"].as_f64().unwrap() < 0.0);
    // the fitted model plays as an agent: `fit:FILE`
    let model = format!("fit:{games}");
    let out = gops_ok(&[
        "simulate", "--db", db, "--a", "uniform", "--b", &model, "--games", "10", "--json",
    ]);
    let simulated: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(
        simulated["b"].as_str().unwrap().contains("upcard-plus-one"),
        "{simulated}"
    );
    // an illegal bid on line 2 is named, exit 2
    let text = std::fs::read_to_string(games).unwrap();
    let mut lines: Vec<String> = text.lines().take(3).map(str::to_string).collect();
    let second: Value = serde_json::from_str(&lines[1]).unwrap();
    let history_bid = second["history"][0]["bid"].as_u64().unwrap();
    lines[1] = lines[1].replace(
        &format!(r#""bid":{}}}"#, second["bid"]),
        &format!(r#""bid":{history_bid}}}"#),
    );
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = gops(&["fit", "--games", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("line 2") && stderr(&out).contains("illegal bid"),
        "{}",
        stderr(&out)
    );
}

/// The coach's input for one game: each upcard (a random order), Enter for the advised
/// bid, the opponent bidding the upcard; bad entries first, asked again.
fn coached_game(seed: u64) -> String {
    let mut prizes: Vec<u8> = (1..=13).collect();
    let mut x = seed;
    for i in (1..prizes.len()).rev() {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        prizes.swap(i, (x >> 33) as usize % (i + 1));
    }
    let mut input = String::from("99\nace\n");
    for p in prizes {
        input.push_str(&format!("{p}\n\n{p}\n"));
    }
    input
}

/// Runs `gops coach` on a pseudo-terminal (`script`, util-linux), or with stdin a pipe
/// where `script` is missing; its transcript.
fn coach_in_a_terminal(args: &[&str], input: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let bin = env!("CARGO_BIN_EXE_gops");
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut child = if has_script {
        let line: Vec<String> = std::iter::once(bin.to_string())
            .chain(args.iter().map(|a| format!("'{a}'")))
            .collect();
        Command::new("script")
            .args(["-qec", &line.join(" "), "/dev/null"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    } else {
        eprintln!("no `script` on PATH: the coach runs with stdin a pipe");
        Command::new(bin)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

#[test]
fn a_whole_13_card_game_is_coached_in_a_terminal_and_its_session_continues() {
    let book = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/books/points-13");
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    let (book, session_arg) = (book.to_str().unwrap(), session.to_str().unwrap());
    let args = [
        "coach",
        "--db",
        book,
        "--learn",
        "--session",
        session_arg,
        "--seed",
        "2",
    ];
    let transcript = coach_in_a_terminal(&args, &(coached_game(1) + "n\n"));
    assert!(
        transcript.contains("'99' is not one of 1,2,3"),
        "{transcript}"
    );
    assert!(transcript.contains("'ace' is not one of"), "{transcript}");
    // a terminal echoes the typed lines where they fall: count what the coach says
    assert_eq!(
        transcript.matches("on this decision; banked").count(),
        13,
        "{transcript}"
    );
    assert_eq!(transcript.matches("advice: bid ").count(), 13);
    assert!(transcript.contains("game over: you "), "{transcript}");
    assert!(transcript.contains("they bid like"), "{transcript}");
    // bidding the upcard: the fit puts all its weight on the rules that bid it
    let fit: Value =
        serde_json::from_str(gops_ok(&["fit", "--games", session_arg, "--json"]).trim()).unwrap();
    assert_eq!(fit["decisions"], 13);
    let w = &fit["weights"];
    let upcard_like = w["upcard"].as_f64().unwrap() + w["greedy"].as_f64().unwrap();
    assert!(upcard_like > 0.99, "{fit}");
    // the next run continues the session: game 2, the first game's decisions known
    let again = coach_in_a_terminal(&args, "q\n");
    assert!(again.contains("13 of their decisions so far"), "{again}");
    assert!(again.contains("game 2"), "{again}");
    // a wrong session is refused, the file left as it was
    let before = std::fs::read(&session).unwrap();
    std::fs::write(dir.path().join("bad.jsonl"), "{\"bid\": 3}\n").unwrap();
    let bad = dir.path().join("bad.jsonl");
    let out = gops(&[
        "coach",
        "--db",
        book,
        "--learn",
        "--session",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("session line 1"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&session).unwrap(), before);
}

#[test]
fn respond_answers_from_any_state_and_refuses_past_its_limit_before_any_work() {
    let (_dir, db) = temp_db();
    solve(&db, 7, &[]);
    let db = db.to_str().unwrap();
    let start: Value = serde_json::from_str(
        gops_ok(&["respond", "--db", db, "--opponent", "match", "--json"]).trim(),
    )
    .unwrap();
    // one above each prize and the ace on the 7: 1+...+6 - 7 = 14
    assert_eq!(start["best_response"], 14.0, "{start}");
    assert_eq!(start["opponent"], "upcard");
    let equilibrium = start["equilibrium"].as_f64().unwrap();
    assert!(equilibrium > 0.0 && equilibrium < 14.0, "{start}");
    assert!(
        start["exploitability"].as_f64().unwrap() > 0.0,
        "a pure best response is exploitable"
    );
    // from a later state: B holds the prizes left, as the rule leaves it
    let later: Value = serde_json::from_str(
        gops_ok(&[
            "respond",
            "--db",
            db,
            "--opponent",
            "upcard",
            "--a",
            "1,2,6",
            "--b",
            "3,4,7",
            "--prizes",
            "3,4,7",
            "--diff",
            "5",
            "--json",
        ])
        .trim(),
    )
    .unwrap();
    assert_eq!(later["prizes"], serde_json::json!([3, 4, 7]));
    assert!(later["states"].as_u64().unwrap() < 50, "{later}");
    // past either walk's limit, a refusal before the db is walked, with its estimate:
    // on the shipped 13-card points book, from the start, a rule whose hands depend on
    // the prizes' order (the sparse walk), and a uniform part (every state, by layers)
    let book = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/books/points-13");
    let book = book.to_str().unwrap();
    for (model, says) in [
        ("upcard-drift", "may walk up to 124,143,762 concrete states"),
        (
            "0.5*upcard+0.5*upcard-drift",
            "127,551,608 concrete states, more than the 100,000,000 it holds in memory: start from a later state (--a, --b, --prizes), or a model of fewer rules",
        ),
        (
            "0.5*upcard+0.5*uniform",
            "10,106,059,392 at once here (15,148,345,759 in all)",
        ),
    ] {
        let out = gops(&["respond", "--db", book, "--opponent", model]);
        assert_eq!(out.status.code(), Some(1), "{model}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{model}: {}", stderr(&out));
        // a single rule is told only of a later state
        let fewer = stderr(&out).contains("fewer rules");
        assert_eq!(
            fewer,
            model.contains('+') && !model.contains("uniform"),
            "{model}"
        );
    }
    // a bad model and a bad state are input errors
    for bad in [
        vec!["--opponent", "bluff"],
        vec!["--opponent", "upcard", "--a", "1,2", "--b", "1"],
    ] {
        let mut args = vec!["respond", "--db", db];
        args.extend(bad.iter().copied());
        assert_eq!(gops(&args).status.code(), Some(2), "{bad:?}");
    }
}
