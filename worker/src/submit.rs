//! Handing in a solved shard: its slices as messages in chunks, sent in order while the
//! lease is heartbeated, in a task of its own so the next shard is solved meanwhile;
//! `settle` waits for it, greets a restarted coordinator again and resends what it
//! forgot, and accounts for the outcome.

use std::time::Duration;

use tokio::time::Instant;

use gops_common::engine::SolvedSlice;
use gops_proto::ids::{Caller, LeaseId};
use gops_proto::v1::{SliceData, SubmitRequest};
use gops_proto::wire::slice_data;
use tokio::sync::watch;
use tracing::{debug, error, warn};

use crate::backoff::Backoff;
use crate::call::{Called, call_with};
use crate::connection::Client;
use crate::error::ClientError;
use crate::heartbeat::{Phase, keep_lease};
use crate::link::Link;
use crate::session::Session;
use crate::summary::WorkerSummary;

/// How a submission ended.
pub enum Submission {
    /// Handed in: how the coordinator counted the slices.
    Stored(Counted),
    Rejected,
    /// The coordinator restarted and forgot this worker: these chunks are still to send.
    Forgotten(Vec<Vec<SliceData>>),
}

/// What the coordinator made of a shard's slices: stored, already stored (another
/// worker's speculative copy won), or held until another worker's copy confirms them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    pub stored: u64,
    pub duplicates: u64,
    pub held: u64,
}

/// A shard whose submission is under way.
pub struct InFlight {
    pub task: tokio::task::JoinHandle<Result<Submission, ClientError>>,
    pub layer: u8,
    pub lease_id: LeaseId,
    pub slices: usize,
    pub games: u64,
    pub started: Instant,
}

/// The shard's slices as messages, in chunks of at most `chunk_bytes` of slice bodies
/// (a slice larger than that goes alone).
pub fn submission_chunks(
    layer: u8,
    solved: &[SolvedSlice],
    chunk_bytes: usize,
) -> Vec<Vec<SliceData>> {
    let mut chunks: Vec<Vec<SliceData>> = vec![Vec::new()];
    let mut size = 0;
    for s in solved {
        let data = slice_data(layer, s.prize_rank, s.to_bytes());
        if size + data.body.len() > chunk_bytes && !chunks.last().is_none_or(Vec::is_empty) {
            chunks.push(Vec::new());
            size = 0;
        }
        size += data.body.len();
        chunks.last_mut().expect("one chunk at least").push(data);
    }
    chunks
}

/// What a submission task needs from the session.
#[derive(Clone)]
pub struct Submitter<L: Link = Client> {
    client: L,
    backoff: Backoff,
    stop: watch::Receiver<bool>,
    caller: Caller,
    /// Heartbeat period of the lease while its submission is under way.
    beat_every: Duration,
}

impl<L: Link> Session<L> {
    pub fn submitter(&self) -> Submitter<L> {
        Submitter {
            client: self.client.clone(),
            backoff: self.backoff.clone(),
            stop: self.stop.clone(),
            caller: self.caller(),
            beat_every: self.lease() / 3,
        }
    }
}

/// Sends the chunks in order, heartbeating the lease meanwhile (a large submission on a
/// slow link must not cost the lease).
pub async fn send_submission<L: Link>(
    submitter: Submitter<L>,
    lease_id: LeaseId,
    chunks: Vec<Vec<SliceData>>,
) -> Result<Submission, ClientError> {
    let beats = keep_lease(
        submitter.client.clone(),
        submitter.caller,
        lease_id,
        submitter.beat_every,
        Phase::Submitting,
    );
    tokio::select! {
        outcome = send_chunks(&submitter, lease_id, chunks) => outcome,
        never = beats => match never {},
    }
}

async fn send_chunks<L: Link>(
    submitter: &Submitter<L>,
    lease_id: LeaseId,
    mut chunks: Vec<Vec<SliceData>>,
) -> Result<Submission, ClientError> {
    let Submitter {
        client,
        backoff,
        stop,
        caller,
        ..
    } = submitter;
    let mut counted = Counted::default();
    while !chunks.is_empty() {
        let request = SubmitRequest {
            worker_id: caller.worker.0,
            lease_id: lease_id.0,
            slices: chunks[0].clone(),
            session_key: caller.key.to_wire(),
        };
        let result = call_with(client, backoff, stop, "submit", |c| {
            let r = request.clone();
            async move { c.submit(r).await }
        })
        .await;
        match result {
            Ok(Called::Done(reply)) => {
                counted.stored += u64::from(reply.stored);
                counted.duplicates += u64::from(reply.duplicates);
                counted.held += u64::from(reply.held);
                chunks.remove(0);
            }
            Ok(Called::Forgotten) => return Ok(Submission::Forgotten(chunks)),
            Err(ClientError::Refused(why)) => {
                error!(lease = %lease_id, reason = %why, "submission rejected");
                return Ok(Submission::Rejected);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Submission::Stored(counted))
}

/// Waits for the submission in flight, if any, and accounts for it. A coordinator that
/// restarted meanwhile forgot the lease, and accepts results only under a lease of the
/// session that submits them: what it did not store is dropped and solved again (the
/// main loop greets it again).
pub async fn settle(
    in_flight: &mut Option<InFlight>,
    summary: &mut WorkerSummary,
) -> Result<(), ClientError> {
    let Some(shard) = in_flight.take() else {
        return Ok(());
    };
    let outcome = shard
        .task
        .await
        .map_err(|e| ClientError::Local(format!("the submission task failed: {e}")))??;
    match outcome {
        Submission::Stored(counted) => {
            summary.shards += 1;
            summary.slices += counted.stored;
            summary.duplicates += counted.duplicates;
            summary.held += counted.held;
            summary.games += shard.games;
            // per shard: a detail (`--log debug`)
            debug!(
                layer = shard.layer,
                slices = shard.slices,
                stored = counted.stored,
                already_stored = counted.duplicates,
                held = counted.held,
                games = shard.games,
                seconds = format!("{:.2}", shard.started.elapsed().as_secs_f64()),
                "shard done"
            );
        }
        Submission::Rejected => summary.rejected += 1,
        Submission::Forgotten(rest) => {
            let dropped: usize = rest.iter().map(Vec::len).sum();
            warn!(
                layer = shard.layer,
                lease = %shard.lease_id,
                slices = dropped,
                "the coordinator restarted and forgot this lease: its unsent slices will be solved again"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::slice::Slice;

    fn solved(rank: u32, values: usize) -> SolvedSlice {
        SolvedSlice {
            prize_rank: rank,
            slice: Slice::dense(0, vec![0.5; values]),
            max_gap: 0.0,
            games: 1,
        }
    }

    #[test]
    fn chunks_keep_the_order_and_stay_under_the_limit() {
        let shard: Vec<SolvedSlice> = (0..10).map(|r| solved(r, 100)).collect();
        let body = slice_data(1, 0, shard[0].to_bytes()).body.len();
        let chunks = submission_chunks(3, &shard, 3 * body);
        assert_eq!(chunks.len(), 4, "3 + 3 + 3 + 1");
        let ranks: Vec<u32> = chunks.iter().flatten().map(|d| d.prize_rank).collect();
        assert_eq!(ranks, (0..10).collect::<Vec<_>>());
        assert!(chunks.iter().flatten().all(|d| d.layer == 3));
        // a slice larger than the limit travels alone, never in an empty chunk
        let big = submission_chunks(1, &shard[..2], 1);
        assert_eq!(big.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 1]);
        assert_eq!(submission_chunks(1, &[], 10), vec![Vec::new()]);
    }
}
