//! The run coordinator: it decides what is solved when, checks what workers return, and
//! writes it to the run's store (the `gops-db` crate).
//!
//! The way a shard travels, module by module:
//! - [`cluster`]: the [`cluster::Coordinator`]: hello, lease, fetch, heartbeat, submit,
//!   status, in that order, free of gRPC; one file per step (`sessions`, `leases`,
//!   `slices`, `submit`, `checking`, `disputes`, `storing`, `replication`, `rejections`,
//!   `layers`, `status`) around one struct and one lock whose guarded state is in named
//!   parts (`state`), with its settings and its answers in the leaves below.
//! - [`config`]: the coordinator's settings and their bounds.
//! - [`error`]: what its calls answer: errors and outcomes.
//! - [`open_layer`]: the layer being solved: its progress record, engine, ledger and the
//!   cache of slices below that checks read.
//! - [`ledger`]: the lease ledger of the open layer (pure, takes `now`).
//! - [`checks`]: what a submission must pass, with typed reasons for a rejection.
//! - [`registry`]: the workers known to the coordinator.
//! - [`status`]: the run's status, typed end to end (and its protocol message);
//!   [`trouble_wire`]: its failure and stall as fields on the wire.
//! - [`observer`]: what the coordinator reports as it goes (a progress bar, a probe).
//! - [`service`]: the gRPC handlers (glue), token check, TLS, the progress log;
//!   `core_call`: a core call off the runtime, its error as the protocol's status.
//! - [`tokens`]: the tokens a coordinator accepts and the check of every call.
//! - [`submit_gate`]: a `Submit` call's sender checked from its metadata, before its
//!   message is read.
//! - [`admission`]: which connections are kept: caps in all and per address, a deadline
//!   to authenticate, an accept loop that pauses when out of file descriptors.
//! - [`fetch_slots`]: the bound on slice streams served at once, and the queue before it.
//! - [`in_process`]: a solve without the network: the coordinator leasing its shards to
//!   a solver loop in the same process (`gops solve --no-grpc`, Python's `gops.solve`).
//! - [`rate`]: the run's speed over the last minute, for the time left.
//! - [`exit_rule`]: when a coordinator started with `--exit-when-done` stops serving;
//!   [`process`]: a coordinator process from its first call to its exit.
//! - [`stall`]: a run that does not move (no live worker, or nothing stored), noticed;
//!   [`stall_clock`] asks the core on its own clock and logs it.
//! - [`events`]: the bounded log of recent events (layers complete, workers joined, ...).
//! - `happening`: what happened that an operator should hear of, as one value from which
//!   both its log line and its event are made.
//! - [`metrics`]: Prometheus metrics rendered from the status, and the HTTP server that
//!   serves them and the dashboard.
//! - [`dashboard`]: the live dashboard page, `GET /api/status`, and who may read them.

pub mod admission;
pub mod checks;
pub mod cluster;
pub mod config;
mod core_call;
pub mod dashboard;
pub mod error;
pub mod events;
pub mod exit_rule;
pub mod fetch_slots;
mod happening;
pub mod in_process;
pub mod ledger;
pub mod metrics;
pub mod observer;
pub mod open_layer;
pub mod process;
pub mod rate;
pub mod registry;
pub mod service;
pub mod stall;
pub mod stall_clock;
pub mod status;
pub mod submit_gate;
pub mod tokens;
pub mod trouble_wire;
