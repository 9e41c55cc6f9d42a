//! The coordinator's capacity benchmark and its models, apart from the coordinator so
//! that nothing of them is compiled into it:
//! - [`scale`]: one coordinator process on a real store, fed by simulated workers at the
//!   slice sizes of the 15- and 16-card games (`cargo bench -p gops-bench --bench scale`).
//! - [`fetch_model`]: the dependency slices a layer's workers fetch through their caches,
//!   and those the coordinator's checks load, by the real lease order.
//! - [`args`]: the command-line helper of the benches that read a solved db.

pub mod args;
pub mod fetch_model;
pub mod scale;
