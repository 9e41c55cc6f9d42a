//! The cluster across hosts, simulated with Linux network namespaces: the coordinator and
//! two workers each in a namespace of their own, each worker joined to the coordinator
//! by a veth pair (10.77.1.0/24, 10.77.2.0/24), and a worker's link cut with `ip link set
//! DEV down` mid-run. Needs root and iproute2; without them the tests say "SKIPPED" on
//! stderr and return, unless GOPS_REQUIRE_NETNS=1 (set by `.ci/run`) makes that a failure.

use std::io::Write;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::support::{Proc, checksums, listening_address, reference, temp_db};

/// The namespaces of one test, deleted (with the veths inside them) when dropped, even
/// when the test fails. Names carry the test process's pid and a counter, so parallel
/// runs do not clash; a leftover of an aborted run whose pid is reused is replaced.
struct Net {
    /// e.g. `gops-1234-0`; the namespaces are `{prefix}-c`, `{prefix}-w1`, `{prefix}-w2`.
    prefix: String,
    created: Vec<String>,
}

const ROLES: [&str; 3] = ["c", "w1", "w2"];

fn ip(args: &[&str]) -> Output {
    Command::new("ip")
        .args(args)
        .output()
        .expect("ip was found before")
}

fn ip_ok(args: &[&str]) -> Result<(), String> {
    let out = ip(args);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Why namespaces cannot be made here, if they cannot.
fn missing_prerequisite() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1));
    if euid != Some("0") {
        return Some("not root".into());
    }
    match Command::new("ip").arg("-V").output() {
        Ok(out) if out.status.success() => None,
        _ => Some("no `ip` (iproute2)".into()),
    }
}

impl Net {
    /// The namespaces and links, or `None` (after a loud SKIPPED line) when this machine
    /// cannot make them and GOPS_REQUIRE_NETNS is not set.
    fn new(test: &str) -> Option<Net> {
        let required = std::env::var_os("GOPS_REQUIRE_NETNS").is_some_and(|v| v == "1");
        let made = match missing_prerequisite() {
            Some(why) => Err(why),
            None => Net::build(),
        };
        match made {
            Ok(net) => Some(net),
            Err(why) if required => panic!("{test}: needs root and iproute2 ({why})"),
            Err(why) => {
                // straight to fd 2: the test harness captures eprintln! of passing tests
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED {test}: needs root and iproute2 ({why})"
                );
                None
            }
        }
    }

    fn build() -> Result<Net, String> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "gops-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut net = Net {
            prefix,
            created: Vec::new(),
        };
        for role in ROLES {
            let ns = net.ns(role);
            // a leftover of an aborted run of the same pid
            let _ = ip(&["netns", "delete", &ns]);
            ip_ok(&["netns", "add", &ns])?;
            net.created.push(ns.clone());
            ip_ok(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        let c = net.ns("c");
        for i in [1, 2] {
            let w = net.ns(&format!("w{i}"));
            let (c_dev, w_dev) = (format!("c{i}"), format!("w{i}"));
            // made inside the namespaces: no name in the host's namespace to clash with
            ip_ok(&[
                "-n", &c, "link", "add", &c_dev, "type", "veth", "peer", "name", &w_dev, "netns",
                &w,
            ])?;
            ip_ok(&[
                "-n",
                &c,
                "addr",
                "add",
                &format!("10.77.{i}.1/24"),
                "dev",
                &c_dev,
            ])?;
            ip_ok(&[
                "-n",
                &w,
                "addr",
                "add",
                &format!("10.77.{i}.2/24"),
                "dev",
                &w_dev,
            ])?;
            ip_ok(&["-n", &c, "link", "set", &c_dev, "up"])?;
            ip_ok(&["-n", &w, "link", "set", &w_dev, "up"])?;
        }
        Ok(net)
    }

    fn ns(&self, role: &str) -> String {
        format!("{}-{role}", self.prefix)
    }

    /// `gops` inside the namespace of `role`.
    fn spawn(&self, role: &str, args: &[&str]) -> Proc {
        let ns = self.ns(role);
        Proc::spawn_via(&["ip", "netns", "exec", &ns], args)
    }

    /// Worker `i`'s URL of a coordinator on `port`.
    fn url(&self, i: u8, port: &str) -> String {
        format!("http://10.77.{i}.1:{port}")
    }

    /// Cuts or restores worker `i`'s link at the coordinator's end, like a switch port:
    /// the worker's interface stays up and its packets vanish.
    fn link(&self, i: u8, up: bool) {
        let state = if up { "up" } else { "down" };
        ip_ok(&["-n", &self.ns("c"), "link", "set", &format!("c{i}"), state]).unwrap();
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in &self.created {
            if let Err(e) = ip_ok(&["netns", "delete", ns]) {
                eprintln!("cleaning up: {e}");
            }
        }
    }
}

/// The value of `key=` in a log line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key}= in: {line}"))
}

/// The `seconds` of a "shard done" line (0 for another line).
fn shard_seconds(line: &str) -> f64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("seconds="))
        .and_then(|v| v.trim_matches('"').parse().ok())
        .unwrap_or(0.0)
}

/// How long to wait for a log line here: these runs take seconds.
const PATIENCE: Duration = Duration::from_secs(60);

/// A coordinator in the "c" namespace, listening on every address; its port.
fn coordinator(net: &Net, db: &str, n: &str, extra: &[&str]) -> (Proc, String) {
    let mut args = vec![
        "coordinator",
        "--n",
        n,
        "--db",
        db,
        "--listen",
        "0.0.0.0:0",
        // the namespaces are this test's own network
        "--insecure",
        "--lease-ms",
        "3000",
        "--progress-secs",
        "1",
    ];
    args.extend_from_slice(extra);
    let mut coord = net.spawn("c", &args);
    let address = listening_address(&mut coord);
    let port = address.rsplit(':').next().unwrap().to_string();
    (coord, port)
}

fn worker(net: &Net, i: u8, port: &str) -> Proc {
    let name = format!("w{i}");
    net.spawn(
        &name,
        &[
            "worker",
            "--coordinator",
            &net.url(i, port),
            "--threads",
            "1",
            "--name",
            &name,
            "--give-up-secs",
            "120",
        ],
    )
}

#[test]
fn a_worker_cut_off_mid_run_catches_up_and_the_checksums_hold() {
    let Some(net) = Net::new("a_worker_cut_off_mid_run_catches_up_and_the_checksums_hold") else {
        return;
    };
    let started = Instant::now();
    let (_dir, db) = temp_db();
    // no --exit-when-done: the run may finish while worker 1 is cut off, and it must
    // still hear so once its link is back
    let (mut coord, port) = coordinator(
        &net,
        db.to_str().unwrap(),
        "10",
        &["--shard-games", "100000"],
    );
    let mut w1 = worker(&net, 1, &port);
    let joined = w1.wait_for_within(PATIENCE, "worker 1 joining", |l| {
        l.contains("joined the coordinator")
    });
    let w1_id = field(&joined, "worker").to_string();

    // cut the moment worker 1 holds a lease of the largest layers: alone until then, it
    // leases every shard of layers 1-6 itself, so the line must come (a second worker
    // running could take them all)
    w1.wait_for_within(PATIENCE, "a lease of layer 6", |l| {
        l.contains("shard leased") && l.contains("layer=6 ")
    });
    net.link(1, false);
    let cut = Instant::now();
    let w2 = worker(&net, 2, &port);
    // the run goes on without it: worker 2 finishes layer 6 (worker 1's shard included,
    // through a speculative copy or the lease's expiry) and layer 7 alone
    coord.wait_for_within(PATIENCE, "layer 7 complete without worker 1", |l| {
        l.contains("layer complete") && l.contains("layer=7 ")
    });
    net.link(1, true);
    let outage = cut.elapsed();

    // worker 1 was stuck in the outage: the shard it held when the link went down is
    // settled only once the link is back, and took longer than the outage
    let late = w1.wait_for_within(PATIENCE, "worker 1's shard from before the cut", |l| {
        l.contains("shard done") && shard_seconds(l) >= outage.as_secs_f64()
    });
    let seconds = shard_seconds(&late);
    let (ok, lines) = w1.finish();
    assert!(ok, "worker 1 failed:\n{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l.contains("run finished")),
        "{}",
        lines.join("\n")
    );
    let (ok, lines) = w2.finish();
    assert!(ok, "worker 2 failed:\n{}", lines.join("\n"));
    coord.wait_for_within(PATIENCE, "the run's end", |l| l.contains("run complete"));
    coord.terminate();
    let (ok, lines) = coord
        .finish_within(Duration::from_secs(20))
        .expect("the coordinator stops on SIGTERM");
    assert!(ok, "{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("coordinator stopped") && l.contains("complete=true")),
        "{}",
        lines.join("\n")
    );
    let expired = format!("worker={w1_id} ");
    let expiries = lines
        .iter()
        .filter(|l| l.contains("lease expired") && l.contains(&expired))
        .count();
    assert_eq!(checksums(&db), reference(10, "points"));
    eprintln!(
        "cut for {outage:?}; worker 1's shard took {seconds} s; {expiries} of its leases \
         expired; test took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_worker_cut_off_for_good_does_not_hold_up_the_coordinators_exit() {
    let Some(net) = Net::new("a_worker_cut_off_for_good_does_not_hold_up_the_coordinators_exit")
    else {
        return;
    };
    let (_dir, db) = temp_db();
    let (mut coord, port) = coordinator(&net, db.to_str().unwrap(), "8", &["--exit-when-done"]);
    // worker 2 first, so that it surely holds the first shard when its link dies
    let mut w2 = worker(&net, 2, &port);
    w2.wait_for_within(PATIENCE, "worker 2's first lease", |l| {
        l.contains("shard leased")
    });
    net.link(2, false);
    let w1 = worker(&net, 1, &port);
    let (ok, lines) = w1.finish();
    assert!(ok, "worker 1 failed:\n{}", lines.join("\n"));
    coord.wait_for_within(PATIENCE, "the coordinator stopping", |l| {
        l.contains("run complete; stopping")
    });
    let stopping = Instant::now();
    // its connection to worker 2 never closes; the coordinator must not wait for TCP
    // to give up on it (about 15 minutes)
    let (ok, lines) = coord
        .finish_within(Duration::from_secs(20))
        .expect("the coordinator exits although a worker is unreachable");
    let took = stopping.elapsed();
    assert!(ok, "{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("coordinator stopped") && l.contains("complete=true")),
        "{}",
        lines.join("\n")
    );
    assert_eq!(checksums(&db), reference(8, "points"));
    eprintln!("the coordinator exited {took:?} after the run; worker 2 still cut off");
    // worker 2 is killed by its Drop, before the namespaces are deleted
    drop(w2);
}
