//! The run's recent speed: matrix games stored over the last minute. The time left is
//! estimated from it, not from the average since the start, which the small early layers
//! (few games per shard, so slow per game) pull down for a long while.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The span the recent speed is measured over.
pub const RATE_WINDOW: Duration = Duration::from_secs(60);

/// Samples are kept at most this often (the window then holds about 60).
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Totals of games stored, sampled over the last [`RATE_WINDOW`] and a little before.
#[derive(Clone, Debug)]
pub struct RecentRate {
    /// (when, games stored by then), oldest first, at least [`SAMPLE_EVERY`] apart.
    samples: VecDeque<(Instant, u64)>,
}

impl RecentRate {
    /// A run that starts at `start` with nothing stored.
    pub fn new(start: Instant) -> RecentRate {
        RecentRate {
            samples: VecDeque::from([(start, 0)]),
        }
    }

    /// Notes that `total` games have been stored this run by `now`.
    pub fn record(&mut self, now: Instant, total: u64) {
        let due = self
            .samples
            .back()
            .is_none_or(|&(last, _)| now.saturating_duration_since(last) >= SAMPLE_EVERY);
        if due {
            self.samples.push_back((now, total));
        }
        // keep one sample at or before the window's start, to measure from
        while self.samples.len() > 1 && self.samples[1].0 + RATE_WINDOW <= now {
            self.samples.pop_front();
        }
    }

    /// Games per second over the last [`RATE_WINDOW`] (over the whole run while it is
    /// shorter), given `total` stored by `now`; `None` until a second has passed.
    pub fn per_second(&self, now: Instant, total: u64) -> Option<f64> {
        // the latest sample at or before the window's start, else the oldest
        let start = self
            .samples
            .iter()
            .rev()
            .find(|&&(at, _)| at + RATE_WINDOW <= now)
            .or(self.samples.front())?;
        let seconds = now.saturating_duration_since(start.0).as_secs_f64();
        (seconds >= 1.0).then(|| total.saturating_sub(start.1) as f64 / seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, seconds: u64) -> Instant {
        start + Duration::from_secs(seconds)
    }

    #[test]
    fn the_first_minute_is_the_average_since_the_start() {
        let start = Instant::now();
        let mut rate = RecentRate::new(start);
        assert_eq!(rate.per_second(start, 0), None);
        rate.record(at(start, 10), 1_000);
        assert_eq!(rate.per_second(at(start, 20), 4_000), Some(200.0));
    }

    #[test]
    fn after_a_minute_only_the_last_minute_counts() {
        let start = Instant::now();
        let mut rate = RecentRate::new(start);
        // slow for five minutes (10 games/s), then fast (1000 games/s) for two
        let mut total = 0;
        for s in 1..=300 {
            total += 10;
            rate.record(at(start, s), total);
        }
        for s in 301..=420 {
            total += 1_000;
            rate.record(at(start, s), total);
        }
        let recent = rate.per_second(at(start, 420), total).unwrap();
        assert!((recent - 1_000.0).abs() < 1e-9, "{recent}");
        // the average since the start says 293 games/s
        assert_eq!(total, 123_000);
        assert!((total as f64 / 420.0 - 292.857).abs() < 1e-3);
        assert!(rate.samples.len() <= 62, "{}", rate.samples.len());
    }

    #[test]
    fn a_stalled_run_has_no_speed_after_a_minute() {
        let start = Instant::now();
        let mut rate = RecentRate::new(start);
        rate.record(at(start, 5), 500);
        assert_eq!(rate.per_second(at(start, 30), 500), Some(500.0 / 30.0));
        assert_eq!(rate.per_second(at(start, 200), 500), Some(0.0));
    }

    #[test]
    fn samples_closer_than_a_second_are_folded() {
        let start = Instant::now();
        let mut rate = RecentRate::new(start);
        for ms in (100..1_000).step_by(100) {
            rate.record(start + Duration::from_millis(ms), ms);
        }
        assert_eq!(rate.samples.len(), 1);
        rate.record(at(start, 1), 1_000);
        assert_eq!(rate.samples.len(), 2);
    }
}
