//! Heartbeats that keep a lease alive while its shard is solved or submitted: one bounded
//! call every third of the lease, failures logged and never fatal.

use std::convert::Infallible;
use std::time::Duration;

use gops_proto::ids::{Caller, LeaseId};
use gops_proto::v1::HeartbeatRequest;
use tracing::{debug, warn};

use crate::link::Link;

/// What a lease is kept alive for.
#[derive(Clone, Copy, PartialEq)]
pub enum Phase {
    Solving,
    /// A lost lease is expected here in the instant between the coordinator storing the
    /// submission and the worker hearing so.
    Submitting,
}

/// One heartbeat for `lease_id`, bounded by `limit` so a stuck call never holds up the
/// work it accompanies; failures are logged, not fatal.
async fn heartbeat<L: Link>(
    client: &L,
    caller: Caller,
    lease_id: LeaseId,
    limit: Duration,
    phase: Phase,
) {
    let request = HeartbeatRequest {
        worker_id: caller.worker.0,
        lease_id: lease_id.0,
        session_key: caller.key.to_wire(),
    };
    match tokio::time::timeout(limit, client.heartbeat(request)).await {
        Ok(Ok(reply)) if !reply.valid => match phase {
            Phase::Solving => warn!(lease = %lease_id, "lease lost; finishing the shard anyway"),
            Phase::Submitting => debug!(lease = %lease_id, "lease no longer open while submitting"),
        },
        Ok(Ok(_)) => {}
        Ok(Err(status)) => warn!(error = %status.message(), "heartbeat failed"),
        Err(_) => warn!("heartbeat timed out"),
    }
}

/// Heartbeats `lease_id` every `every`, forever (it never returns, as its type says):
/// raced against the work it keeps alive.
pub async fn keep_lease<L: Link>(
    client: L,
    caller: Caller,
    lease_id: LeaseId,
    every: Duration,
    phase: Phase,
) -> Infallible {
    let mut beats = tokio::time::interval(every.max(Duration::from_millis(1)));
    // a process frozen for a while (SIGSTOP, a suspended machine) sends one heartbeat on
    // waking, not one for every beat it missed
    beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beats.tick().await;
    loop {
        beats.tick().await;
        heartbeat(&client, caller, lease_id, every, phase).await;
    }
}
