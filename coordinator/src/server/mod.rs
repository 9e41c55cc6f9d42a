//! The coordinator on the network: the gRPC service and everything between a connection
//! and the core ([`crate::cluster`]).
//!
//! - [`service`]: the gRPC handlers (glue), the token check, TLS, the progress log;
//!   `core_call`: a core call off the runtime, its error as the protocol's status.
//! - [`tokens`]: the tokens a coordinator accepts and the check of every call.
//! - [`submit_gate`]: a `Submit` call's sender checked from its metadata, before its
//!   message is read.
//! - [`admission`]: which connections are kept: caps in all and per address, a deadline
//!   to authenticate, an accept loop that pauses when out of file descriptors.
//! - [`fetch_slots`]: the bound on slice streams served at once, and the queue before it.
//! - [`process`]: a coordinator process from its first call to its exit; [`exit_rule`]:
//!   when one started with `--exit-when-done` stops serving; [`stall_clock`]: the core
//!   asked on its own clock whether the run stalls, and the answer logged.

pub mod admission;
mod core_call;
pub mod exit_rule;
pub mod fetch_slots;
pub mod process;
pub mod service;
pub mod stall_clock;
pub mod submit_gate;
pub mod tokens;
