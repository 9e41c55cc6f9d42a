//! A worker of the GOPS cluster: pulls shards from a coordinator, fetches the slices they
//! depend on, solves them on its own thread pool (`gops_common::shard::ShardSolver`) and
//! submits the results. It depends on the shared crates only (`common`, `proto`), never on
//! the coordinator.
//!
//! Layout, in the order a shard meets them:
//! - [`connection`]: the coordinator's URL, TLS and token turned into a gRPC client.
//! - [`link`]: the calls to the coordinator behind a trait (gRPC, or in memory in
//!   tests).
//! - [`call`]: one call retried with backoff ([`backoff`]) while the coordinator is away.
//! - [`session`]: hello, the worker's id and the game it runs.
//! - [`client`]: the main loop (lease, fetch, solve, submit) and the checked shard.
//! - [`fetch`]: dependency slices from the cache, a shared db directory
//!   ([`shared_dir`]) or the coordinator, checked.
//! - [`heartbeat`]: keeping a lease alive while solving and submitting.
//! - [`submit`]: handing a shard in, in chunks, while the next is solved.
//! - [`error`] and [`summary`]: the worker's error type and its report, leaves every
//!   module above may use.

pub mod backoff;
pub mod call;
pub mod client;
pub mod connection;
pub mod error;
pub mod fetch;
pub mod heartbeat;
pub mod link;
pub mod session;
pub mod shared_dir;
pub mod submit;
pub mod summary;

pub use client::{CacheSize, WorkerConfig, run_worker, run_worker_with};
pub use connection::{Client, connect, connect_with_ca};
pub use error::ClientError;
pub use link::Link;
pub use summary::WorkerSummary;

#[cfg(test)]
mod tests;
