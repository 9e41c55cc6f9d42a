//! One call at a time against the fake coordinator: the retry of a single call, and the
//! heartbeats that keep a lease alive.

use std::time::Duration;

use gops_proto::ids::{Caller, LeaseId, SessionKey, WorkerId};
use gops_proto::v1::{HelloRequest, LeaseReply, LeaseRequest};
use tokio::sync::watch;
use tokio::time::Instant;
use tonic::Status;

use super::fake::{Fake, Script};
use super::{LEASE_MS, backoff};
use crate::call::{Called, call_with};
use crate::error::ClientError;
use crate::heartbeat::{Phase, keep_lease};
use crate::link::Link;

/// The worker as the fake's first hello names it: id 41, key 1 (each hello gives the
/// next).
fn caller() -> Caller {
    Caller {
        worker: WorkerId(41),
        key: SessionKey([1; SessionKey::LEN]),
    }
}

/// Heartbeats of lease 1 to `fake` every `every`, in a task of their own.
fn beat(
    fake: &Fake,
    every: Duration,
    phase: Phase,
) -> tokio::task::JoinHandle<std::convert::Infallible> {
    tokio::spawn(keep_lease(fake.clone(), caller(), LeaseId(1), every, phase))
}

/// How many heartbeats the fake has seen.
fn beats(fake: &Fake) -> usize {
    fake.count("heartbeat")
}

#[tokio::test(start_paused = true)]
async fn a_lease_is_heartbeaten_every_period() {
    let fake = Fake::new(3, LEASE_MS, Script::default());
    let every = Duration::from_secs(10);
    let beating = beat(&fake, every, Phase::Solving);
    tokio::time::sleep(Duration::from_secs(35)).await;
    assert_eq!(beats(&fake), 3, "at 10, 20 and 30 s");
    beating.abort();
}

#[tokio::test(start_paused = true)]
async fn a_frozen_then_woken_worker_sends_one_heartbeat_not_a_burst() {
    let fake = Fake::new(3, LEASE_MS, Script::default());
    let every = Duration::from_secs(10);
    let beating = beat(&fake, every, Phase::Solving);
    tokio::time::sleep(Duration::from_secs(25)).await;
    assert_eq!(beats(&fake), 2);
    // frozen: the clock jumps ten periods while nothing runs (SIGSTOP, a suspended
    // machine), then the task is woken
    tokio::time::advance(Duration::from_secs(100)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        beats(&fake),
        3,
        "one heartbeat on waking, not one per missed beat"
    );
    // and the next a period later, not sooner
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert_eq!(beats(&fake), 3);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(beats(&fake), 4);
    beating.abort();
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_that_hangs_is_cut_off_and_the_next_one_still_goes() {
    let script = Script {
        hang_heartbeats: true,
        ..Script::default()
    };
    let fake = Fake::new(3, LEASE_MS, script);
    let every = Duration::from_secs(10);
    let beating = beat(&fake, every, Phase::Submitting);
    // each call hangs for its whole bound (one period), then the next is made
    tokio::time::sleep(Duration::from_secs(45)).await;
    let at: Vec<Instant> = fake.seen().iter().map(|s| s.at).collect();
    assert!(at.len() >= 2, "{} heartbeats", at.len());
    assert!(at.windows(2).all(|w| w[1] - w[0] >= every));
    beating.abort();
}

#[tokio::test(start_paused = true)]
async fn a_call_is_retried_through_transient_failures_and_answers() {
    let script = Script {
        unreachable_leases: 3,
        ..Script::default()
    };
    let fake = Fake::new(3, LEASE_MS, script);
    hello(&fake).await;
    let called = lease_with_retries(&fake).await.expect("answers in the end");
    assert!(matches!(called, Called::Done(reply) if reply.reply.is_some()));
    assert_eq!(fake.count("lease"), 4);
}

#[tokio::test(start_paused = true)]
async fn another_session_s_key_is_refused_for_good_and_another_version_at_hello() {
    let fake = Fake::new(3, LEASE_MS, Script::default());
    hello(&fake).await;
    // the worker's id with another key
    let (_stop, stop) = watch::channel(false);
    let forged = LeaseRequest {
        session_key: vec![9; 32],
        ..lease_request()
    };
    let refused = call_with(&fake, &backoff(), &stop, "lease", |link| {
        let r = forged.clone();
        async move { link.lease(r).await }
    })
    .await;
    assert!(
        matches!(&refused, Err(ClientError::Refused(why)) if why.contains("wrong session key")),
        "{:?}",
        refused.map(|_| ())
    );
    assert_eq!(fake.count("lease"), 1, "not retried");
    let old = HelloRequest {
        protocol_version: gops_proto::PROTOCOL_VERSION - 1,
        worker_name: "old".into(),
        threads: 1,
    };
    let status = fake.hello(old).await.unwrap_err();
    assert_eq!(
        gops_proto::answers::Answer::of(&status),
        gops_proto::answers::Answer::Refused
    );
}

#[tokio::test(start_paused = true)]
async fn an_unknown_worker_is_told_to_greet_again() {
    let fake = Fake::new(3, LEASE_MS, Script::default());
    // no hello yet: the fake knows no worker
    let called = lease_with_retries(&fake).await.expect("not an error");
    assert!(matches!(called, Called::Forgotten));
    assert_eq!(fake.count("lease"), 1, "not retried");
}

#[tokio::test(start_paused = true)]
async fn a_refusal_is_final_and_names_the_call() {
    let (_stop, stop) = watch::channel(false);
    let fake = Fake::new(3, LEASE_MS, Script::default());
    let started = Instant::now();
    let result: Result<Called<()>, ClientError> =
        call_with(&fake, &backoff(), &stop, "submit", |_link| async {
            Err(Status::invalid_argument("a slice outside the lease"))
        })
        .await;
    let Err(ClientError::Refused(why)) = result else {
        panic!("not a refusal");
    };
    assert_eq!(why, "submit: a slice outside the lease");
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_call_frozen_past_the_give_up_time_is_still_retried_on_waking() {
    let (_stop, stop) = watch::channel(false);
    let fake = Fake::new(3, LEASE_MS, Script::default());
    let tries = std::sync::atomic::AtomicU32::new(0);
    // the first try is in flight while the process is frozen for 20 minutes (far past
    // the 60 s give-up time) and times out on waking; the coordinator, frozen with it,
    // answers the retry
    let result: Result<Called<u32>, ClientError> =
        call_with(&fake, &backoff(), &stop, "submit", |_link| {
            let n = tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                if n == 0 {
                    tokio::time::advance(Duration::from_secs(20 * 60)).await;
                    Err(Status::unavailable("Timeout expired"))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
    assert!(
        matches!(result, Ok(Called::Done(1))),
        "{:?}",
        result.map(|_| ())
    );
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_down_past_the_give_up_time_is_given_up_after_a_few_retries() {
    let (_stop, stop) = watch::channel(false);
    let fake = Fake::new(3, LEASE_MS, Script::default());
    let tries = std::sync::atomic::AtomicU32::new(0);
    let result: Result<Called<()>, ClientError> =
        call_with(&fake, &backoff(), &stop, "submit", |_link| {
            tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async {
                tokio::time::advance(Duration::from_secs(20 * 60)).await;
                Err(Status::unavailable("Timeout expired"))
            }
        })
        .await;
    assert!(matches!(result, Err(ClientError::GaveUp(..))));
    assert_eq!(
        tries.into_inner(),
        crate::call::MIN_RETRIES + 1,
        "the first try and MIN_RETRIES more"
    );
}

/// One lease call through `call_with`, retried as the worker retries it, never stopped.
async fn lease_with_retries(fake: &Fake) -> Result<Called<LeaseReply>, ClientError> {
    let (_stop, stop) = watch::channel(false);
    let request = lease_request();
    call_with(fake, &backoff(), &stop, "lease", |link| {
        let r = request.clone();
        async move { link.lease(r).await }
    })
    .await
}

/// A lease request of the worker the fake greets first.
fn lease_request() -> LeaseRequest {
    LeaseRequest {
        worker_id: caller().worker.0,
        session_key: caller().key.to_wire(),
    }
}

async fn hello(fake: &Fake) {
    let request = HelloRequest {
        protocol_version: gops_proto::PROTOCOL_VERSION,
        worker_name: "test".into(),
        threads: 1,
    };
    let reply = fake.hello(request).await.expect("hello");
    assert_eq!(reply.worker_id, caller().worker.0);
    assert_eq!(reply.session_key, caller().key.to_wire());
}
