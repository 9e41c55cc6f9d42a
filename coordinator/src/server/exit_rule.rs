//! When a coordinator started with `--exit-when-done` stops serving: once the run is
//! complete and every live worker has heard so. A coordinator that resumed a run also
//! waits [`RESUMED_LINGER`] from the end of the run: the workers of the coordinator before
//! it are unknown to it until they greet it again, and one that was pausing between
//! retries when the rest of the run was solved must find a coordinator to tell it the run
//! is finished, not a closed port. No client holds the exit for longer than ten leases
//! (or the linger, if longer).

use std::time::{Duration, Instant};

/// How long a resumed coordinator serves after the run is complete. A worker pauses at
/// most 5 s between retries of an unreachable coordinator (`gops-worker`'s backoff): twice
/// that, so that a retry on a loaded machine still lands.
pub const RESUMED_LINGER: Duration = Duration::from_secs(10);

/// The exit decision, fed what the coordinator reports every few milliseconds.
#[derive(Debug)]
pub struct ExitRule {
    lease: Duration,
    linger: Duration,
    finished_at: Option<Instant>,
}

impl ExitRule {
    /// The rule of a coordinator with leases of `lease`; `resumed`: it went on from slices
    /// an earlier run stored, and that run was not complete.
    pub fn new(lease: Duration, resumed: bool) -> ExitRule {
        ExitRule {
            lease,
            linger: if resumed {
                RESUMED_LINGER
            } else {
                Duration::ZERO
            },
            finished_at: None,
        }
    }

    /// How long it serves after the run is complete, at least.
    pub fn linger(&self) -> Duration {
        self.linger
    }

    /// Whether the coordinator stops now: `finished`, the run is complete; `released`,
    /// every live worker has heard so. The first call with `finished` starts the clock.
    pub fn should_exit(&mut self, finished: bool, released: bool, now: Instant) -> bool {
        if !finished {
            return false;
        }
        let since = now.saturating_duration_since(*self.finished_at.get_or_insert(now));
        (released && since >= self.linger) || since > (self.lease * 10).max(self.linger)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(1);

    #[test]
    fn a_fresh_run_stops_once_its_workers_have_heard_or_after_ten_leases() {
        let t0 = Instant::now();
        let mut rule = ExitRule::new(LEASE, false);
        assert_eq!(rule.linger(), Duration::ZERO);
        assert!(!rule.should_exit(false, true, t0), "not finished");
        assert!(!rule.should_exit(true, false, t0), "a worker has not heard");
        assert!(!rule.should_exit(true, false, t0 + LEASE * 10));
        assert!(rule.should_exit(true, false, t0 + LEASE * 10 + Duration::from_millis(1)));
        let mut rule = ExitRule::new(LEASE, false);
        assert!(rule.should_exit(true, true, t0));
    }

    #[test]
    fn a_resumed_run_serves_the_linger_out_even_when_every_known_worker_has_heard() {
        let t0 = Instant::now();
        let mut rule = ExitRule::new(LEASE, true);
        assert_eq!(rule.linger(), RESUMED_LINGER);
        // the clock starts at the first finished report, not before
        assert!(!rule.should_exit(false, true, t0));
        let end = t0 + Duration::from_secs(3);
        assert!(!rule.should_exit(true, true, end));
        assert!(!rule.should_exit(true, true, end + RESUMED_LINGER - Duration::from_millis(1)));
        assert!(rule.should_exit(true, true, end + RESUMED_LINGER));
        // a worker that came back and has not heard yet holds it, for ten leases at most
        let mut rule = ExitRule::new(LEASE, true);
        assert!(!rule.should_exit(true, false, end));
        assert!(!rule.should_exit(true, false, end + RESUMED_LINGER));
        assert!(rule.should_exit(true, false, end + LEASE * 10 + Duration::from_millis(1)));
        // leases so short that ten of them end before the linger: the linger still holds
        let short = Duration::from_millis(100);
        let mut rule = ExitRule::new(short, true);
        assert!(!rule.should_exit(true, false, end));
        assert!(!rule.should_exit(true, false, end + short * 20));
        assert!(rule.should_exit(true, false, end + RESUMED_LINGER + Duration::from_millis(1)));
    }
}
