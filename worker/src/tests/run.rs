//! Whole worker runs against the fake coordinator: a run to the end, the end heard at
//! once, a lost lease, a coordinator gone, restarted or refusing, a wait, a stop.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::fake::{Fake, Script};
use super::{LEASE_MS, config};
use crate::client::run_worker_with;
use crate::error::ClientError;
use crate::summary::WorkerSummary;

/// The 3-card points game: layers of 3, 3 and 1 prize sets.
const N: u8 = 3;
const SLICES: usize = 7;

/// The fake coordinator of the game, misbehaving as `script` says.
fn scripted(script: Script) -> Fake {
    Fake::new(N, LEASE_MS, script)
}

async fn run(fake: &Fake) -> Result<WorkerSummary, ClientError> {
    let (_stop, shutdown) = watch::channel(false);
    run_worker_with(config(), fake.clone(), shutdown).await
}

#[tokio::test(start_paused = true)]
async fn a_worker_solves_the_whole_game_and_hears_the_end_at_once() {
    let fake = Fake::new(N, LEASE_MS, Script::default());
    let started = Instant::now();
    let summary = run(&fake).await.expect("the run ends well");
    assert!(fake.complete());
    assert_eq!(
        (summary.shards, summary.slices),
        (SLICES as u64, SLICES as u64)
    );
    assert_eq!(summary.rejected, 0);
    // every shard's slices below were fetched or cached, none read from a directory
    let deps = summary.dependencies;
    assert!(deps.fetched > 0 && deps.read_from_dir == 0);
    // no pause anywhere: no wait answered with nothing in flight, no grace at the end
    // (the fake's waits are 5 s)
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let last = fake.seen().last().expect("calls").call;
    assert_eq!(last, "lease", "'finished' ends the run: nothing after it");
}

#[tokio::test(start_paused = true)]
async fn a_finished_run_is_heard_at_the_first_lease() {
    let fake = Fake::new(N, LEASE_MS, Script::default());
    run(&fake).await.expect("first run");
    let calls = fake.seen().len();
    let started = Instant::now();
    let summary = run(&fake).await.expect("second run");
    assert_eq!(summary.shards, 0);
    let after: Vec<&str> = fake.seen()[calls..].iter().map(|s| s.call).collect();
    assert_eq!(after, ["hello", "lease"]);
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_lease_lost_while_solving_is_finished_refused_and_solved_again() {
    let fake = scripted(Script {
        lose_lease: Some(2),
        ..Script::default()
    });
    let summary = run(&fake).await.expect("the run goes on after the refusal");
    assert!(fake.complete());
    assert_eq!(summary.rejected, 1);
    assert_eq!(summary.slices, SLICES as u64);
    // the lost lease's shard was solved and handed in all the same, then leased again
    let seen = fake.seen();
    assert!(seen.iter().any(|s| s.call == "submit" && s.lease == 2));
    assert_eq!(fake.count("submit"), SLICES + 1);
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_gone_for_longer_than_the_give_up_time_ends_the_worker() {
    let fake = scripted(Script {
        down_after_stored: Some(3),
        ..Script::default()
    });
    let real = std::time::Instant::now();
    let started = Instant::now();
    let error = run(&fake).await.expect_err("gives up");
    let ClientError::GaveUp(after, why) = error else {
        panic!("not a give-up: {error}");
    };
    assert!(why.contains("connection refused"), "{why}");
    // 60 s of trying, the last pause at most the 5 s cap beyond it
    assert!(after > Duration::from_secs(60), "{after:?}");
    let virtual_time = started.elapsed();
    assert!(virtual_time > Duration::from_secs(60) && virtual_time < Duration::from_secs(66));
    assert!(
        real.elapsed() < Duration::from_secs(20),
        "virtual time, not real"
    );
    assert_eq!(fake.stored(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_never_reached_fails_after_the_first_contact_time() {
    let fake = scripted(Script {
        down: true,
        ..Script::default()
    });
    let started = Instant::now();
    let error = run(&fake).await.expect_err("never reached");
    assert!(matches!(error, ClientError::NeverReached(..)), "{error}");
    let waited = started.elapsed();
    assert!(waited > Duration::from_secs(30) && waited < Duration::from_secs(36));
    assert!(fake.count("hello") > 5, "retried with backoff");
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_unreachable_for_a_while_is_waited_for_with_growing_pauses() {
    let fake = scripted(Script {
        unreachable_leases: 6,
        ..Script::default()
    });
    let summary = run(&fake).await.expect("the run ends well");
    assert_eq!(summary.slices, SLICES as u64);
    let leases = fake.times_of("lease");
    let pauses: Vec<Duration> = leases.windows(2).take(6).map(|w| w[1] - w[0]).collect();
    // 100 ms doubling, each scaled by a factor in [0.5, 1]
    for (attempt, pause) in pauses.iter().enumerate() {
        let full = Duration::from_millis(100 << attempt);
        assert!(*pause >= full / 2 && *pause <= full, "{attempt}: {pause:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_refusal_ends_the_worker_at_once_without_retrying() {
    let fake = scripted(Script {
        refuse_hello: true,
        ..Script::default()
    });
    let started = Instant::now();
    let error = run(&fake).await.expect_err("refused");
    let ClientError::Refused(why) = error else {
        panic!("not a refusal: {error}");
    };
    assert!(why.contains("wrong token"), "{why}");
    assert_eq!(fake.count("hello"), 1);
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn the_coordinator_s_own_failure_ends_the_worker_at_once_without_retrying() {
    let fake = scripted(Script {
        store_failed: true,
        ..Script::default()
    });
    let started = Instant::now();
    let error = run(&fake).await.expect_err("the coordinator failed");
    assert!(
        matches!(&error, ClientError::CoordinatorFailed(why) if why.contains("file system is full")),
        "{error}"
    );
    assert_eq!(fake.count("submit"), 1, "not retried");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_wait_is_waited_for_then_the_worker_asks_again() {
    let fake = scripted(Script {
        wait_first_ms: Some(2_000),
        ..Script::default()
    });
    run(&fake).await.expect("the run ends well");
    let leases = fake.times_of("lease");
    assert_eq!(leases[1] - leases[0], Duration::from_millis(2_000));
}

#[tokio::test(start_paused = true)]
async fn a_restarted_coordinator_is_greeted_again_and_the_run_goes_on() {
    let fake = scripted(Script {
        restart_at_lease: Some(4),
        ..Script::default()
    });
    let summary = run(&fake).await.expect("the run ends well");
    assert!(fake.complete());
    assert_eq!(fake.count("hello"), 2);
    assert_eq!(summary.slices, SLICES as u64);
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_restarted_on_another_game_is_a_protocol_error() {
    let fake = scripted(Script {
        restart_at_lease: Some(4),
        n_after_restart: Some(4),
        ..Script::default()
    });
    let error = run(&fake).await.expect_err("another game");
    assert!(
        matches!(&error, ClientError::Protocol(why) if why.contains("another game")),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stopped_worker_hands_in_its_shard_gives_back_the_one_leased_ahead_and_leaves() {
    let (stop, shutdown) = watch::channel(false);
    let fake = scripted(Script {
        stop_at_lease: Some((3, stop)),
        ..Script::default()
    });
    let summary = run_worker_with(config(), fake.clone(), shutdown)
        .await
        .expect("a clean stop");
    // lease 2 was solved and handed in; lease 3, leased ahead meanwhile, given back
    let seen = fake.seen();
    assert!(seen.iter().any(|s| s.call == "submit" && s.lease == 2));
    assert!(seen.iter().any(|s| s.call == "release" && s.lease == 3));
    assert!(!seen.iter().any(|s| s.call == "submit" && s.lease == 3));
    assert_eq!(seen.last().map(|s| s.call), Some("leave"));
    assert_eq!(summary.shards, 2);
}

#[tokio::test(start_paused = true)]
async fn a_worker_stopped_while_the_coordinator_is_away_exits_after_the_grace() {
    let (stop, shutdown) = watch::channel(false);
    let fake = scripted(Script {
        down_after_stored: Some(3),
        ..Script::default()
    });
    let worker = tokio::spawn(run_worker_with(config(), fake.clone(), shutdown));
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.send(true).expect("the worker listens");
    let stopped = Instant::now();
    let error = worker.await.expect("joins").expect_err("stopped");
    assert!(matches!(error, ClientError::Stopped(_)), "{error}");
    // the grace (10 s) and at most one pause past it, long before the 60 s give-up
    let waited = stopped.elapsed();
    assert!(waited >= crate::call::STOP_GRACE && waited < Duration::from_secs(16));
}

#[tokio::test(start_paused = true)]
async fn heartbeats_that_hang_do_not_hold_up_the_run() {
    let fake = scripted(Script {
        hang_heartbeats: true,
        ..Script::default()
    });
    let summary = run(&fake).await.expect("the run ends well");
    assert_eq!(summary.slices, SLICES as u64);
}
