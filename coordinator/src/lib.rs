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

pub mod cluster;
pub mod ledger;
pub mod local;
pub mod metrics;
pub mod plan;
pub mod query;
pub mod service;
pub mod solve;
pub mod store;
