//! The explorer's page in a real browser: headless Chromium opens it with `?selftest=1`,
//! whose script clicks the page's own elements (a strategy chart against the API, a pair
//! of bids into the subgame and the trail back, a whole game against the bot) and writes
//! what it saw into `<pre id="selftest">`, read here from `--dump-dom` and checked against
//! `gops strategy --json`; and screenshots at desktop and phone sizes. Without Chromium
//! it says SKIPPED on stderr and passes, unless GOPS_REQUIRE_BROWSER=1 (set by `.ci/run`)
//! makes that a failure. The screenshots go to $GOPS_TEST_OUTPUT, else to
//! target/browser-screenshots.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::serve::Served;
use gops_common::rules::random_game_states;
use rand::SeedableRng;

use crate::support::{gops_ok, join, make_book, solve, state_query, temp_db};

/// The browser's command, if one is installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|program| {
            Command::new(program)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// Chromium, or `None` after saying SKIPPED (a failure when the browser is required).
fn browser_or_skip(test: &str) -> Option<&'static str> {
    let required = std::env::var_os("GOPS_REQUIRE_BROWSER").is_some_and(|v| v == "1");
    let found = chromium();
    if found.is_none() {
        assert!(
            !required,
            "{test}: needs Chromium (apt-get install chromium), and GOPS_REQUIRE_BROWSER=1"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: no chromium, chromium-browser or google-chrome on PATH"
        );
    }
    found
}

/// Where the screenshots go (kept after the test).
fn output_dir() -> PathBuf {
    let dir = match std::env::var_os("GOPS_TEST_OUTPUT") {
        Some(dir) => PathBuf::from(dir),
        // the target directory: the binary is target/<profile>/gops
        None => Path::new(env!("CARGO_BIN_EXE_gops"))
            .ancestors()
            .nth(2)
            .expect("the binary lies in a target directory")
            .join("browser-screenshots"),
    };
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Headless Chromium on `url` with `args`, in a profile of its own; its stdout. Killed
/// if it runs past two minutes.
fn headless(browser: &str, url: &str, args: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless=new",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).ok();
        out
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match child.try_wait().unwrap() {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within two minutes on {url}");
            }
            // a child process has no exit event to wait on with a deadline: poll
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    reader.join().unwrap()
}

/// The text of `<pre id="selftest">` in a dumped DOM, its entities undone.
fn selftest_result(dom: &str) -> Value {
    let start = dom
        .find("<pre id=\"selftest\">")
        .unwrap_or_else(|| panic!("no selftest result in the page:\n{dom}"));
    let text = &dom[start + "<pre id=\"selftest\">".len()..];
    let text = &text[..text.find("</pre>").expect("the result element is closed")];
    let text = text
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn cards(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect()
}

/// The width and height a PNG's header gives, after checking its signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "not a PNG"
    );
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn the_page_explores_steps_back_and_plays_in_a_browser() {
    let Some(browser) = browser_or_skip("browser test") else {
        return;
    };
    let (_dir, db) = temp_db();
    solve(&db, 5, &[]);
    // the command line's strategies at the start, every upcard, before the server holds the db
    let db_arg = db.to_str().unwrap();
    let reference: Vec<Value> = (1..=5)
        .map(|upcard| {
            let upcard = upcard.to_string();
            serde_json::from_str(&gops_ok(&[
                "strategy", "--db", db_arg, "--upcard", &upcard, "--json",
            ]))
            .unwrap()
        })
        .collect();
    let served = Served::start(&db, &[]);

    let dom = headless(
        browser,
        &served.url("/?selftest=1"),
        &["--dump-dom".into(), "--virtual-time-budget=60000".into()],
    );
    let result = selftest_result(&dom);
    assert!(result["error"].is_null(), "{result:#}");
    for (check, passed) in result["checks"].as_object().unwrap() {
        assert_eq!(passed, true, "self-test check {check}: {result:#}");
    }
    assert_eq!(result["ok"], true, "{result:#}");

    // the chart shows, to 6 digits, what `gops strategy --json` prints for its state
    let chart = &result["chart"];
    let state = &chart["state"];
    for key in ["a", "b", "prizes"] {
        assert_eq!(
            cards(&state[key]),
            vec![1, 2, 3, 4, 5],
            "the start of the game"
        );
    }
    let upcard = chart["upcard"].as_u64().unwrap();
    let cli = &reference[upcard as usize - 1];
    for side in ["a", "b"] {
        assert_eq!(cards(&chart[format!("cards_{side}")]), cards(&cli[side]));
        let shown = chart[format!("strategy_{side}")].as_array().unwrap();
        let exact = cli[format!("strategy_{side}")].as_array().unwrap();
        assert_eq!(shown.len(), exact.len());
        for (shown, exact) in shown.iter().zip(exact) {
            let text = shown.as_str().unwrap();
            assert_eq!(text.split('.').nth(1).map(str::len), Some(6), "{text}");
            let (shown, exact) = (text.parse::<f64>().unwrap(), exact.as_f64().unwrap());
            assert!(
                (shown - exact).abs() <= 5.0000001e-7,
                "{side}: {shown} v {exact}"
            );
        }
    }

    // the step took the bids out of the hands, the prize out of the deck, and scored it
    let step = &result["step"];
    let (bid_a, bid_b) = (
        step["bid_a"].as_u64().unwrap(),
        step["bid_b"].as_u64().unwrap(),
    );
    assert_eq!(step["upcard"], upcard);
    let without = |card: u64| (1..=5).filter(|&c| c != card).collect::<Vec<u64>>();
    assert_eq!(cards(&step["state"]["a"]), without(bid_a));
    assert_eq!(cards(&step["state"]["b"]), without(bid_b));
    assert_eq!(cards(&step["state"]["prizes"]), without(upcard));
    let won = upcard as i64 * (bid_a as i64 - bid_b as i64).signum();
    assert_eq!(step["state"]["diff"], won);
    assert_eq!(step["trail"].as_array().unwrap().len(), 2, "{step}");
    // and the trail led back to the start
    assert_eq!(result["back"]["state"]["a"], state["a"]);
    assert_eq!(result["back"]["trail"].as_array().unwrap().len(), 1);

    // a whole game against the bot, with its final score
    let play = &result["play"];
    assert_eq!(play["rounds"], 5, "{play}");
    let (you, bot) = (play["you"].as_u64().unwrap(), play["bot"].as_u64().unwrap());
    assert!(you + bot <= 15, "{play}");
    let line = play["result"].as_str().unwrap();
    assert!(
        line.starts_with(&format!("Final score: you {you}, bot {bot}:")),
        "{line}"
    );

    // screenshots: the explorer on a desktop and on a phone, and the end of the self-test
    let out = output_dir();
    for (name, url, width, height) in [
        ("explorer-desktop.png", served.url("/"), 1280, 900),
        ("explorer-phone.png", served.url("/"), 390, 844),
        ("selftest-end.png", served.url("/?selftest=1"), 1280, 900),
    ] {
        let file = out.join(name);
        let _ = std::fs::remove_file(&file);
        headless(
            browser,
            &url,
            &[
                format!("--screenshot={}", file.display()),
                format!("--window-size={width},{height}"),
                "--virtual-time-budget=60000".into(),
            ],
        );
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(png_size(&bytes), (width, height), "{}", file.display());
        // a blank page compresses to a few hundred bytes; the explorer's cards and charts
        // take far more
        assert!(
            bytes.len() > 20_000,
            "{}: {} bytes",
            file.display(),
            bytes.len()
        );
        let _ = writeln!(std::io::stderr(), "screenshot: {}", file.display());
    }
}

#[test]
fn a_link_to_a_state_below_a_book_opens_it_and_back_and_forward_step_through_it() {
    let Some(browser) = browser_or_skip("browser link test") else {
        return;
    };
    let (dir, full) = temp_db();
    solve(&full, 7, &["--objective", "win"]);
    let book = dir.path().join("book");
    make_book(&full, 6, &book);
    // a state with 4 cards left, below the book's layers: the page's answers are solved
    // on demand, and checked against the full db's
    let mut rng = rand::rngs::StdRng::seed_from_u64(52);
    let (state, _) = random_game_states(7, 1, &mut rng, |s| s.k() == 4 && s.diff != 0).remove(0);
    let (a, b, prizes) = (
        join(&state.a.to_vec()),
        join(&state.b.to_vec()),
        join(&state.prizes.to_vec()),
    );
    let diff = state.diff.to_string();
    let served = Served::start(&book, &[]);
    let link = format!("/?selftest=1&a={a}&b={b}&prizes={prizes}&diff={diff}");
    let dom = headless(
        browser,
        &served.url(&link),
        &["--dump-dom".into(), "--virtual-time-budget=60000".into()],
    );
    let result = selftest_result(&dom);
    assert!(result["error"].is_null(), "{result:#}");
    for (check, passed) in result["checks"].as_object().unwrap() {
        assert_eq!(passed, true, "self-test check {check}: {result:#}");
    }
    // the page opened the linked state, after the start in its trail
    let shown = &result["chart"]["state"];
    assert_eq!(
        cards(&shown["a"]),
        state.a.iter().map(u64::from).collect::<Vec<_>>()
    );
    assert_eq!(
        cards(&shown["b"]),
        state.b.iter().map(u64::from).collect::<Vec<_>>()
    );
    assert_eq!(
        cards(&shown["prizes"]),
        state.prizes.iter().map(u64::from).collect::<Vec<_>>()
    );
    assert_eq!(shown["diff"], i64::from(state.diff));
    assert_eq!(
        result["back"]["trail"],
        serde_json::json!(["Start", "Linked state"]),
        "{result:#}"
    );
    // the chart is the full db's strategy of that state, to 6 digits
    let upcard = result["chart"]["upcard"].as_u64().unwrap() as u8;
    let exact = state_query(
        &full,
        (&state.a.to_vec(), &state.b.to_vec(), &state.prizes.to_vec()),
        i64::from(state.diff),
        Some(upcard),
    );
    for side in ["a", "b"] {
        let shown = result["chart"][format!("strategy_{side}")]
            .as_array()
            .unwrap();
        let exact = exact[format!("strategy_{side}")].as_array().unwrap();
        assert_eq!(shown.len(), exact.len());
        for (shown, exact) in shown.iter().zip(exact) {
            let shown: f64 = shown.as_str().unwrap().parse().unwrap();
            assert!(
                (shown - exact.as_f64().unwrap()).abs() <= 5.0000001e-7,
                "{side}: {shown} v {exact}"
            );
        }
    }

    // a link to no state of this game shows the start, and says why
    let dom = headless(
        browser,
        &served.url("/?a=1,2&b=1&prizes=1,2"),
        &["--dump-dom".into(), "--virtual-time-budget=20000".into()],
    );
    assert!(dom.contains("The linked state cannot be shown"), "{dom}");
    assert!(dom.contains("data-a=\"1,2,3,4,5,6,7\""), "{dom}");
}

#[test]
fn the_coach_view_opens_at_a_game_s_address() {
    // the API first (no browser needed): the rounds replayed, the advice for the upcard
    let (_dir, db) = temp_db();
    solve(&db, 6, &[]);
    let served = Served::start(&db, &[]);
    let game = "/api/coach?opponent=upcard&rounds=4.5.4,2.1.2&upcard=6";
    let view = served.json(game);
    assert_eq!(view["rounds"].as_array().unwrap().len(), 2, "{view}");
    assert_eq!(cards(&view["prizes_left"]), vec![1, 3, 5, 6]);
    assert_eq!(cards(&view["your_cards"]), vec![2, 3, 4, 6]);
    let mix = view["advice"]["mix"].as_object().unwrap();
    let total: f64 = mix.values().map(|p| p.as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() <= 1e-9, "{view}");
    // with learn=1 the model is refitted to their bids so far (here the upcard, each time)
    let fixed = served.json("/api/coach?rounds=4.5.4,2.1.2,6.6.6&upcard=3");
    let learned = served.json("/api/coach?rounds=4.5.4,2.1.2,6.6.6&upcard=3&learn=1");
    assert_eq!(fixed["opponent"], "uniform", "{fixed}");
    assert_eq!(learned["learn"], true, "{learned}");
    assert_eq!(learned["habits"]["decisions"], 3, "{learned}");
    assert_eq!(learned["opponent"], learned["habits"]["model"], "{learned}");
    assert_ne!(learned["opponent"], "uniform", "{learned}");
    for (bad, said) in [
        ("/api/coach?learn=maybe", "not 1 or 0"),
        ("/api/coach?rounds=4.5", "PRIZE.YOURS.THEIRS"),
        ("/api/coach?rounds=4.5.9", "not in B's hand"),
        ("/api/coach?opponent=bluff", "unknown agent"),
        ("/api/coach?upcard=9", "not one of the prizes left"),
        ("/api/coach?risk=-1", "at least 0"),
    ] {
        let (status, body) = served.get(bad);
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains(said), "{bad}: {body}");
    }
    let Some(browser) = browser_or_skip("coach browser test") else {
        return;
    };
    let page = "/coach?opponent=upcard&rounds=4.5.4,2.1.2&upcard=6&selftest=1";
    let dom = headless(
        browser,
        &served.url(page),
        &["--dump-dom".into(), "--virtual-time-budget=30000".into()],
    );
    let result = selftest_result(&dom);
    assert_eq!(result["rounds"], 2, "{result:#}");
    // the page shows what the API answers (JSON's 0 and 0.0 alike)
    let (shown, asked) = (&result["advice"], &view["advice"]);
    for key in ["budget", "expected_gain", "suggested", "upcard", "value"] {
        assert_eq!(
            shown[key].as_f64(),
            asked[key].as_f64(),
            "{key}: {result:#}"
        );
    }
    for (card, p) in asked["mix"].as_object().unwrap() {
        assert_eq!(
            shown["mix"][card].as_f64(),
            p.as_f64(),
            "{card}: {result:#}"
        );
    }
    assert!(dom.contains("<td>4</td>"), "the rounds' table is drawn");
}
