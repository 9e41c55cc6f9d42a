//! A finished db as an artifact (its sealed layers): every read command at once, beside a
//! running `serve` and a coordinator that holds the db, each answering as a lone reader
//! does; the same on a read-only bind mount (root; SKIPPED elsewhere unless
//! GOPS_REQUIRE_ROOT=1); no file of the db changed by any of them; a complete layer read
//! while the run above it goes on.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use serde_json::Value;

use crate::support::{
    Proc, gops, gops_ok, listening_address, solve, spawn_with_input, stderr, stdout, temp_db,
};

/// Every file of the db directory: its bytes and modification time.
fn files_with_times(db: &Path) -> Vec<(PathBuf, Vec<u8>, SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.is_file())
        .map(|path| {
            let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
            (path.clone(), std::fs::read(&path).unwrap(), modified)
        })
        .collect();
    files.sort();
    files
}

/// The read commands, each with its arguments and what it reads from stdin, on the db
/// at `db`; exports go to `out`.
fn read_commands(db: &str, n: u8, out: &Path) -> Vec<(Vec<String>, &'static str)> {
    let parquet = out.join("layer2.parquet");
    let upcard = n.to_string();
    let commands: Vec<(Vec<&str>, &str)> = vec![
        (vec!["value", "--db", db, "--json"], ""),
        (
            vec!["strategy", "--db", db, "--upcard", &upcard, "--json"],
            "",
        ),
        (vec!["status", "--db", db, "--json"], ""),
        (
            vec![
                "export",
                "--db",
                db,
                "--format",
                "parquet",
                "--layers",
                "2",
                "--out",
                parquet.to_str().unwrap(),
            ],
            "",
        ),
        (
            vec![
                "verify",
                "--db",
                db,
                "--fraction",
                "0.01",
                "--seed",
                "3",
                "--json",
            ],
            "",
        ),
        (
            vec![
                "simulate", "--db", db, "--a", "optimal", "--b", "match", "--games", "200",
                "--seed", "1", "--json",
            ],
            "",
        ),
        (
            vec!["exploit", "--db", db, "--policy", "match", "--json"],
            "",
        ),
        (
            vec!["play", "--db", db, "--seed", "2"],
            "1\n2\n3\n4\n5\n6\n",
        ),
    ];
    commands
        .into_iter()
        .map(|(args, input)| (args.into_iter().map(str::to_string).collect(), input))
        .collect()
}

/// Starts every command at once and waits for all of them.
fn run_at_once(commands: &[(Vec<String>, &str)]) -> Vec<Output> {
    let children: Vec<_> = commands
        .iter()
        .map(|(args, input)| spawn_with_input(args, input))
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// What a command answered, with what may differ between two correct runs left out
/// (timings, the db's path as given, the db's size on disk).
fn answer(out: &Output, db: &str) -> String {
    let text = stdout(out).replace(db, "DB");
    match serde_json::from_str::<Value>(&text) {
        Ok(mut json) => {
            if let Some(object) = json.as_object_mut() {
                object.remove("seconds");
                // the holder's own files (sled's, its status) may grow meanwhile
                object.remove("db_bytes");
            }
            json.to_string()
        }
        // export's line ends with its time and rate
        Err(_) => match text.split_once(" in ") {
            Some((what, _)) if text.starts_with("exported") => what.to_string(),
            _ => text,
        },
    }
}

/// The answers of `commands` run one at a time, and at once (after the serve and holder
/// started by the caller); both must succeed and agree, exports byte for byte.
fn check_readers_agree(db: &str, n: u8) {
    let scratch = tempfile::tempdir().unwrap();
    let (alone_dir, together_dir) = (scratch.path().join("alone"), scratch.path().join("at-once"));
    std::fs::create_dir(&alone_dir).unwrap();
    std::fs::create_dir(&together_dir).unwrap();
    let alone: Vec<Output> = read_commands(db, n, &alone_dir)
        .iter()
        .map(|c| run_at_once(std::slice::from_ref(c)).remove(0))
        .collect();
    let together = run_at_once(&read_commands(db, n, &together_dir));
    for (((args, _), one), many) in read_commands(db, n, &alone_dir)
        .iter()
        .zip(&alone)
        .zip(&together)
    {
        assert!(one.status.success(), "{args:?} alone: {}", stderr(one));
        assert!(many.status.success(), "{args:?} at once: {}", stderr(many));
        assert_eq!(
            answer(one, db).replace(alone_dir.to_str().unwrap(), "OUT"),
            answer(many, db).replace(together_dir.to_str().unwrap(), "OUT"),
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read(alone_dir.join("layer2.parquet")).unwrap(),
        std::fs::read(together_dir.join("layer2.parquet")).unwrap()
    );
}

#[test]
fn a_complete_db_is_read_by_every_command_at_once_and_changes_not_a_byte() {
    for (n, objective) in [(6u8, "points"), (5, "win")] {
        let (_dir, db) = temp_db();
        solve(&db, n, &["--objective", objective]);
        let db_arg = db.to_str().unwrap();
        let before = files_with_times(&db);
        // the explorer serving it, and a coordinator holding it (sled's lock taken: it
        // finds the run complete and waits for workers)
        let mut serve = Proc::spawn(&["serve", "--db", db_arg, "--listen", "127.0.0.1:0"]);
        serve.wait_for("explorer listening", |l| l.contains("explorer listening"));
        let n_arg = n.to_string();
        let mut holder = Proc::spawn(&[
            "coordinator",
            "--n",
            &n_arg,
            "--objective",
            objective,
            "--db",
            db_arg,
            "--listen",
            "127.0.0.1:0",
        ]);
        listening_address(&mut holder);
        check_readers_agree(db_arg, n);
        // status says complete, whoever holds the db, with no word of a running solve
        let text = gops_ok(&["status", "--db", db_arg]);
        assert!(
            text.contains("complete") && !text.contains("in use"),
            "{text}"
        );
        holder.terminate();
        assert!(holder.finish().0);
        serve.terminate();
        assert!(serve.finish().0);
        // the coordinator wrote only sled's files and its status beside them; a reader
        // wrote nothing: every sealed and data file as it was, bytes and times
        let sealed_or_data = |files: Vec<(PathBuf, Vec<u8>, SystemTime)>| {
            files
                .into_iter()
                .filter(|(p, _, _)| {
                    let name = p.file_name().unwrap().to_str().unwrap();
                    name.starts_with("layer-")
                        || name.starts_with("slices-")
                        || name == "manifest.json"
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            sealed_or_data(files_with_times(&db)),
            sealed_or_data(before)
        );
        // and with no writer at all, not a file of the directory changes
        let before = files_with_times(&db);
        let scratch = tempfile::tempdir().unwrap();
        for output in run_at_once(&read_commands(db_arg, n, scratch.path())) {
            assert!(output.status.success(), "{}", stderr(&output));
        }
        assert_eq!(files_with_times(&db), before, "{n}-card {objective}");
    }
}

/// A read-only bind mount of `dir`, unmounted on drop.
struct ReadOnlyMount {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl ReadOnlyMount {
    fn new(source: &Path) -> Option<ReadOnlyMount> {
        let required = std::env::var_os("GOPS_REQUIRE_ROOT").is_some_and(|v| v == "1");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro");
        std::fs::create_dir(&path).unwrap();
        let run = |args: &[&str]| {
            Command::new("mount")
                .args(args)
                .output()
                .map_err(|e| e.to_string())
                .and_then(|out| match out.status.success() {
                    true => Ok(()),
                    false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
                })
        };
        let mounted = run(&["--bind", source.to_str().unwrap(), path.to_str().unwrap()])
            .and_then(|()| run(&["-o", "remount,bind,ro", path.to_str().unwrap()]));
        match mounted {
            Ok(()) => Some(ReadOnlyMount { _dir: dir, path }),
            Err(why) => {
                let _ = Command::new("umount").arg(&path).output();
                assert!(
                    !required,
                    "cannot make a read-only bind mount (GOPS_REQUIRE_ROOT=1): {why}"
                );
                eprintln!("SKIPPED: a read-only bind mount needs root: {why}");
                None
            }
        }
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).output();
    }
}

#[test]
fn a_complete_db_on_a_read_only_mount_answers_as_it_does_writable() {
    let (_dir, db) = temp_db();
    solve(&db, 6, &["--objective", "win"]);
    let Some(mount) = ReadOnlyMount::new(&db) else {
        return;
    };
    let ro = mount.path.to_str().unwrap();
    // the mount really is read only
    assert!(std::fs::write(mount.path.join("probe"), b"x").is_err());
    let (scratch_w, scratch_r) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writable = run_at_once(&read_commands(db.to_str().unwrap(), 6, scratch_w.path()));
    let read_only = run_at_once(&read_commands(ro, 6, scratch_r.path()));
    let (out_w, out_r) = (
        scratch_w.path().to_str().unwrap(),
        scratch_r.path().to_str().unwrap(),
    );
    for ((w, r), (args, _)) in
        writable
            .iter()
            .zip(&read_only)
            .zip(read_commands(ro, 6, scratch_r.path()))
    {
        assert!(
            r.status.success(),
            "{args:?} on the read-only mount: {}",
            stderr(r)
        );
        assert_eq!(
            answer(w, db.to_str().unwrap()).replace(out_w, "OUT"),
            answer(r, ro).replace(out_r, "OUT"),
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read(scratch_w.path().join("layer2.parquet")).unwrap(),
        std::fs::read(scratch_r.path().join("layer2.parquet")).unwrap()
    );
    let mut serve = Proc::spawn(&["serve", "--db", ro, "--listen", "127.0.0.1:0"]);
    serve.wait_for("explorer listening", |l| l.contains("explorer listening"));
    serve.terminate();
    assert!(serve.finish().0);
}

#[test]
fn a_complete_layer_is_read_while_the_run_above_it_goes_on() {
    let (_dir, db) = temp_db();
    let (_ref_dir, reference_db) = temp_db();
    solve(&reference_db, 8, &[]);
    let db_arg = db.to_str().unwrap();
    // the run held inside layer 5: layers 1-4 of the 8-card game hold 162 slices
    let mut coordinator = Proc::spawn(&[
        "coordinator",
        "--n",
        "8",
        "--db",
        db_arg,
        "--listen",
        "127.0.0.1:0",
        "--shard-games",
        "5000",
        "--stop-after-slices",
        "170",
    ]);
    let url = format!("http://{}", listening_address(&mut coordinator));
    let worker = Proc::spawn(&["worker", "--coordinator", &url, "--threads", "1"]);
    coordinator.wait_for("the hold", |l| l.contains("leasing nothing more"));
    // a state with 4 cards left: answered from the sealed layer 4, as the finished db does
    let state = [
        "--a", "1,3,5,7", "--b", "2,3,6,8", "--prizes", "2,4,5,8", "--json",
    ];
    let ask = |db: &str| {
        let mut args = vec!["value", "--db", db];
        args.extend_from_slice(&state);
        gops(&args)
    };
    let live = ask(db_arg);
    assert!(live.status.success(), "{}", stderr(&live));
    assert_eq!(stdout(&live), stdout(&ask(reference_db.to_str().unwrap())));
    // the start (8 cards left) waits for layer 8, and says so
    let out = gops(&["value", "--db", db_arg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("layer 8 (8 cards left) is not solved yet"),
        "{}",
        stderr(&out)
    );
    // status: the complete layers from the db, the open one from the running writer
    let status: Value =
        serde_json::from_str(&gops_ok(&["status", "--db", db_arg, "--json"])).unwrap();
    let reference: Value = serde_json::from_str(&gops_ok(&[
        "status",
        "--db",
        reference_db.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(status["in_use"], true, "{status}");
    assert_eq!(status["complete"], false);
    for k in 0..4 {
        assert_eq!(status["layers"][k]["complete"], true, "{status}");
        assert_eq!(
            status["layers"][k]["checksum"],
            reference["layers"][k]["checksum"]
        );
    }
    coordinator.kill();
    worker.kill();
}
