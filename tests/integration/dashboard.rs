//! The live dashboard as users open it. A `gops coordinator` with `--metrics` and a
//! token, and workers solving the 10-card game; headless Chromium loads the page (the
//! token in its address) mid-run and at the end, and the layer bars' data attributes
//! must show some but not all slices done, then every layer complete; screenshots at
//! desktop and phone width go to $GOPS_TEST_OUTPUT (else target/browser-screenshots).
//! Without Chromium that test says SKIPPED on stderr and passes, unless
//! GOPS_REQUIRE_BROWSER=1 (set by `.ci/run`) makes it a failure. And `gops solve
//! --dashboard`: its URL on stderr, served with the run's token.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{Proc, gops, listening_address, stderr, temp_db};

/// Headless Chromium, if this machine has it.
struct Browser {
    program: String,
}

impl Browser {
    /// The first of `$GOPS_CHROMIUM`, chromium, chromium-browser, google-chrome that
    /// runs; `None` (with a SKIPPED line) when none does, a failure when
    /// GOPS_REQUIRE_BROWSER=1.
    fn find(test: &str) -> Option<Browser> {
        let required = std::env::var_os("GOPS_REQUIRE_BROWSER").is_some_and(|v| v == "1");
        let candidates = std::env::var("GOPS_CHROMIUM")
            .into_iter()
            .chain(["chromium", "chromium-browser", "google-chrome"].map(String::from));
        for program in candidates {
            let runs = Command::new(&program)
                .arg("--version")
                .output()
                .is_ok_and(|out| out.status.success());
            if runs {
                return Some(Browser { program });
            }
        }
        assert!(
            !required,
            "{test}: GOPS_REQUIRE_BROWSER=1 but no chromium (or chromium-browser, google-chrome, $GOPS_CHROMIUM) runs"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: needs chromium (apt-get install chromium)"
        );
        None
    }

    /// Runs the browser headless on `url` with `extra` arguments, in a profile of its
    /// own; its standard output. A browser that hangs is killed after two minutes (a
    /// guard, not a measurement).
    fn run(&self, url: &str, extra: &[&str]) -> String {
        let profile = tempfile::tempdir().unwrap();
        let mut args = vec![
            "-k".to_string(),
            "10".into(),
            "120".into(),
            self.program.clone(),
            "--headless=new".into(),
            "--disable-gpu".into(),
            "--no-sandbox".into(),
            "--no-first-run".into(),
            "--disable-dev-shm-usage".into(),
            "--hide-scrollbars".into(),
            format!("--user-data-dir={}", profile.path().display()),
            // the page polls every second: three seconds of its time see it drawn
            "--virtual-time-budget=3000".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        args.push(url.to_string());
        let out = Command::new("timeout")
            .args(&args)
            .output()
            .expect("timeout and the browser run");
        assert!(
            out.status.success(),
            "{} {url} failed ({}): {}",
            self.program,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The page's DOM once its script has run.
    fn dom(&self, url: &str) -> String {
        self.run(url, &["--dump-dom"])
    }

    /// A screenshot of the page in a window of `width` x `height` into `file`.
    fn screenshot(&self, url: &str, file: &Path, (width, height): (u32, u32)) {
        let _ = std::fs::remove_file(file);
        self.run(
            url,
            &[
                &format!("--screenshot={}", file.display()),
                &format!("--window-size={width},{height}"),
            ],
        );
        check_png(file, width, height);
    }
}

/// Where screenshots go: $GOPS_TEST_OUTPUT, else target/browser-screenshots.
fn screenshot_dir() -> PathBuf {
    let dir = match std::env::var_os("GOPS_TEST_OUTPUT") {
        Some(dir) => PathBuf::from(dir),
        // CARGO_TARGET_TMPDIR is <target>/tmp, wherever the target directory is
        None => Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join("browser-screenshots"),
    };
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `file` is a PNG of `width` x `height` with more in it than a blank page.
fn check_png(file: &Path, width: u32, height: u32) {
    let bytes =
        std::fs::read(file).unwrap_or_else(|e| panic!("no screenshot {}: {e}", file.display()));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "{} is not a PNG",
        file.display()
    );
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (width, height), "{}", file.display());
    // a blank page of this size compresses to a few hundred bytes
    assert!(
        bytes.len() > 10_000,
        "{} has {} bytes: next to nothing drawn",
        file.display(),
        bytes.len()
    );
}

/// The value of attribute `name` in the opening tag `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// The opening tags in `dom` that carry `marker` (e.g. `class="bar layer-bar"`).
fn tags<'a>(dom: &'a str, marker: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut rest = dom;
    while let Some(at) = rest.find(marker) {
        let open = rest[..at].rfind('<').unwrap();
        let close = at + rest[at..].find('>').unwrap();
        found.push(&rest[open..=close]);
        rest = &rest[close..];
    }
    found
}

/// One layer bar: (k, done, total, complete).
type LayerBar = (u8, u64, u64, bool);

/// The layer bars of a dumped page.
fn layer_bars(dom: &str) -> Vec<LayerBar> {
    tags(dom, "class=\"bar layer-bar\"")
        .into_iter()
        .map(|tag| {
            let number = |name| attr(tag, name).unwrap().parse::<u64>().unwrap();
            (
                number("data-k") as u8,
                number("data-done"),
                number("data-total"),
                attr(tag, "data-complete") == Some("true"),
            )
        })
        .collect()
}

/// Cards of the game the browser test watches: its layers past the second take seconds
/// on one thread, so a worker killed when layer 2 completes leaves most of them undone.
const N: u8 = 10;

/// A port of 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    let probe = TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

#[test]
fn the_dashboard_shows_a_cluster_run_in_a_browser() {
    let Some(browser) = Browser::find("dashboard in a browser") else {
        return;
    };
    let (dir, db) = temp_db();
    // a token with characters a URL treats specially: the page passes it on as it came
    let token = "dash+board/token=";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let token_file = token_file.to_str().unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    let n = N.to_string();
    let mut coordinator = Proc::spawn(&[
        "coordinator",
        "--n",
        &n,
        "--db",
        db.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        &metrics,
        "--token-file",
        token_file,
        "--lease-ms",
        "1000",
        "--progress-secs",
        "1",
    ]);
    let url = format!("http://{}", listening_address(&mut coordinator));
    coordinator.wait_for("the dashboard served", |l| l.contains("dashboard at /"));
    let page = format!("http://{metrics}/?token={token}");
    let worker = |name: &str| {
        Proc::spawn(&[
            "worker",
            "--coordinator",
            &url,
            "--token-file",
            token_file,
            "--threads",
            "1",
            "--name",
            name,
            "--give-up-secs",
            "120",
        ])
    };

    // mid-run: one worker solves the first layers, then dies with the rest undone
    let first = worker("first");
    coordinator.wait_for("layer 2 complete", |l| {
        l.contains("layer complete") && l.contains("layer=2 ")
    });
    first.kill();
    let dom = browser.dom(&page);
    assert!(
        dom.contains("data-loaded=\"true\""),
        "no data drawn:\n{dom}"
    );
    let bars = layer_bars(&dom);
    assert_eq!(bars.len(), N as usize, "{dom}");
    assert_eq!(
        bars.iter().map(|b| b.0).collect::<Vec<_>>(),
        (1..=N).collect::<Vec<_>>()
    );
    assert!(
        bars.iter()
            .all(|&(_, done, total, _)| total > 0 && done <= total)
    );
    let (done, total): (u64, u64) = bars.iter().fold((0, 0), |(d, t), b| (d + b.1, t + b.2));
    assert!(
        done > 0 && done < total,
        "{done} of {total} slices: {bars:?}"
    );
    assert!(
        bars[0].3 && bars[1].3,
        "layers 1 and 2 are complete: {bars:?}"
    );
    assert!(!bars[N as usize - 1].3, "the last layer is not: {bars:?}");
    assert!(dom.contains("id=\"shard-stack\""), "{dom}");
    assert!(dom.contains("data-kind=\"worker_joined\""), "{dom}");
    assert!(dom.contains("data-kind=\"layer_complete\""), "{dom}");
    let shots = screenshot_dir();
    for size in [(1280, 900), (390, 844)] {
        let file = shots.join(format!("dashboard-mid-run-{}x{}.png", size.0, size.1));
        browser.screenshot(&page, &file, size);
    }

    // the end: another worker finishes the run
    let last = worker("last");
    coordinator.wait_for("run complete", |l| l.contains("run complete"));
    let dom = browser.dom(&page);
    let bars = layer_bars(&dom);
    assert_eq!(bars.len(), N as usize, "{dom}");
    for &(k, done, total, complete) in &bars {
        assert!(
            complete && done == total && total > 0,
            "layer {k}: {bars:?}"
        );
    }
    assert!(dom.contains("data-state=\"complete\""), "{dom}");
    assert!(dom.contains("data-kind=\"run_complete\""), "{dom}");
    // (a worker told that the run is finished exits and is no longer listed as live)
    for size in [(1280, 900), (390, 844)] {
        let file = shots.join(format!("dashboard-complete-{}x{}.png", size.0, size.1));
        browser.screenshot(&page, &file, size);
    }

    // without the token the browser gets no page
    let refused = browser.dom(&format!("http://{metrics}/"));
    assert!(!refused.contains("layer-bar"), "{refused}");

    let (ok, lines) = last.finish();
    assert!(ok, "{}", lines.join("\n"));
    coordinator.terminate();
    let (ok, lines) = coordinator.finish();
    assert!(ok, "{}", lines.join("\n"));
}

/// `GET path` on `addr` over plain HTTP/1.1: the status code and the body.
fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (
        head.split(' ').nth(1).unwrap().parse().unwrap(),
        body.to_string(),
    )
}

#[test]
fn solve_serves_its_dashboard_with_the_runs_token() {
    let (_dir, db) = temp_db();
    let mut solve = Proc::spawn(&[
        "solve",
        "--n",
        "10",
        "--threads",
        "1",
        "--db",
        db.to_str().unwrap(),
        "--no-first-moves",
        "--dashboard",
        "127.0.0.1:0",
    ]);
    let line = solve.wait_for("the dashboard's URL", |l| l.starts_with("dashboard: "));
    let url = line.trim_start_matches("dashboard: ");
    let rest = url.strip_prefix("http://").expect(url);
    let (addr, query) = rest.split_once("/?").expect(url);
    let addr: SocketAddr = addr.parse().unwrap();
    let token = query.strip_prefix("token=").expect(url);
    assert_eq!(token.len(), 64, "a fresh token: {url}");
    // while the 10-card game is solved on one thread (seconds)
    let (status, _) = http_get(addr, "/api/status");
    assert_eq!(status, 401);
    let (status, body) = http_get(addr, &format!("/api/status?{query}"));
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["n"], 10);
    assert_eq!(json["layers"].as_array().unwrap().len(), 10);
    let (status, page) = http_get(addr, &format!("/?{query}"));
    assert_eq!(status, 200);
    assert!(page.contains("id=\"layers\""));
    let (ok, lines) = solve.finish();
    assert!(ok, "{}", lines.join("\n"));
}

#[test]
fn a_dashboard_address_that_cannot_be_served_is_bad_input() {
    let (_dir, db) = temp_db();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let db_arg = db.to_str().unwrap();
    for extra in [
        vec!["--dashboard", &addr],
        vec!["--dashboard", "127.0.0.1:0", "--no-grpc"],
    ] {
        let mut args = vec!["solve", "--n", "3", "--db", db_arg];
        args.extend(extra);
        let out = gops(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("dashboard"), "{}", stderr(&out));
        assert!(!db.exists(), "{args:?} created the db");
    }
}
