//! `gops serve`: the query API answers what `gops value --json` and `gops strategy
//! --json` print for the same states, bad queries get a 400 with a one-line reason, a
//! token guards the page and the API, a reachable address without a token is refused,
//! a complete db is read as `value` reads it while a coordinator holds it, a missing one
//! refused alike, and a game against the bot runs through.
//! Also the helpers the browser test uses: a running server and a plain HTTP client.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Proc, gops, gops_ok, solve, stderr, temp_db};

/// A running `gops serve` and its address (`127.0.0.1:PORT`).
pub struct Served {
    /// The process, killed when this is dropped.
    _proc: Proc,
    pub address: String,
}

impl Served {
    /// `gops serve --db DB --listen 127.0.0.1:0` plus `extra`, once it listens.
    pub fn start(db: &Path, extra: &[&str]) -> Served {
        let mut args = vec![
            "serve",
            "--db",
            db.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(extra);
        let mut proc = Proc::spawn(&args);
        let line = proc.wait_for("explorer listening", |l| l.contains("explorer listening"));
        let address = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("address="))
            .expect("the listening line names its address")
            .to_string();
        Served {
            _proc: proc,
            address,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        http(&self.address, "GET", path, None)
    }

    pub fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap()
    }
}

/// One HTTP/1.1 request on a fresh connection: the status and the body.
pub fn http(address: &str, method: &str, path: &str, bearer: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("the server accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("a response with a head");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let chunked = head
        .lines()
        .any(|l| l.eq_ignore_ascii_case("transfer-encoding: chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// The query string of a state, as the API takes it.
fn state_query(a: &str, b: &str, prizes: &str, diff: i64) -> String {
    format!("a={a}&b={b}&prizes={prizes}&diff={diff}")
}

/// `gops value`/`gops strategy` with these flags, `--json`, parsed.
fn cli_json(db: &Path, command: &str, flags: &[&str]) -> Value {
    let mut args = vec![command, "--db", db.to_str().unwrap(), "--json"];
    args.extend_from_slice(flags);
    serde_json::from_str(&gops_ok(&args)).unwrap()
}

#[test]
fn the_api_answers_what_value_and_strategy_print() {
    for (n, objective, states) in [
        (
            5,
            "points",
            vec![
                ("1,2,3,4,5", "1,2,3,4,5", "1,2,3,4,5", 0, 5),
                ("1,3", "2,3", "2,3", 0, 3),
                ("2,4,5", "1,3,4", "1,2,5", 3, 2),
                ("5", "1", "4", -7, 4),
            ],
        ),
        (
            4,
            "win",
            vec![
                ("1,2,3,4", "1,2,3,4", "1,2,3,4", 0, 4),
                ("1,4", "2,3", "1,3", 2, 3),
                ("2,3,4", "1,2,4", "1,2,4", -3, 1),
                ("3", "4", "2", 1, 2),
            ],
        ),
    ] {
        let (_dir, db) = temp_db();
        solve(&db, n, &["--objective", objective]);
        // the db is held while it is served: the command line's answers first
        let mut expected = Vec::new();
        for &(a, b, prizes, diff, upcard) in &states {
            let diff_text = diff.to_string();
            let flags = ["--a", a, "--b", b, "--prizes", prizes, "--diff", &diff_text];
            let upcard_text = upcard.to_string();
            let mut with_upcard = flags.to_vec();
            with_upcard.extend(["--upcard", &upcard_text]);
            expected.push((
                state_query(a, b, prizes, diff),
                upcard,
                cli_json(&db, "value", &flags),
                cli_json(&db, "strategy", &with_upcard),
            ));
        }
        let defaults = cli_json(&db, "value", &[]);
        let default_strategy = cli_json(&db, "strategy", &["--upcard", "1"]);

        let served = Served::start(&db, &[]);
        for (query, upcard, value, strategy) in &expected {
            assert_eq!(
                &served.json(&format!("/api/value?{query}")),
                value,
                "{query}"
            );
            assert_eq!(
                &served.json(&format!("/api/strategy?{query}&upcard={upcard}")),
                strategy,
                "{query} upcard {upcard}"
            );
        }
        // left out: the full hands and diff 0, as on the command line
        assert_eq!(served.json("/api/value"), defaults);
        assert_eq!(served.json("/api/strategy?upcard=1"), default_strategy);
        let game = served.json("/api/game");
        assert_eq!(game["n"], n);
        assert_eq!(game["objective"], objective);
        assert_eq!(game["complete"], true);
        if objective == "win" {
            // 2 and 4 played: the difference is even; 1 cannot occur, and is refused
            // with the ones that can, by the API (400) as by the command line (exit 2)
            let query = state_query("1,4", "2,3", "1,3", 1);
            for path in [
                format!("/api/value?{query}"),
                format!("/api/strategy?{query}&upcard=3"),
            ] {
                let (status, body) = served.get(&path);
                assert_eq!(status, 400, "{path}: {body}");
                assert!(body.contains("cannot occur"), "{path}: {body}");
                assert!(body.contains("-6, -4, -2, 0, 2, 4, 6"), "{path}: {body}");
            }
        }
    }
}

#[test]
fn a_step_plays_the_round_and_lands_on_the_next_state() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    let next_value = cli_json(
        &db,
        "value",
        &[
            "--a", "1,2,4", "--b", "1,3,5", "--prizes", "1,2,3", "--diff", "-4",
        ],
    );
    let served = Served::start(&db, &[]);
    // B's 5 beats A's 3 on the prize 4
    let step =
        served.json("/api/step?a=1,2,3,4&b=1,3,4,5&prizes=1,2,3,4&diff=0&upcard=4&bid_a=3&bid_b=4");
    assert_eq!(
        step["round"],
        serde_json::json!({"upcard": 4, "bid_a": 3, "bid_b": 4, "won": -4})
    );
    let mut state = step.clone();
    state.as_object_mut().unwrap().remove("round");
    assert_eq!(state, next_value);
}

#[test]
fn bad_queries_get_a_400_with_one_line_of_reason() {
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    let served = Served::start(&db, &[]);
    for (path, reason) in [
        (
            "/api/value?a=1,9&b=1,2&prizes=1,2",
            "a: card 9 is outside 1..=5",
        ),
        (
            "/api/value?a=1,x&b=1,2&prizes=1,2",
            "a: 'x' is not a card number",
        ),
        ("/api/value?a=1,2&b=1,2,3&prizes=1,2", "same size"),
        ("/api/value?a=1,1&b=1,2&prizes=1,2", "listed twice"),
        ("/api/value?diff=16", "out of range"),
        ("/api/value?diff=abc", "diff: 'abc' is not a whole number"),
        ("/api/value?colour=red", "unknown parameter 'colour'"),
        ("/api/value?a=1&a=2", "given twice"),
        ("/api/value?a=%FF", "not UTF-8"),
        ("/api/value?%%%=1", "unknown parameter"),
        ("/api/strategy", "upcard is missing"),
        ("/api/strategy?upcard=9", "upcard 9 is not among the prizes"),
        ("/api/strategy?upcard=-1", "not among the prizes"),
        (
            "/api/strategy?upcard=three",
            "upcard: 'three' is not a whole number",
        ),
        (
            "/api/strategy?a=&b=&prizes=&upcard=1",
            "not among the prizes",
        ),
        ("/api/step?upcard=5&bid_a=5", "bid_b is missing"),
        (
            "/api/step?a=1,2&b=1,2&prizes=1,2&upcard=2&bid_a=3&bid_b=1",
            "bid_a: card 3 is not in A's hand",
        ),
        (
            "/api/step?upcard=5&bid_a=5&bid_b=0",
            "bid_b: card 0 is not in B's hand",
        ),
        ("/api/game?a=1", "unknown parameter 'a'"),
    ] {
        let (status, body) = served.get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains(reason), "{path}: {body}");
        assert_eq!(body.lines().count(), 1, "{path}: {body:?}");
    }
    let (status, _) = served.get("/nowhere");
    assert_eq!(status, 404);
    let (status, _) = http(&served.address, "POST", "/api/value", None);
    assert_eq!(status, 405);
    let (status, _) = served.get("/api/play/new");
    assert_eq!(status, 405, "a new game is a POST");
    for (path, want, reason) in [
        ("/api/play/bid?game=zz&card=1", 400, "not a game id"),
        ("/api/play/bid?card=1", 400, "game is missing"),
        ("/api/play/bid?game=0123456789abcdef&card=1", 404, "no game"),
        ("/api/play/new?seed=-3", 400, "negative"),
    ] {
        let (status, body) = http(&served.address, "POST", path, None);
        assert_eq!((status, body.lines().count()), (want, 1), "{path}: {body}");
        assert!(body.contains(reason), "{path}: {body}");
    }
    // still serving after all that
    assert_eq!(served.json("/api/game")["n"], 5);
}

#[test]
fn a_game_against_the_bot_runs_to_its_end() {
    let (_dir, db) = temp_db();
    solve(&db, 4, &[]);
    let served = Served::start(&db, &[]);
    let post = |path: &str| {
        let (status, body) = http(&served.address, "POST", path, None);
        (
            status,
            serde_json::from_str::<Value>(&body).unwrap_or(Value::String(body)),
        )
    };
    let (status, mut game) = post("/api/play/new?seed=11");
    assert_eq!(status, 200, "{game}");
    let id = game["game"].as_str().unwrap().to_string();
    // a card not in hand is refused and the game goes on
    let (status, _) = post(&format!("/api/play/bid?game={id}&card=9"));
    assert_eq!(status, 400);
    let mut rounds = 0;
    while game["over"] == false {
        let card = game["your_cards"][0].as_u64().unwrap();
        let upcard = game["upcard"].clone();
        let (status, next) = post(&format!("/api/play/bid?game={id}&card={card}"));
        assert_eq!(status, 200, "{next}");
        rounds += 1;
        let last = &next["rounds"][rounds - 1];
        assert_eq!(
            (&last["prize"], last["you"].as_u64()),
            (&upcard, Some(card))
        );
        game = next;
    }
    assert_eq!(rounds, 4);
    let (you, bot) = (game["you"].as_u64().unwrap(), game["bot"].as_u64().unwrap());
    assert!(you + bot <= 10, "{game}");
    assert!(game["result"].is_string(), "{game}");
    // an ended game is gone
    let (status, _) = post(&format!("/api/play/bid?game={id}&card=1"));
    assert_eq!(status, 404);
}

#[test]
fn a_token_guards_the_page_and_the_api() {
    let (dir, db) = temp_db();
    solve(&db, 3, &[]);
    let token_file = dir.path().join("token");
    // a base64 token: '+', '/' and '=' must survive the address bar
    std::fs::write(&token_file, "# the explorer's token\nab+c/d=\n").unwrap();
    let served = Served::start(&db, &["--token-file", token_file.to_str().unwrap()]);
    let address = served.address.as_str();
    for path in ["/", "/api/game", "/api/value", "/api/game?token=wrong"] {
        let (status, body) = http(address, "GET", path, None);
        assert_eq!(status, 401, "{path}: {body}");
        assert_eq!(body.lines().count(), 1, "{body}");
    }
    assert_eq!(http(address, "GET", "/api/game", Some("wrong")).0, 401);
    assert_eq!(http(address, "GET", "/api/game", Some("ab+c/d=")).0, 200);
    assert_eq!(http(address, "GET", "/api/game?token=ab+c/d=", None).0, 200);
    assert_eq!(
        http(
            address,
            "GET",
            "/api/value?a=1&b=2&prizes=3&token=ab%2Bc%2Fd%3D",
            None
        )
        .0,
        200
    );
    let (status, page) = http(address, "GET", "/?token=ab+c/d=", None);
    assert_eq!(status, 200);
    assert!(page.contains("<title>GOPS explorer</title>"), "{page}");
    let (status, _) = http(address, "POST", "/api/play/new", Some("ab+c/d="));
    assert_eq!(status, 200);
}

#[test]
fn an_address_others_can_reach_needs_a_token_or_insecure() {
    let (_dir, db) = temp_db();
    solve(&db, 3, &[]);
    let db_arg = db.to_str().unwrap();
    let out = gops(&["serve", "--db", db_arg, "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains("reachable from other machines") && message.contains("--insecure"),
        "{message}"
    );
    let mut insecure = Proc::spawn(&[
        "serve",
        "--db",
        db_arg,
        "--listen",
        "0.0.0.0:0",
        "--insecure",
    ]);
    insecure.wait_for("the warning", |l| {
        l.contains("anyone who reaches this address")
    });
    insecure.wait_for("explorer listening", |l| l.contains("explorer listening"));
    insecure.terminate();
    let (ok, lines) = insecure.finish();
    assert!(ok, "SIGTERM ends the server cleanly: {lines:?}");
}

#[test]
fn a_complete_db_held_by_a_coordinator_is_read_as_value_reads_it() {
    let (_dir, db) = temp_db();
    solve(&db, 4, &[]);
    let db_arg = db.to_str().unwrap();
    // a coordinator holds the (complete) db: its sealed layers are read all the same
    let mut coordinator = Proc::spawn(&[
        "coordinator",
        "--n",
        "4",
        "--db",
        db_arg,
        "--listen",
        "127.0.0.1:0",
    ]);
    coordinator.wait_for("coordinator listening", |l| {
        l.contains("coordinator listening")
    });
    let value = gops(&["value", "--db", db_arg, "--json"]);
    assert!(value.status.success(), "{}", stderr(&value));
    let mut server = Proc::spawn(&["serve", "--db", db_arg, "--listen", "127.0.0.1:0"]);
    server.wait_for("explorer listening", |l| l.contains("explorer listening"));
    server.terminate();
    assert!(server.finish().0);
    coordinator.kill();
    let error = |out: &std::process::Output| {
        stderr(out)
            .lines()
            .find(|l| l.starts_with("error"))
            .map(str::to_string)
    };
    // a db that is not there: the same words as value's
    let missing = db.with_file_name("missing");
    let missing = missing.to_str().unwrap();
    let value = gops(&["value", "--db", missing]);
    let serve = gops(&["serve", "--db", missing, "--listen", "127.0.0.1:0"]);
    assert_eq!(serve.status.code(), Some(2));
    assert_eq!(error(&serve), error(&value));
}
