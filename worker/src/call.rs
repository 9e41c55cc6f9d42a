//! One call to the coordinator, retried: transient failures are retried with backoff
//! until the coordinator has been unreachable for too long, or the worker was asked to
//! stop more than a grace period ago; "unknown worker" asks the caller to greet again;
//! a TLS refusal and every other error are final.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tonic::{Code, Status};
use tracing::warn;

use crate::backoff::{Backoff, is_transient, tls_refusal};
use crate::client::ClientError;
use crate::connection::Client;

/// How a call ended, once transient failures were retried.
pub enum Called<T> {
    Done(T),
    /// The coordinator does not know this worker (it restarted): say hello again.
    Forgotten,
}

/// How long a worker asked to stop keeps retrying an unreachable coordinator (to hand in
/// its last shard) before it exits anyway.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// Calls `f` until it succeeds, is refused for good, the coordinator has been
/// unreachable for longer than `backoff` allows, or the worker was asked to `stop` more
/// than [`STOP_GRACE`] ago.
pub async fn call_with<T, F, Fut>(
    client: &Client,
    backoff: &Backoff,
    stop: &watch::Receiver<bool>,
    what: &str,
    mut f: F,
) -> Result<Called<T>, ClientError>
where
    F: FnMut(Client) -> Fut,
    Fut: Future<Output = Result<tonic::Response<T>, Status>>,
{
    let started = Instant::now();
    let mut attempt = 0;
    let mut stop = stop.clone();
    let mut stop_seen: Option<Instant> = None;
    loop {
        match f(client.clone()).await {
            Ok(response) => return Ok(Called::Done(response.into_inner())),
            Err(status) if status.code() == Code::NotFound => return Ok(Called::Forgotten),
            Err(status) if tls_refusal(&status).is_some() => {
                let why = tls_refusal(&status).unwrap_or_default();
                return Err(ClientError::Refused(format!(
                    "{what}: TLS with the coordinator failed: {why}"
                )));
            }
            Err(status) if is_transient(status.code()) => {
                if started.elapsed() > backoff.give_up_after {
                    return Err(ClientError::GaveUp(
                        started.elapsed(),
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
                if attempt == 0 {
                    warn!(call = what, error = %status.message(), "coordinator unreachable, retrying");
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff.delay(attempt)) => {}
                    // a stop request cuts the pause short and starts the grace period
                    _ = stop.changed(), if !stopping => {}
                }
                attempt += 1;
            }
            Err(status) => {
                return Err(ClientError::Refused(format!(
                    "{what}: {}",
                    status.message()
                )));
            }
        }
    }
}
