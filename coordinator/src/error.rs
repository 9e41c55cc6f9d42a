//! What the coordinator's calls answer: their errors and outcomes. A leaf: the gRPC
//! service maps these to statuses without reaching into the core.

use std::time::Duration;

use gops_common::engine::EngineError;
use gops_db::store::StoreError;
use gops_proto::ids::{LeaseId, WorkerId};

use crate::cluster::rules::{CheckFailure, Rejection};

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("protocol version {got} is not supported: this coordinator speaks version {want}")]
    Version { got: u32, want: u32 },
    #[error("unknown worker {0}: say hello first")]
    UnknownWorker(WorkerId),
    #[error("worker {0}: wrong session key")]
    WrongSession(WorkerId),
    #[error("{0} sessions open, the most this coordinator holds: try again later")]
    Full(usize),
    #[error("bad request: {0}")]
    BadRequest(String),
    /// Settings that cannot run ([`crate::config::CoordinatorConfig::check`]).
    #[error("bad settings: {0}")]
    Config(String),
    #[error("submission rejected: {0}")]
    Rejected(Rejection),
    #[error("layer {0} is not complete yet")]
    NotReady(u8),
    #[error("worker {0} (or its token) had {1} submissions rejected: no more shards for it")]
    Banned(WorkerId, u64),
    #[error("this token had {0} submissions rejected: no more sessions for it")]
    CredentialBanned(u64),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Why a read of the store that mends damaged slices on the way failed: the store's
/// failure, or the engine's while solving a damaged slice again.
#[derive(Debug, thiserror::Error)]
pub enum ReadFailure {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<ReadFailure> for CoreError {
    fn from(failure: ReadFailure) -> CoreError {
        match failure {
            ReadFailure::Store(e) => CoreError::Store(e),
            ReadFailure::Engine(e) => CoreError::Engine(e),
        }
    }
}

impl From<ReadFailure> for CheckFailure {
    fn from(failure: ReadFailure) -> Self {
        match failure {
            ReadFailure::Store(e) => CheckFailure::Store(e),
            ReadFailure::Engine(e) => CheckFailure::Engine(e),
        }
    }
}

/// Why a run cannot go on: the coordinator stops (a supervisor may restart it once the
/// cause is mended; nothing acknowledged is lost). `gops status --json`'s
/// `failure_detail`, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunFailure {
    /// A write to the store failed (a full disk, an I/O error): sled keeps failing
    /// after that.
    #[error("{message}")]
    StoreUnwritable { fault: StoreFault, message: String },
    /// Workers of this many parties failed on the same shard.
    #[error(
        "workers of {parties} parties failed on the shard of layer {layer}, prize ranks {shard}, the last with: {last}"
    )]
    ShardNoOneGetsPast {
        parties: usize,
        layer: u8,
        shard: String,
        last: String,
    },
}

/// What kind of write failure stopped the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreFault {
    /// The db's file system is full: free space and start again.
    DiskFull,
    /// Any other I/O error.
    Io,
}

impl RunFailure {
    /// The failure of a store that can no longer be written, its kind kept; `None` for
    /// an error that does not stop the store.
    pub fn of_store(e: &StoreError) -> Option<RunFailure> {
        let fault = match e {
            StoreError::DiskFull(_) => StoreFault::DiskFull,
            StoreError::Io(_) => StoreFault::Io,
            _ => return None,
        };
        Some(RunFailure::StoreUnwritable {
            fault,
            message: e.to_string(),
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseOutcome {
    Shard {
        lease_id: LeaseId,
        layer: u8,
        prize_ranks: Vec<u32>,
    },
    Wait(Duration),
    Finished,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmitOutcome {
    pub stored: u32,
    pub duplicates: u32,
    /// Copies kept until another party's copy confirms them (replicated verification).
    pub held: u32,
}
