//! Helpers: run the real `gops` binary (to completion, or as a long-running process
//! whose log lines a test waits for), solve into temporary dbs, read checksums.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn gops(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gops"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("gops runs")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Starts `gops args` with `input` written to its stdin, then closed; stdout and stderr
/// piped (`wait_with_output` collects them).
pub fn spawn_with_input<S: AsRef<std::ffi::OsStr>>(args: &[S], input: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gops"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gops starts");
    let mut stdin = child.stdin.take().expect("a piped stdin");
    std::io::Write::write_all(&mut stdin, input.as_bytes()).expect("gops reads its input");
    child
}

/// Runs `gops` and requires success.
pub fn gops_ok(args: &[&str]) -> String {
    let out = gops(args);
    assert!(
        out.status.success(),
        "gops {args:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// A fresh db path inside a temporary directory (the directory lives as long as the
/// returned guard).
pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    (dir, db)
}

pub fn solve(db: &Path, n: u8, extra: &[&str]) {
    let n = n.to_string();
    let db = db.to_str().unwrap();
    let mut args = vec!["solve", "--n", &n, "--db", db, "--no-first-moves"];
    args.extend_from_slice(extra);
    gops_ok(&args);
}

pub fn status_json(db: &Path) -> Value {
    serde_json::from_str(&gops_ok(&[
        "status",
        "--db",
        db.to_str().unwrap(),
        "--json",
    ]))
    .unwrap()
}

/// The layer checksums of a complete db.
pub fn checksums(db: &Path) -> Vec<String> {
    let status = status_json(db);
    assert_eq!(status["complete"], true, "{status}");
    status["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["checksum"].as_str().unwrap().to_string())
        .collect()
}

/// Every file under `dir` with its bytes, to prove a failed command changed nothing.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Cards as the command line takes them: `1,3,7`.
pub fn join(cards: &[u8]) -> String {
    cards
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `gops book --db FULL --from-layer FROM --out OUT`.
pub fn make_book(full: &Path, from: u8, out: &Path) {
    gops_ok(&[
        "book",
        "--db",
        full.to_str().unwrap(),
        "--from-layer",
        &from.to_string(),
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// `gops value --json` for a state, or `gops strategy --json` when `upcard` is given.
pub fn state_query(
    db: &Path,
    (a, b, prizes): (&[u8], &[u8], &[u8]),
    diff: i64,
    upcard: Option<u8>,
) -> Value {
    let (a, b, prizes, diff) = (join(a), join(b), join(prizes), diff.to_string());
    let upcard = upcard.map(|c| c.to_string());
    let mut args = vec![
        if upcard.is_some() {
            "strategy"
        } else {
            "value"
        },
        "--db",
        db.to_str().unwrap(),
        "--a",
        &a,
        "--b",
        &b,
        "--prizes",
        &prizes,
        "--diff",
        &diff,
        "--json",
    ];
    if let Some(c) = &upcard {
        args.extend(["--upcard", c]);
    }
    serde_json::from_str(&gops_ok(&args)).unwrap()
}

/// The layer checksums of a single-process solve without gRPC: what a cluster must match.
pub fn reference(n: u8, objective: &str) -> Vec<String> {
    let (_dir, db) = temp_db();
    solve(&db, n, &["--objective", objective, "--no-grpc"]);
    checksums(&db)
}

pub const PATIENCE: Duration = Duration::from_secs(300);

/// A running `gops` process whose stderr lines arrive on a channel. Killed when dropped,
/// so a failing test leaves no process behind.
pub struct Proc {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Proc {
    pub fn spawn(args: &[&str]) -> Proc {
        Proc::spawn_via(&[], args)
    }

    /// `gops args` run through `prefix` (e.g. `ip netns exec NS`), when not empty.
    pub fn spawn_via(prefix: &[&str], args: &[&str]) -> Proc {
        let gops = env!("CARGO_BIN_EXE_gops");
        let mut command = match prefix.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(gops);
                c
            }
            None => Command::new(gops),
        };
        let mut child = command
            .args(args)
            // the worker's per-shard lines ("shard leased", "shard done") are debug
            .env("RUST_LOG", "info,gops_worker=debug")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("gops starts");
        let (tx, lines) = channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Proc {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The first line (from now on) that satisfies `pred`, waiting up to PATIENCE.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(PATIENCE, what, pred)
    }

    /// [`Proc::wait_for`] with a deadline of `patience`.
    pub fn wait_for_within(
        &mut self,
        patience: Duration,
        what: &str,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + patience;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => break,
                // stderr closed: the process is gone, there is nothing to wait for
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().unwrap();
                    panic!(
                        "no '{what}' line: the process exited ({status}) without one; it said:\n{}",
                        self.seen.join("\n")
                    );
                }
            }
        }
        panic!(
            "no '{what}' line within {patience:?}; the process said:\n{}",
            self.seen.join("\n")
        );
    }

    /// Waits for the process to exit; returns whether it succeeded and every line it
    /// wrote to stderr (those already waited for included).
    pub fn finish(self) -> (bool, Vec<String>) {
        let (code, lines) = self.finish_code();
        (code == Some(0), lines)
    }

    /// Waits for the process to exit: its exit code (`None` if a signal ended it) and
    /// every line it wrote.
    pub fn finish_code(mut self) -> (Option<i32>, Vec<String>) {
        let status = self.child.wait().unwrap();
        // the reader thread ends with the pipe
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status.code(), std::mem::take(&mut self.seen))
    }

    /// [`Proc::finish`], or `None` if the process is still running after `limit` (it is
    /// killed then).
    pub fn finish_within(self, limit: Duration) -> Option<(bool, Vec<String>)> {
        self.finish_within_code(limit)
            .map(|(code, lines)| (code == Some(0), lines))
    }

    /// [`Proc::finish_code`], or `None` if the process is still running after `limit` (it
    /// is killed then).
    pub fn finish_within_code(self, limit: Duration) -> Option<(Option<i32>, Vec<String>)> {
        let deadline = Instant::now() + limit;
        let mut me = self;
        loop {
            match me.child.try_wait().unwrap() {
                Some(_) => return Some(me.finish_code()),
                None if Instant::now() >= deadline => return None,
                // a process has no exit event to wait on with a deadline: poll
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// Asks the process to stop (SIGTERM), as a service manager would.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// Sends the signal `name` (`TERM`, `INT`, ...), as `kill -s NAME` does.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -s {name} failed");
    }

    /// Whether the process has exited.
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // nothing to do when it has exited (finish or kill) already
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits for a coordinator's "coordinator listening" line; the address it names.
pub fn listening_address(coordinator: &mut Proc) -> String {
    let line = coordinator.wait_for("coordinator listening", |l| {
        l.contains("coordinator listening")
    });
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("address="))
        .expect("the listening line names its address")
        .to_string()
}
