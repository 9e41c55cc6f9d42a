//! The run coordinator: it decides what is solved when, checks what workers return, and
//! writes it to the run's store (the `gops-db` crate).
//!
//! Layout:
//! - [`cluster`]: the [`cluster::Coordinator`], free of gRPC: hello, lease, fetch,
//!   heartbeat, submit, status, in that order; one file per step around one struct and
//!   one lock, with the leaves it stands on (the lease ledger, the open layer, what a
//!   submission must pass, the workers known).
//! - [`server`]: the coordinator on the network: the gRPC service, tokens, admission of
//!   connections, the bound on slice streams, and a coordinator process from start to
//!   exit.
//! - [`report`]: what it tells people: the status, events, metrics, the dashboard, the
//!   speed and stalls.
//! - [`config`]: the coordinator's settings and their bounds.
//! - [`error`]: what its calls answer: errors and outcomes.
//!
//! A solve on one machine (the coordinator and a worker in one process) is the
//! `gops-local` crate's.

pub mod cluster;
pub mod config;
pub mod error;
pub mod report;
pub mod server;
