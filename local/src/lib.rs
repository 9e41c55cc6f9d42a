//! A solve on one machine (`gops solve`'s default path, and Python's `gops.solve`): a
//! coordinator and one worker in one process talking gRPC over loopback, so the path a
//! user runs on one machine is the path the cluster runs. ([`solve_direct`] leases the
//! shards to an in-process loop instead, to measure what the protocol costs: `gops solve
//! --no-grpc`.) Either way the coordinator keeps the one record of the run's progress,
//! and a raised stop signal (Ctrl-C, or a slice budget in tests) lets the shard in hand
//! finish and be stored, then stops; the next run resumes from the store. This path can
//! also serve the coordinator's dashboard, behind the run's fresh token
//! ([`DashboardSite`]).
//!
//! The one crate that depends on both the coordinator and the worker.
//!
//! - `run`: what a run is given ([`LocalRun`]), the stop signal, and how it ends;
//! - `loopback`: [`solve_local`], over loopback gRPC;
//! - `direct`: [`solve_direct`], without the network;
//! - `text`: a solve's summary as people read it.

mod direct;
mod loopback;
mod run;
mod text;

pub use direct::solve_direct;
pub use loopback::{DashboardSite, dashboard_url, fresh_token, solve_local};
pub use run::{LocalError, LocalRun, SolveOutcome, SolveSummary, StopSignal, WorkerSettings};
pub use text::SolveText;
