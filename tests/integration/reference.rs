//! Values and strategies as the product serves them (solved by `gops solve`, read back
//! through the store and the `value`/`strategy` commands) against the fixtures.

use gops_common::cards::CardSet;
use gops_common::state::GameState;
use gops_db::book::{Book, ReadOptions};

use serde_json::Value;

use crate::support::{fixture, gops_ok, solve, state_query, temp_db};

fn cards(v: &Value) -> Vec<u8> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as u8)
        .collect()
}

/// What `gops value --json` prints for a fixture line's state.
fn value_json(db: &std::path::Path, f: &Value) -> Value {
    let (a, b, c) = (cards(&f["a"]), cards(&f["b"]), cards(&f["c"]));
    state_query(db, (&a, &b, &c), f["d"].as_i64().unwrap(), None)
}

/// Checks every fixture line's value against the db's, within 1e-9.
fn check_fixture_values(db: &std::path::Path, n: u8, lines: &[Value]) {
    let book = Book::open(db, &ReadOptions::default()).unwrap();
    for f in lines {
        let state = GameState::new(
            n,
            CardSet::from_cards(&cards(&f["a"])),
            CardSet::from_cards(&cards(&f["b"])),
            CardSet::from_cards(&cards(&f["c"])),
            f["d"].as_i64().unwrap(),
        )
        .unwrap();
        let got = book.value(&state).unwrap();
        let want = f["value"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-9, "{f}: got {got}");
    }
}

#[test]
fn every_points_n6_fixture_state_from_the_db() {
    let (_dir, db) = temp_db();
    solve(&db, 6, &[]);
    let text = std::fs::read_to_string(fixture("points_n6.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 500);
    check_fixture_values(&db, 6, &lines);
    // the command line prints the same values, with the DESIGN §6 fields
    for f in lines.iter().step_by(50) {
        let v = value_json(&db, f);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["a", "b", "diff", "n", "objective", "prizes", "value"]
        );
        assert_eq!(
            (v["n"].as_u64(), v["objective"].as_str()),
            (Some(6), Some("points"))
        );
        assert_eq!(
            (&v["a"], &v["b"], &v["prizes"]),
            (&f["a"], &f["b"], &f["c"])
        );
        assert_eq!(v["diff"], 0);
        assert!((v["value"].as_f64().unwrap() - f["value"].as_f64().unwrap()).abs() <= 1e-9);
    }
}

#[test]
fn first_moves_from_the_strategy_command() {
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("first_move.json")).unwrap())
            .unwrap();
    for n in [4u8, 5] {
        let (_dir, db) = temp_db();
        solve(&db, n, &[]);
        for upcard in 1..=n {
            let entry = &fixture["points"][n.to_string()][upcard.to_string()];
            let out = gops_ok(&[
                "strategy",
                "--db",
                db.to_str().unwrap(),
                "--upcard",
                &upcard.to_string(),
                "--json",
            ]);
            let v: Value = serde_json::from_str(&out).unwrap();
            for key in [
                "n",
                "objective",
                "a",
                "b",
                "prizes",
                "diff",
                "value",
                "upcard",
                "gap",
            ] {
                assert!(v.get(key).is_some(), "strategy --json lacks {key}: {v}");
            }
            assert_eq!(v["upcard"], upcard);
            assert!(v["gap"].as_f64().unwrap() <= 1e-9);
            let got: Vec<f64> = v["strategy_a"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .collect();
            let b: Vec<f64> = v["strategy_b"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .collect();
            assert_eq!((got.len(), b.len()), (n as usize, n as usize));
            let want: Vec<f64> = entry["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .collect();
            assert!(
                entry["unique"].as_bool().unwrap(),
                "points N=4,5 first moves are unique"
            );
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-6,
                    "n={n} upcard={upcard}: {got:?} vs {want:?}"
                );
            }
        }
    }
}

#[test]
fn human_readable_outputs() {
    let (_dir, db) = temp_db();
    let out = gops_ok(&["solve", "--n", "3", "--db", db.to_str().unwrap()]);
    assert!(out.contains("solved the 3-card points game"), "{out}");
    assert!(out.contains("value of the game for A: 0"), "{out}");
    assert!(out.contains("upcard  3: 3:1.000000"), "{out}");
    let out = gops_ok(&["status", "--db", db.to_str().unwrap()]);
    assert!(
        out.contains("3-card points game in") && out.contains(": complete"),
        "{out}"
    );
    let out = gops_ok(&[
        "value",
        "--db",
        db.to_str().unwrap(),
        "--a",
        "1,3",
        "--b",
        "2,3",
        "--prizes",
        "2,3",
    ]);
    assert!(out.trim_end().ends_with(": -1.4"), "{out}");
}

#[test]
fn win_n5_fixture_states_from_the_db_and_the_command_line() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &["--objective", "win"]);
    let text = std::fs::read_to_string(fixture("win_n5.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    check_fixture_values(&db, 5, &lines);
    for f in lines.iter().step_by(60) {
        let v = value_json(&db, f);
        assert_eq!(
            (v["objective"].as_str(), &v["diff"]),
            (Some("win"), &f["d"])
        );
        assert!((v["value"].as_f64().unwrap() - f["value"].as_f64().unwrap()).abs() <= 1e-9);
    }
    // a strategy at a non-zero score difference carries it in its JSON
    let out = gops_ok(&[
        "strategy",
        "--db",
        db.to_str().unwrap(),
        "--a",
        "1,3",
        "--b",
        "2,3",
        "--prizes",
        "2,3",
        "--diff",
        "1",
        "--upcard",
        "3",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["diff"], 1);
    assert!(v["gap"].as_f64().unwrap() <= 1e-9);
}
