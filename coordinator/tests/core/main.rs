//! The coordinator's logic driven directly, with virtual workers and a virtual clock:
//! validation, idempotence, expiry and restart, without a network.

mod checks;
mod leases;
mod replication;
mod runs;
mod sessions;
mod support;
