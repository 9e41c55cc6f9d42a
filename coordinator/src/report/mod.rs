//! What the coordinator tells people: the run's status, its events, its metrics and the
//! live dashboard.
//!
//! - [`status`]: the run's status, typed end to end (and its protocol message);
//!   [`trouble_wire`]: its failure and stall as fields on the wire.
//! - [`observer`]: what the coordinator reports as it goes (a progress bar, a probe).
//! - [`rate`]: the run's speed over the last minute, for the time left.
//! - [`stall`]: a run that does not move (no live worker, or nothing stored), noticed.
//! - [`events`]: the bounded log of recent events (layers complete, workers joined, ...);
//!   `happening`: what happened that an operator should hear of, as one value from which
//!   both its log line and its event are made.
//! - [`metrics`]: Prometheus metrics rendered from the status, and the HTTP server that
//!   serves them and the dashboard.
//! - [`dashboard`]: the live dashboard page, `GET /api/status`, and who may read them.

pub mod dashboard;
pub mod events;
pub(crate) mod happening;
pub mod metrics;
pub mod observer;
pub mod rate;
pub mod stall;
pub mod status;
pub mod trouble_wire;
