//! `gops arena` through the command line: the example bot of the docs plays through the
//! protocol and its records add up to the summary; the equilibrium as a built-in loses
//! nothing; a bot that crashes, hangs, answers garbage or bids illegally forfeits its
//! games with the fault named and the db unchanged; a bot behind a URL; bad flags exit 2;
//! a book that cannot answer stops the run before the first game.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{gops, gops_ok, snapshot, solve, stderr, temp_db};

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The decision records and the summary of `gops arena ... --json`.
fn records(out: &str) -> (Vec<Value>, Value) {
    let mut lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().expect("a summary line");
    assert_eq!(summary["kind"], "summary", "{summary}");
    assert!(lines.iter().all(|l| l["kind"] == "decision"));
    (lines, summary)
}

fn arena(db: &Path, extra: &[&str]) -> (Vec<Value>, Value) {
    let mut args = vec!["arena", "--db", db.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    records(&gops_ok(&args))
}

#[test]
fn the_example_bot_plays_through_the_protocol_and_its_records_add_up() {
    let (_dir, db) = temp_db();
    solve(&db, 6, &[]);
    let bot = format!(
        "python3 {}",
        repo_file("examples/bots/upcard_bot.py").display()
    );
    let (decisions, summary) = arena(&db, &["--bot", &bot, "--games", "200", "--seed", "1"]);
    assert_eq!(summary["games"], 200);
    assert_eq!(summary["bot_faults"], 0, "{summary}");
    assert_eq!(decisions.len(), 200 * 6);
    for key in [
        "mean_result",
        "mean_loss",
        "result_ci95",
        "loss_ci95",
        "worst_decisions",
    ] {
        assert!(!summary[key].is_null(), "{key}");
    }
    let total: f64 = decisions.iter().map(|d| d["loss"].as_f64().unwrap()).sum();
    let mean = summary["mean_loss"].as_f64().unwrap();
    assert!((total / 200.0 - mean).abs() < 1e-9, "{total} v {mean}");
    assert!(mean > 0.0);
    // the bot's rule, seen in the records: the card nearest the upcard, or the one above
    for d in &decisions {
        let (hand, upcard) = (d["hand"].as_array().unwrap(), d["upcard"].as_i64().unwrap());
        let bid = d["bid"].as_i64().unwrap();
        let nearest = hand
            .iter()
            .map(|c| c.as_i64().unwrap())
            .min_by_key(|&c| ((c - upcard).abs(), c))
            .unwrap();
        let above = hand
            .iter()
            .map(|c| c.as_i64().unwrap())
            .min_by_key(|&c| ((c - upcard - 1).abs(), c))
            .unwrap();
        assert!(bid == nearest || bid == above, "{d}");
    }
    let worst = &summary["worst_decisions"][0];
    assert!(
        worst["explorer"].as_str().unwrap().starts_with("/?a="),
        "{worst}"
    );
    // the same run on one thread: the same numbers
    let (_, one) = arena(
        &db,
        &[
            "--bot",
            &bot,
            "--games",
            "200",
            "--seed",
            "1",
            "--threads",
            "1",
        ],
    );
    for key in [
        "mean_result",
        "mean_loss",
        "result_ci95",
        "loss_ci95",
        "worst_decisions",
    ] {
        assert_eq!(one[key], summary[key], "{key}");
    }
    // and the text report
    let text = gops_ok(&[
        "arena",
        "--db",
        db.to_str().unwrap(),
        "--bot",
        &bot,
        "--games",
        "20",
        "--seed",
        "1",
    ]);
    assert!(text.contains("20 games of 6-card GOPS (points)"), "{text}");
    assert!(text.contains("worst decisions"), "{text}");
}

#[test]
fn the_equilibrium_as_a_bot_loses_nothing() {
    let (_dir, db) = temp_db();
    solve(&db, 6, &["--objective", "win"]);
    let (decisions, summary) = arena(
        &db,
        &["--builtin", "equilibrium", "--games", "100", "--seed", "2"],
    );
    assert!(
        summary["mean_loss"].as_f64().unwrap().abs() < 1e-9,
        "{summary}"
    );
    for d in &decisions {
        assert!(d["loss"].as_f64().unwrap().abs() < 1e-9, "{d}");
    }
    let (_, pure) = arena(
        &db,
        &[
            "--builtin",
            "equilibrium-pure",
            "--games",
            "100",
            "--seed",
            "2",
        ],
    );
    assert!(pure["mean_loss"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_bot_that_crashes_hangs_or_answers_wrong_forfeits_and_the_db_is_unchanged() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    let before = snapshot(&db);
    for (bot, kind) in [
        ("exit 3", "crashed"),
        ("while read l; do echo hello; done", "malformed"),
        ("while read l; do echo '{\"bid\": 99}'; done", "illegal"),
        ("sleep 30", "timed_out"),
        (
            "while read l; do echo '{\"distribution\": {\"1\": 0.5}}'; done",
            "illegal",
        ),
    ] {
        let (decisions, summary) = arena(
            &db,
            &[
                "--bot",
                bot,
                "--games",
                "3",
                "--seed",
                "1",
                "--timeout-ms",
                "300",
            ],
        );
        assert_eq!(summary["bot_faults"], 3, "{bot}: {summary}");
        assert_eq!(summary["faults_by_kind"][kind], 3, "{bot}: {summary}");
        assert_eq!(
            decisions.len(),
            3,
            "each game forfeited at its first decision"
        );
        assert!(
            decisions
                .iter()
                .all(|d| d["fault"].is_string() && d["bid"].is_null())
        );
        // the opponent took every prize: -(1 + ... + 5)
        assert_eq!(summary["mean_result"], -15.0, "{bot}");
        assert_eq!(summary["first_faults"].as_array().unwrap().len(), 3);
    }
    assert_eq!(snapshot(&db), before, "the arena wrote nothing to the db");
}

/// One connection of the service: each request (keep-alive: several on one
/// connection) answered with the lowest card of its hand, until the client closes it.
fn serve_lowest_card(mut stream: std::net::TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let request: Value = serde_json::from_slice(&body).unwrap();
        let reply = format!("{{\"bid\": {}}}", request["hand"][0]);
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
            reply.len()
        );
    }
}

/// A bot service on 127.0.0.1: it bids the lowest card of each request it is sent.
fn lowest_card_service() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || serve_lowest_card(stream));
        }
    });
    format!("http://{address}/decide")
}

#[test]
fn a_bot_behind_a_url_plays_one_post_a_decision() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &["--objective", "win"]);
    let url = lowest_card_service();
    let (decisions, summary) = arena(&db, &["--bot-url", &url, "--games", "40", "--seed", "5"]);
    assert_eq!(summary["bot_faults"], 0, "{summary}");
    assert_eq!(decisions.len(), 40 * 5);
    for d in &decisions {
        assert_eq!(d["bid"], d["hand"][0], "{d}");
    }
    // nobody listening: every game forfeited, the run still reports
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}/decide", closed.local_addr().unwrap());
    drop(closed);
    let (_, summary) = arena(&db, &["--bot-url", &gone, "--games", "2", "--seed", "5"]);
    assert_eq!(summary["faults_by_kind"]["transport"], 2, "{summary}");
}

#[test]
fn bad_flags_exit_2_and_a_book_that_cannot_answer_stops_before_the_first_game() {
    let (dir, db) = temp_db();
    solve(&db, 7, &[]);
    let d = db.to_str().unwrap();
    for args in [
        vec!["arena", "--db", d],
        vec!["arena", "--db", d, "--builtin", "uniform", "--bot", "cat"],
        vec!["arena", "--db", d, "--bot-url", "https://example.org/bot"],
        vec!["arena", "--db", d, "--builtin", "nobody"],
        vec!["arena", "--db", d, "--builtin", "uniform", "--games", "0"],
        vec!["arena", "--db", "/nonexistent/db", "--builtin", "uniform"],
    ] {
        let out = gops(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    let book = dir.path().join("book");
    gops_ok(&[
        "book",
        "--db",
        d,
        "--from-layer",
        "6",
        "--out",
        book.to_str().unwrap(),
    ]);
    let out = gops(&[
        "arena",
        "--db",
        book.to_str().unwrap(),
        "--builtin",
        "uniform",
        "--games",
        "5",
        "--max-on-demand-games",
        "10",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "no game was played");
    assert!(stderr(&out).contains("cannot answer"), "{}", stderr(&out));
    // within the limits the book plays as the full db does
    let (_, on_book) = arena(
        &book,
        &["--builtin", "uniform", "--games", "30", "--seed", "9"],
    );
    let (_, on_full) = arena(
        &db,
        &["--builtin", "uniform", "--games", "30", "--seed", "9"],
    );
    assert_eq!(on_book["mean_loss"], on_full["mean_loss"]);
    assert_eq!(on_book["mean_result"], on_full["mean_result"]);
}
