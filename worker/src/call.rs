//! One call to the coordinator, retried: transient failures are retried with backoff
//! until the coordinator has been unreachable for too long, or the worker was asked to
//! stop more than a grace period ago; "unknown worker" asks the caller to greet again;
//! a TLS refusal, the coordinator's own failure and every refusal are final (the status
//! contract: [`gops_proto::answers`]).

use std::future::Future;
use std::time::Duration;

use gops_proto::answers::Answer;
use tokio::sync::watch;
use tokio::time::Instant;
use tonic::Status;
use tracing::warn;

use crate::backoff::{Backoff, tls_refusal};
use crate::error::ClientError;
use crate::link::Link;

/// How a call ended, once transient failures were retried.
pub enum Called<T> {
    Done(T),
    /// The coordinator does not know this worker (it restarted): say hello again.
    Forgotten,
}

/// A failed call's message with the errors behind it ("transport error" alone says
/// nothing; "connection refused" does).
fn reason(status: &Status) -> String {
    gops_proto::error_text::with_sources(status.message().to_string(), status)
}

/// How long a worker asked to stop keeps retrying an unreachable coordinator (to hand in
/// its last shard) before it exits anyway.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// How many times a failed call is tried again, at the least, before the worker gives up
/// on its coordinator: a call in flight while the process was frozen (SIGSTOP, a
/// suspended machine) fails on waking with the whole pause behind it, and the
/// coordinator, woken with it, deserves a few more tries.
pub const MIN_RETRIES: u32 = 3;

/// Calls `f` with the coordinator's `link` until it succeeds, is refused for good, the
/// coordinator has been unreachable for longer than `backoff` allows (counted from the
/// first failure, and after [`MIN_RETRIES`] retries at least), or the worker was
/// asked to `stop` more than [`STOP_GRACE`] ago. Time is tokio's (paused in tests).
pub async fn call_with<L: Link, T, F, Fut>(
    link: &L,
    backoff: &Backoff,
    stop: &watch::Receiver<bool>,
    what: &str,
    mut f: F,
) -> Result<Called<T>, ClientError>
where
    F: FnMut(L) -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    // the coordinator is unreachable from the first failure on, not from the call's start
    let mut first_failure: Option<Instant> = None;
    let mut attempt = 0;
    let mut stop = stop.clone();
    let mut stop_seen: Option<Instant> = None;
    loop {
        let status = match f(link.clone()).await {
            Ok(reply) => return Ok(Called::Done(reply)),
            Err(status) => status,
        };
        if let Some(why) = tls_refusal(&status) {
            return Err(ClientError::Refused(format!(
                "{what}: TLS with the coordinator failed: {why}"
            )));
        }
        match Answer::of(&status) {
            Answer::Forgotten => return Ok(Called::Forgotten),
            Answer::CoordinatorFailed => {
                return Err(ClientError::CoordinatorFailed(format!(
                    "{what}: {}",
                    status.message()
                )));
            }
            Answer::Refused => {
                return Err(ClientError::Refused(format!(
                    "{what}: {}",
                    status.message()
                )));
            }
            Answer::TryAgain => {
                let unreachable_for = first_failure.get_or_insert_with(Instant::now).elapsed();
                if unreachable_for > backoff.give_up_after && attempt >= MIN_RETRIES {
                    return Err(ClientError::GaveUp(
                        unreachable_for,
                        status.message().to_string(),
                    ));
                }
                let stopping = *stop.borrow_and_update();
                if stopping {
                    let since = *stop_seen.get_or_insert_with(Instant::now);
                    if since.elapsed() > STOP_GRACE {
                        return Err(ClientError::Stopped(status.message().to_string()));
                    }
                }
                let pause = backoff.delay(attempt);
                // every step, with the reason (the worker's span names the coordinator)
                warn!(
                    call = what,
                    error = %reason(&status),
                    retry_in_ms = pause.as_millis() as u64,
                    unreachable_for_s = unreachable_for.as_secs(),
                    "coordinator unreachable, retrying"
                );
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    // a stop request cuts the pause short and starts the grace period
                    _ = stop.changed(), if !stopping => {}
                }
                attempt += 1;
            }
        }
    }
}
