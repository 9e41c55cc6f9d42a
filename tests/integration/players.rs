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
