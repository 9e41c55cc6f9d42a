//! Noticing a run that does not move: no live worker for a while, or workers connected
//! (they heartbeat) while nothing is stored, as when a network lets small calls through
//! but not hand-ins. Plain data and `now`: the core keeps one
//! ([`crate::cluster::Coordinator::check_stall`]), asked on its own clock
//! ([`crate::server::stall_clock`]), and a stall is said at most once per quiet period.

use std::time::{Duration, Instant};

use serde::Serialize;

/// What is wrong, and for how long (in whole seconds): `gops status --json`'s
/// `stall_detail`, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Stall {
    /// No worker has been live for this long.
    NoWorker { for_seconds: u64 },
    /// These workers are live, but nothing has been stored for this long.
    NothingStored {
        for_seconds: u64,
        workers: Vec<String>,
    },
}

impl Stall {
    /// One line for the log, with the likely causes.
    pub fn describe(&self) -> String {
        match self {
            Stall::NoWorker { for_seconds } => format!(
                "no live worker for {} s: start one with `gops worker --coordinator URL` (with the run's token), or check that the workers can reach this address",
                for_seconds
            ),
            Stall::NothingStored {
                for_seconds,
                workers,
            } => format!(
                "nothing stored for {} s while {} worker(s) are connected ({}): they may be unable to hand in (a network that drops large messages, a proxy's size limit), be stuck, or be solving very large shards",
                for_seconds,
                workers.len(),
                workers.join(", ")
            ),
        }
    }
}

/// Watches the run's progress between ticks.
#[derive(Debug)]
pub struct StallWatch {
    /// How long without progress (or without a worker) counts as a stall.
    quiet_after: Duration,
    games: u64,
    progress_at: Instant,
    workers_seen_at: Instant,
    warned_at: Option<Instant>,
    /// The stall found at the last observation, reported or not.
    current: Option<Stall>,
}

impl StallWatch {
    pub fn new(quiet_after: Duration, now: Instant) -> StallWatch {
        StallWatch {
            quiet_after,
            games: 0,
            progress_at: now,
            workers_seen_at: now,
            warned_at: None,
            current: None,
        }
    }

    /// Takes in the run's games stored so far and its live workers' names at `now`; the
    /// stall to report, if there is one and none was reported within the quiet period.
    pub fn observe(&mut self, now: Instant, games: u64, live_workers: &[String]) -> Option<Stall> {
        if games != self.games {
            self.games = games;
            self.progress_at = now;
        }
        if !live_workers.is_empty() {
            self.workers_seen_at = now;
        }
        let quiet = |since: Instant| now.saturating_duration_since(since);
        let stall = if live_workers.is_empty() {
            (quiet(self.workers_seen_at) >= self.quiet_after).then(|| Stall::NoWorker {
                for_seconds: quiet(self.workers_seen_at).as_secs(),
            })
        } else {
            (quiet(self.progress_at) >= self.quiet_after).then(|| Stall::NothingStored {
                for_seconds: quiet(self.progress_at).as_secs(),
                workers: live_workers.to_vec(),
            })
        };
        self.current = stall.clone();
        let Some(stall) = stall else {
            self.warned_at = None;
            return None;
        };
        if self
            .warned_at
            .is_some_and(|at| quiet(at) < self.quiet_after)
        {
            return None;
        }
        self.warned_at = Some(now);
        Some(stall)
    }
}

impl StallWatch {
    /// The stall found at the last observation, whether it was just reported or not:
    /// what the status shows while the run does not move.
    pub fn current(&self) -> Option<&Stall> {
        self.current.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, seconds: u64) -> Instant {
        start + Duration::from_secs(seconds)
    }

    #[test]
    fn no_worker_for_the_quiet_period_is_reported_once_per_period() {
        let start = Instant::now();
        let mut watch = StallWatch::new(Duration::from_secs(60), start);
        assert_eq!(watch.observe(at(start, 30), 0, &[]), None);
        assert_eq!(
            watch.observe(at(start, 60), 0, &[]),
            Some(Stall::NoWorker { for_seconds: 60 })
        );
        assert_eq!(
            watch.observe(at(start, 90), 0, &[]),
            None,
            "once per period"
        );
        assert!(
            matches!(watch.current(), Some(Stall::NoWorker { .. })),
            "still current"
        );
        assert!(matches!(
            watch.observe(at(start, 120), 0, &[]),
            Some(Stall::NoWorker { .. })
        ));
        // a worker joins: no stall while it stores
        let w = vec!["w1".to_string()];
        assert_eq!(watch.observe(at(start, 121), 10, &w), None);
        assert_eq!(watch.current(), None);
        assert_eq!(watch.observe(at(start, 170), 20, &w), None);
    }

    #[test]
    fn live_workers_that_store_nothing_are_named() {
        let start = Instant::now();
        let mut watch = StallWatch::new(Duration::from_secs(60), start);
        let w = vec!["a".to_string(), "b".to_string()];
        assert_eq!(watch.observe(at(start, 10), 5, &w), None);
        assert_eq!(watch.observe(at(start, 69), 5, &w), None);
        let stall = watch.observe(at(start, 70), 5, &w).expect("a stall");
        assert_eq!(
            stall,
            Stall::NothingStored {
                for_seconds: 60,
                workers: w.clone()
            }
        );
        assert!(stall.describe().contains("(a, b)"), "{}", stall.describe());
        // progress again: quiet, and a new stall is reported afresh
        assert_eq!(watch.observe(at(start, 75), 6, &w), None);
        assert!(watch.observe(at(start, 135), 6, &w).is_some());
    }
}
