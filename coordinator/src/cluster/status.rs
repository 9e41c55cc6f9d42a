//! The run's status: the store's, the workers, the rates and the time left.

use std::time::{Instant, SystemTime};

use gops_db::status::{LayerStatus, RunStatus, run_status};

use super::Coordinator;
use super::state::Inner;
use crate::config::MAX_LISTED_WORKERS;
use crate::error::{CoreError, RunFailure};
use crate::report::events::unix_ms;
use crate::report::stall::Stall;
use crate::report::status::{ClusterStatus, LiveStatus, ShardCounts, eta_seconds, games_left};

impl Coordinator {
    /// Why the coordinator must stop, if the run cannot go on.
    pub fn failure(&self) -> Option<RunFailure> {
        self.lock().health.failure().cloned()
    }

    /// The status of the run: the store's, plus workers, rate and the open layer.
    pub fn status(&self, now: Instant) -> Result<ClusterStatus, CoreError> {
        let run = run_status(&self.store)?;
        let inner = self.lock();
        Ok(self.status_of(&inner, run, now))
    }

    /// [`Coordinator::status`] with what the dashboard adds: the estimate of what is
    /// left, the uptime and the recent events, all read under one lock.
    pub fn live_status(&self, now: Instant) -> Result<LiveStatus, CoreError> {
        let run = run_status(&self.store)?;
        let inner = self.lock();
        let cluster = self.status_of(&inner, run, now);
        let (left, recent) = self.left_and_speed(&inner, &cluster.run.layers, now);
        Ok(LiveStatus {
            layer_games: self.layer_games.clone(),
            games_this_run: inner.tally.games,
            games_left: left,
            recent_games_per_second: recent,
            uptime_seconds: now
                .saturating_duration_since(inner.tally.started)
                .as_secs_f64(),
            now_unix_ms: unix_ms(SystemTime::now()),
            events: inner.notices.events().recent(),
            cluster,
        })
    }

    /// The games left and the last minute's speed (a finished run's speed stops with it,
    /// as the averages do).
    pub(super) fn left_and_speed(
        &self,
        inner: &Inner,
        layers: &[LayerStatus],
        now: Instant,
    ) -> (u64, Option<f64>) {
        let left = games_left(layers, &self.layer_games);
        let until = inner.tally.until(now);
        (
            left,
            inner.tally.recent.per_second(until, inner.tally.games),
        )
    }

    pub(super) fn status_of(&self, inner: &Inner, run: RunStatus, now: Instant) -> ClusterStatus {
        let (left, recent) = self.left_and_speed(inner, &run.layers, now);
        // a finished run's rates stay what they were at the end
        let end = inner.tally.until(now);
        let elapsed = end
            .saturating_duration_since(inner.tally.started)
            .as_secs_f64()
            .max(1e-9);
        let (open_layer, shards) = match &inner.open {
            Some(open) => {
                let c = open.ledger().counts();
                (
                    Some(open.k()),
                    Some(ShardCounts {
                        pending: c.pending,
                        leased: c.leased,
                        done: c.done,
                    }),
                )
            }
            None => (None, None),
        };
        ClusterStatus {
            run,
            open_layer,
            shards,
            // a finished run keeps its final table: everyone who stored slices
            workers: match inner.tally.finished_at {
                Some(end) => inner.workers.contributors(end, MAX_LISTED_WORKERS),
                None => inner
                    .workers
                    .live(now, self.config.lease * 2, MAX_LISTED_WORKERS),
            },
            slices_per_second: inner.tally.slices as f64 / elapsed,
            games_per_second: inner.tally.games as f64 / elapsed,
            rejected_submissions: inner.trouble.rejected,
            refused_calls: inner.trouble.refused_calls,
            disagreements: inner.trouble.disagreements,
            workers_registered: inner.workers.len() as u64,
            failure: inner.health.failure().map(RunFailure::to_string),
            failure_detail: inner.health.failure().cloned(),
            repaired_slices: inner.trouble.repaired,
            eta_seconds: eta_seconds(left, recent.unwrap_or(0.0)),
            stall: inner.health.stall.as_ref().map(Stall::describe),
            stall_detail: inner.health.stall.clone(),
        }
    }

    /// Looks at the run's progress at `now` ([`StallWatch`]): the stall to report now, if
    /// there is one and none was reported within the quiet period. The status shows the
    /// current one meanwhile. The same for a cluster and the in-process solve
    /// ([`crate::server::stall_clock`] asks on its own clock).
    pub fn check_stall(&self, now: Instant) -> Option<Stall> {
        let mut inner = self.lock();
        if inner.open.is_none() {
            inner.health.stall = None;
            return None;
        }
        let names: Vec<String> = inner
            .workers
            .live(now, self.config.lease * 2, MAX_LISTED_WORKERS)
            .into_iter()
            .map(|w| w.name)
            .collect();
        let games = inner.tally.games;
        let report = inner.health.stalls.observe(now, games, &names);
        inner.health.stall = inner.health.stalls.current().cloned();
        report
    }
}
