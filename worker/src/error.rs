//! How a worker's work fails: one error type for every module of the worker (a leaf, so
//! that they need not reach into the main loop for it), which says whose fault it was:
//! the coordinator's ([`ClientError::Protocol`], [`ClientError::Refused`],
//! [`ClientError::CoordinatorFailed`]), the
//! network's ([`ClientError::GaveUp`], [`ClientError::NeverReached`]) or the worker's
//! own ([`ClientError::Local`], [`ClientError::Solver`], [`ClientError::Budget`]).

use std::time::Duration;

use gops_common::shard::ShardError;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad coordinator address '{0}': {1}")]
    Address(String, String),
    #[error("the coordinator refused: {0}")]
    Refused(String),
    /// The coordinator's own failure (its store cannot be written, its engine failed):
    /// it stops; this worker's work was not at fault.
    #[error("the coordinator failed (not this worker's fault; the coordinator stops): {0}")]
    CoordinatorFailed(String),
    #[error("gave up after the coordinator was unreachable for {} s: {}", .0.as_secs(), .1)]
    GaveUp(Duration, String),
    /// The coordinator was never reached (a mistyped address, a coordinator not started).
    #[error(
        "could not reach the coordinator in {} s (is --coordinator right, and is it running?): {}",
        .0.as_secs(),
        .1
    )]
    NeverReached(Duration, String),
    /// Asked to stop while the coordinator could not be reached: the shard in hand, if
    /// any, is leased again once its lease runs out.
    #[error("stopped while the coordinator was unreachable: {0}")]
    Stopped(String),
    #[error(
        "the {n}-card game needs at least {need_mib} MiB (one shard and its dependency slices); --memory-mb is {budget_mib}"
    )]
    Budget {
        n: u8,
        need_mib: u64,
        budget_mib: u64,
    },
    /// The coordinator's fault: a reply of the wrong form or content.
    #[error("the coordinator sent something unusable: {0}")]
    Protocol(String),
    /// This worker's own fault: one of its tasks (the solver's thread, a submission, a
    /// read of the shared directory) failed.
    #[error("this worker failed: {0}")]
    Local(String),
    #[error(transparent)]
    Solver(#[from] ShardError),
}
