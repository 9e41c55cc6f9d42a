//! The worker's behaviour against a coordinator in memory ([`fake`]), on tokio's paused
//! clock: seconds of the worker's waiting (backoff, heartbeats, giving up) pass in
//! milliseconds of real time, and every test says how much virtual time passed.

mod calls;
mod fake;
mod run;
mod shared;

use std::time::Duration;

use crate::backoff::Backoff;
use crate::client::{CacheSize, WorkerConfig};

/// A one-thread worker with a small cache, giving up after 60 s without the
/// coordinator (30 s when it was never reached), retrying from 100 ms up to 5 s.
fn config() -> WorkerConfig {
    WorkerConfig {
        coordinator: "memory://fake".into(),
        tls_ca: None,
        threads: 1,
        token: None,
        cache: CacheSize::Bytes(16 << 20),
        name: "test".into(),
        backoff: backoff(),
        slices_dir: None,
    }
}

fn backoff() -> Backoff {
    Backoff {
        base: Duration::from_millis(100),
        max: Duration::from_secs(5),
        give_up_after: Duration::from_secs(60),
        first_contact: Duration::from_secs(30),
    }
}

/// A lease of 30 s: heartbeats every 10 s.
const LEASE_MS: u64 = 30_000;
