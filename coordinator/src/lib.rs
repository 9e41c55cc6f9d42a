//! The run coordinator: it owns the store of a run and decides what is solved when.
//!
//! Layout:
//! - [`store`]: the sled store behind one typed handle (manifest, slices, layers).
//! - [`ledger`]: the lease ledger of the open layer (pure, takes `now`).
//! - [`plan`]: layer sizes and the split of a layer into shards (pure functions).
//! - [`solve`]: the layer-by-layer driver with resume, used by `gops solve`.
//! - [`query`]: values, strategies and status read from a store.

pub mod ledger;
pub mod plan;
pub mod query;
pub mod solve;
pub mod store;
