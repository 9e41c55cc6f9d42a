//! `--slices-dir` against the fake coordinator: the slices below read from the shared
//! directory where the coordinator locates them, fetched instead where the directory is
//! not the coordinator's (a stale mount) or the coordinator cannot locate them, and the
//! same slices handed in whichever way they came.

use std::path::Path;

use tokio::sync::watch;

use super::config;
use super::fake::{Fake, Script};
use crate::client::run_worker_with;
use crate::shared_dir::SharedDir;
use crate::summary::WorkerSummary;

/// The 4-card points game: layers 2 to 4 read the slices below.
const N: u8 = 4;
const LEASE_MS: u64 = super::LEASE_MS;

/// A worker run against `fake`, reading the slices below from `slices_dir` if given.
async fn run(fake: &Fake, slices_dir: Option<&Path>) -> WorkerSummary {
    let (_stop, shutdown) = watch::channel(false);
    let config = crate::client::WorkerConfig {
        slices_dir: slices_dir.map(|dir| SharedDir::new(dir).unwrap()),
        ..config()
    };
    let summary = run_worker_with(config, fake.clone(), shutdown)
        .await
        .expect("the run ends well");
    assert!(fake.complete());
    summary
}

/// The fake coordinator of the game, writing the slices it stores into `dir` and
/// locating them there.
fn writing_to(dir: &Path) -> Fake {
    Fake::new(
        N,
        LEASE_MS,
        Script {
            shared_dir: Some(dir.to_path_buf()),
            ..Script::default()
        },
    )
}

/// The slices of a run that fetched every dependency.
async fn fetched_run() -> Fake {
    let fake = Fake::new(N, LEASE_MS, Script::default());
    run(&fake, None).await;
    fake
}

#[tokio::test(start_paused = true)]
async fn every_slice_below_is_read_from_the_directory_where_the_coordinator_locates_it() {
    let dir = tempfile::tempdir().unwrap();
    let fake = writing_to(dir.path());
    let summary = run(&fake, Some(dir.path())).await;
    let deps = summary.dependencies;
    assert!(deps.read_from_dir > 0, "{deps:?}");
    assert_eq!(deps.fetched, 0, "{deps:?}");
    assert_eq!(fake.count("fetch"), 0);
    assert!(fake.count("locate") > 0);
    // the slices handed in are those of a run that fetched them, bit for bit
    assert_eq!(fake.stored_slices(), fetched_run().await.stored_slices());
}

#[tokio::test(start_paused = true)]
async fn a_directory_that_is_not_the_coordinator_s_is_reported_and_its_slices_fetched() {
    let (written, stale) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // a stale mount: the same file names, other contents
    for k in 1..N {
        std::fs::write(stale.path().join(format!("slices-{k:02}.dat")), [0u8; 4096]).unwrap();
    }
    let fake = writing_to(written.path());
    let summary = run(&fake, Some(stale.path())).await;
    let deps = summary.dependencies;
    assert_eq!(deps.read_from_dir, 0, "{deps:?}");
    assert!(deps.fetched > 0, "{deps:?}");
    assert_eq!(fake.stored_slices(), fetched_run().await.stored_slices());
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_that_cannot_locate_turns_the_directory_off_after_one_ask() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new(N, LEASE_MS, Script::default());
    let summary = run(&fake, Some(dir.path())).await;
    let deps = summary.dependencies;
    assert_eq!(deps.read_from_dir, 0, "{deps:?}");
    assert!(deps.fetched > 0, "{deps:?}");
    assert_eq!(fake.count("locate"), 1);
}
