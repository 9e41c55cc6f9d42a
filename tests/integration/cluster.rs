//! The cluster as users run it: `gops coordinator` and `gops worker` processes on
//! 127.0.0.1, ports chosen by the OS, synchronised on log lines (never on sleeps).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{
    Proc, checksums, gops, gops_ok, listening_address, reference, status_json, stderr, temp_db,
};

/// Starts a coordinator on `listen` (port 0: the OS picks); returns it and its URL.
fn coordinator(db: &Path, n: u8, listen: &str, extra: &[&str]) -> (Proc, String) {
    let n = n.to_string();
    let mut args = vec![
        "coordinator",
        "--n",
        &n,
        "--db",
        db.to_str().unwrap(),
        "--listen",
        listen,
        "--exit-when-done",
        "--progress-secs",
        "1",
    ];
    if !extra.contains(&"--lease-ms") {
        args.extend_from_slice(&["--lease-ms", "1000"]);
    }
    args.extend_from_slice(extra);
    let mut p = Proc::spawn(&args);
    let address = listening_address(&mut p);
    (p, format!("http://{address}"))
}

fn worker(url: &str, extra: &[&str]) -> Proc {
    let mut args = vec![
        "worker",
        "--coordinator",
        url,
        "--threads",
        "1",
        "--give-up-secs",
        "120",
    ];
    args.extend_from_slice(extra);
    Proc::spawn(&args)
}

#[test]
fn three_workers_reach_the_single_process_checksums() {
    let (_dir, db) = temp_db();
    let (coord, url) = coordinator(&db, 7, "127.0.0.1:0", &[]);
    let workers: Vec<Proc> = (0..3)
        .map(|i| worker(&url, &["--name", &format!("w{i}")]))
        .collect();
    for w in workers {
        let (ok, lines) = w.finish();
        assert!(ok, "worker failed:\n{}", lines.join("\n"));
    }
    let (ok, lines) = coord.finish();
    assert!(ok, "coordinator failed:\n{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("progress") || l.contains("layer complete"))
    );
    assert_eq!(checksums(&db), reference(7, "points"));
}

#[test]
fn win_cluster_run_matches_the_single_process_run() {
    let (_dir, db) = temp_db();
    // a quarter of the slices checked, each with a fifth of its states: the share the
    // command line takes changes which slices are read, never what is stored
    let (coord, url) = coordinator(
        &db,
        6,
        "127.0.0.1:0",
        &[
            "--objective",
            "win",
            "--verify-slices",
            "0.25",
            "--verify-fraction",
            "0.05",
        ],
    );
    let workers: Vec<Proc> = (0..2).map(|_| worker(&url, &[])).collect();
    for w in workers {
        assert!(w.finish().0);
    }
    assert!(coord.finish().0);
    assert_eq!(checksums(&db), reference(6, "win"));
}

/// The count `field=N` on the worker's last "worker done" line.
fn worker_count(lines: &[String], field: &str) -> u64 {
    let done = lines
        .iter()
        .rev()
        .find(|l| l.contains("worker done"))
        .unwrap_or_else(|| panic!("no 'worker done' line:\n{}", lines.join("\n")));
    let key = format!(" {field}=");
    let at = done
        .find(&key)
        .unwrap_or_else(|| panic!("no {field} in {done}"))
        + key.len();
    done[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("{field} is not a count in {done}"))
}

#[test]
fn a_worker_reads_slices_from_the_coordinators_directory_and_falls_back_to_fetching() {
    // the directory shared: every slice a shard reads comes from the coordinator's
    // data files, none through the coordinator
    let (_dir, db) = temp_db();
    let (coord, url) = coordinator(&db, 8, "127.0.0.1:0", &[]);
    let (ok, lines) = worker(&url, &["--slices-dir", db.to_str().unwrap()]).finish();
    assert!(ok, "worker failed:\n{}", lines.join("\n"));
    assert!(coord.finish().0);
    assert_eq!(checksums(&db), reference(8, "points"));
    assert!(worker_count(&lines, "slices_read_from_dir") > 100);
    assert_eq!(worker_count(&lines, "slices_fetched"), 0);
    // the layer below is always sealed when it is read: placed by its index, the
    // coordinator not asked
    assert_eq!(
        worker_count(&lines, "slices_placed_by_sealed_index"),
        worker_count(&lines, "slices_read_from_dir")
    );
    // a directory that is not the run's (another game's db): nothing read from it, one
    // warning, every slice fetched, the same values
    let (_other_dir, other) = temp_db();
    let (coord, url) = coordinator(&other, 8, "127.0.0.1:0", &["--objective", "win"]);
    let (ok, lines) = worker(&url, &["--slices-dir", db.to_str().unwrap()]).finish();
    assert!(ok, "worker failed:\n{}", lines.join("\n"));
    assert!(coord.finish().0);
    assert_eq!(checksums(&other), reference(8, "win"));
    assert_eq!(worker_count(&lines, "slices_read_from_dir"), 0);
    assert!(worker_count(&lines, "slices_fetched") > 100);
    assert!(
        lines.iter().any(|l| l.contains("not using it again")),
        "{}",
        lines.join("\n")
    );
    // a directory that is not there: bad input, said before any work
    let out = gops(&[
        "worker",
        "--coordinator",
        "http://127.0.0.1:9",
        "--slices-dir",
        "/nonexistent/db",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--slices-dir"), "{}", stderr(&out));
}

#[test]
fn a_worker_killed_mid_shard_costs_only_its_shard() {
    let (_dir, db) = temp_db();
    let (coord, url) = coordinator(&db, 8, "127.0.0.1:0", &["--lease-ms", "300"]);
    let mut doomed = worker(&url, &["--name", "doomed"]);
    // kill it the moment it holds a lease of a layer with work in it; the survivor
    // starts then, so the doomed worker's shard is certainly left to it
    doomed.wait_for("a lease", |l| {
        l.contains("shard leased") && !l.contains("layer=1 ")
    });
    doomed.kill();
    let survivor = worker(&url, &["--name", "survivor"]);
    let (ok, lines) = survivor.finish();
    assert!(ok, "{}", lines.join("\n"));
    let (ok, lines) = coord.finish();
    assert!(ok, "{}", lines.join("\n"));
    // the killed worker held a lease: its shard was finished by the survivor, through
    // the lease's expiry or a speculative copy, whichever came first
    assert!(
        lines
            .iter()
            .any(|l| l.contains("coordinator stopped") && l.contains("complete=true"))
    );
    assert_eq!(checksums(&db), reference(8, "points"));
}

#[test]
fn a_worker_asked_to_stop_gives_back_the_shard_it_leased_ahead() {
    let (_dir, db) = temp_db();
    // leases of 10 s, far longer than the moments between the last lease and the status
    // below: a shard still leased then was kept, not given back, and a worker still
    // listed did not leave; small shards, so a layer has many
    let (coord, url) = coordinator(
        &db,
        8,
        "127.0.0.1:0",
        &["--lease-ms", "10000", "--shard-games", "500"],
    );
    let mut ahead = worker(&url, &["--name", "ahead"]);
    // well inside layer 4 (70 prize sets), where the next lease is always a shard
    ahead.wait_for("leases in layer 4", |l| {
        l.contains("shard leased") && l.contains("layer=4 ")
    });
    ahead.terminate();
    let (ok, lines) = ahead.finish();
    assert!(ok, "{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("gave back the shard leased ahead")),
        "{}",
        lines.join("\n")
    );
    let out = gops(&["status", "--coordinator", &url, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["shards"]["leased"], 0, "{status}");
    assert!(
        status["shards"]["pending"].as_u64().unwrap() > 0,
        "{status}"
    );
    // it ended its session: no longer a live worker (nor one the exit would wait for)
    assert_eq!(status["workers"], serde_json::json!([]), "{status}");
    assert_eq!(status["workers_registered"], 0, "{status}");
    // a second worker finishes the run from there
    assert!(worker(&url, &[]).finish().0);
    assert!(coord.finish().0);
    assert_eq!(checksums(&db), reference(8, "points"));
}

#[test]
fn a_restarted_coordinator_resumes_and_redoes_nothing() {
    let (_dir, db) = temp_db();
    // small shards (a slice or so each), and a run held by the coordinator itself once
    // it has stored 400 of the 9-card game's 511 slices: layers 1-5 hold 381, so it
    // stops leasing inside layer 6, whichever worker took which shard and however slowly
    // either process started (waiting for a worker's own line raced the other worker)
    let small = ["--shard-games", "5000"];
    let held = [small.as_slice(), &["--hold-after-slices", "400"]].concat();
    let (mut coord, url) = coordinator(&db, 9, "127.0.0.1:0", &held);
    let address = url.trim_start_matches("http://").to_string();
    let w1 = worker(&url, &["--name", "w1"]);
    let w2 = worker(&url, &["--name", "w2"]);
    coord.wait_for("the hold", |l| l.contains("leasing nothing more"));
    coord.kill(); // kill -9, mid-layer
    // w2 is away (as if pausing between retries, or still starting) until the rest of
    // the run is solved
    w2.signal("STOP");
    // what was stored before the kill
    let status = status_json(&db);
    assert_eq!(status["complete"], false);
    let stored_before: u64 = status["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["done"].as_u64().unwrap())
        .sum();
    let total: u64 = status["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["slices"].as_u64().unwrap())
        .sum();
    assert!(
        (400..total).contains(&stored_before),
        "{stored_before} of {total} slices stored at the hold"
    );
    // the same address again: w1 finds it and finishes the run
    let (mut coord, _) = coordinator(&db, 9, &address, &small);
    let (ok, lines) = w1.finish();
    assert!(ok, "w1 failed:\n{}", lines.join("\n"));
    // the restarted coordinator does not know w2: it serves on for the workers of the
    // run before it, and w2, back, hears that the run is finished (whether it had joined
    // the first coordinator or not)
    coord.wait_for("the linger", |l| l.contains("serving a little longer"));
    assert!(!coord.has_exited());
    w2.signal("CONT");
    let (ok, lines) = w2.finish();
    assert!(ok, "w2 failed:\n{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l.contains("run finished")),
        "{}",
        lines.join("\n")
    );
    let (ok, lines) = coord.finish();
    assert!(ok, "{}", lines.join("\n"));
    let stopped = lines
        .iter()
        .find(|l| l.contains("coordinator stopped"))
        .expect("a closing line");
    let leased: u64 = stopped
        .split_whitespace()
        .find_map(|w| w.strip_prefix("slices_leased="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        leased <= total - stored_before,
        "{leased} leased after the restart, {stored_before} of {total} were stored before"
    );
    assert_eq!(checksums(&db), reference(9, "points"));
}

#[test]
fn status_from_a_coordinator_needs_the_token() {
    let (dir, db) = temp_db();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "guess").unwrap();
    let (coord, url) = coordinator(
        &db,
        4,
        "127.0.0.1:0",
        &["--token-file", token.to_str().unwrap()],
    );
    let out = gops(&["status", "--coordinator", &url, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("missing or wrong token"),
        "{}",
        stderr(&out)
    );
    let out = gops(&[
        "status",
        "--coordinator",
        &url,
        "--token-file",
        wrong.to_str().unwrap(),
    ]);
    assert!(
        stderr(&out).contains("missing or wrong token"),
        "{}",
        stderr(&out)
    );
    let out = gops(&[
        "status",
        "--coordinator",
        &url,
        "--token-file",
        token.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "n",
        "objective",
        "complete",
        "layers",
        "workers",
        "games_per_second",
        "open_layer",
    ] {
        assert!(status.get(key).is_some(), "status lacks {key}: {status}");
    }
    assert_eq!(status["n"], 4);
    // a worker without the token is refused for good, not retried
    let (ok, lines) = worker(&url, &[]).finish();
    assert!(!ok);
    assert!(
        lines.iter().any(|l| l.contains("missing or wrong token")),
        "{}",
        lines.join("\n")
    );
    let solver = worker(&url, &["--token-file", token.to_str().unwrap()]);
    assert!(solver.finish().0);
    assert!(coord.finish().0);
    assert_eq!(checksums(&db), reference(4, "points"));
}

/// The URL of a port that was free a moment ago: nothing answers there.
fn nobody_there() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

#[test]
fn a_worker_asked_to_stop_while_the_coordinator_is_unreachable_exits_promptly() {
    let url = nobody_there();
    // worker() gives up after 120 s unreachable: the stop must come well before that
    let mut w = worker(&url, &[]);
    w.wait_for("unreachable", |l| l.contains("coordinator unreachable"));
    let asked = Instant::now();
    w.terminate();
    // the retry loop honours the stop after its grace period (10 s), not --give-up-secs
    let (ok, lines) = w
        .finish_within(Duration::from_secs(60))
        .expect("the worker exits within a minute of SIGTERM");
    assert!(ok, "a requested stop is a clean exit: {lines:?}");
    assert!(asked.elapsed() < Duration::from_secs(60));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("stopped while the coordinator was unreachable")),
        "{lines:?}"
    );
}

#[test]
fn a_coordinator_stopped_mid_run_exits_130_and_a_busy_port_leaves_no_db() {
    let (_dir, db) = temp_db();
    let mut coord = Proc::spawn(&[
        "coordinator",
        "--n",
        "9",
        "--db",
        db.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    let address = listening_address(&mut coord);
    // a second coordinator on the same port: bad input, and no db of its own
    let (_other_dir, other_db) = temp_db();
    let out = gops(&[
        "coordinator",
        "--n",
        "9",
        "--db",
        other_db.to_str().unwrap(),
        "--listen",
        &address,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot listen"), "{}", stderr(&out));
    assert!(
        !other_db.exists(),
        "a coordinator that cannot listen created its db"
    );
    // no worker ever came: the run is not complete, so SIGTERM is an interruption
    coord.terminate();
    let (code, lines) = coord.finish_code();
    assert_eq!(code, Some(130), "{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l.contains("interrupted in layer 1")),
        "{}",
        lines.join("\n")
    );
}

/// At least 20 `kill -9` at random moments, of workers and of the coordinator (restarted
/// on the same address), during an 11-card solve: it ends with the reference checksums.
#[test]
fn a_storm_of_kill_9_ends_with_the_single_process_checksums() {
    use rand::{Rng, SeedableRng};
    let (_dir, db) = temp_db();
    let (first, url) = coordinator(&db, 11, "127.0.0.1:0", &[]);
    let address = url.trim_start_matches("http://").to_string();
    let mut coord = Some(first);
    let mut workers: Vec<Proc> = (0..3)
        .map(|i| worker(&url, &["--name", &format!("w{i}")]))
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(20);
    let (mut kills, mut coordinator_kills) = (0, 0);
    while kills < 20 {
        std::thread::sleep(Duration::from_millis(rng.random_range(150..500)));
        if coord.as_mut().is_some_and(Proc::has_exited) {
            break; // the run is complete
        }
        if rng.random_bool(0.3) {
            coord.take().expect("running").kill();
            coord = Some(coordinator(&db, 11, &address, &[]).0);
            coordinator_kills += 1;
        } else {
            let i = rng.random_range(0..workers.len());
            workers.swap_remove(i).kill();
            workers.push(worker(&url, &["--name", &format!("w{}", kills + 3)]));
        }
        kills += 1;
    }
    assert!(kills >= 20, "the run was complete after {kills} kills");
    assert!(coordinator_kills > 0);
    for w in workers {
        let (ok, lines) = w.finish();
        assert!(ok, "worker failed:\n{}", lines.join("\n"));
    }
    let (ok, lines) = coord.expect("running").finish();
    assert!(ok, "coordinator failed:\n{}", lines.join("\n"));
    assert_eq!(checksums(&db), reference(11, "points"));
}

/// A worker whose coordinator never answers (a mistyped address) gives up within about
/// 30 s with a message naming the likely cause, not after --give-up-secs (120 here).
#[test]
fn a_worker_that_never_reaches_its_coordinator_fails_fast() {
    let url = nobody_there();
    let started = Instant::now();
    let (ok, lines) = worker(&url, &[])
        .finish_within(Duration::from_secs(90))
        .expect("the worker gives up well before --give-up-secs");
    assert!(!ok, "{lines:?}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("could not reach the coordinator in 3")),
        "{lines:?}"
    );
}

/// A coordinator that no worker joins says so in its log after four leases, with what to
/// do, instead of waiting in silence.
#[test]
fn a_coordinator_without_workers_says_so() {
    let (_dir, db) = temp_db();
    // the helper logs progress every second
    let (mut coord, url) = coordinator(&db, 5, "127.0.0.1:0", &["--lease-ms", "500"]);
    let line = coord.wait_for_within(Duration::from_secs(60), "no live worker", |l| {
        l.contains("no live worker for")
    });
    assert!(line.contains("gops worker --coordinator"), "{line}");
    // and its status says so, for as long as it lasts
    let text = gops_ok(&["status", "--coordinator", &url]);
    assert!(text.contains("not moving: no live worker for"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&gops_ok(&["status", "--coordinator", &url, "--json"])).unwrap();
    assert!(
        json["stall"]
            .as_str()
            .is_some_and(|s| s.contains("no live worker")),
        "{json}"
    );
    coord.terminate();
    let (code, lines) = coord.finish_code();
    assert_eq!(code, Some(130), "{lines:?}");
}
