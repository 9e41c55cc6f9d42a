//! The run coordinator: it owns the store of a run and decides what is solved when.
//!
//! Layout:
//! - [`store`]: the sled store behind one typed handle (manifest, slices, layers).
//! - [`cluster`]: the coordinator's logic: leases, submissions, layer completion.
//! - [`ledger`]: the lease ledger of the open layer (pure, takes `now`).
//! - [`local`]: `gops solve`: coordinator and worker in one process over loopback.
//! - [`metrics`]: Prometheus metrics rendered from the status.
//! - [`service`]: the gRPC handlers (glue), token check, progress log, metrics server.
//! - [`plan`]: layer sizes and the split of a layer into shards (pure functions).
//! - [`solve`]: the layer-by-layer driver with resume, used by `gops solve`.
//! - [`query`]: values, strategies and status read from a store.
//! - [`oracle`]: a solved game answering for concrete states, cached (play, simulate).
//! - [`export`]: the strategy database as rows for `gops export`.
//! - [`policy`]: bidding policies, simulated play and exact exploitability.

pub mod cluster;
pub mod export;
pub mod ledger;
pub mod local;
pub mod metrics;
pub mod oracle;
pub mod plan;
pub mod policy;
pub mod query;
pub mod service;
pub mod solve;
pub mod store;
