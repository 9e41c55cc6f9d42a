//! The run's status: the store's, the workers, the rates and the time left.

use super::*;

impl Coordinator {
    /// Why the coordinator must stop, if the run cannot go on.
    pub fn failure(&self) -> Option<RunFailure> {
        self.lock().failure.clone()
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
            games_this_run: inner.games_this_run,
            games_left: left,
            recent_games_per_second: recent,
            uptime_seconds: now.saturating_duration_since(inner.started).as_secs_f64(),
            now_unix_ms: unix_ms(SystemTime::now()),
            events: inner.events.recent(),
            cluster,
        })
    }

    /// The games left and the last minute's speed (a finished run's speed stops with it,
    /// as the averages do).
    pub(super) fn left_and_speed(
        &self,
        inner: &Inner,
        layers: &[gops_db::status::LayerStatus],
        now: Instant,
    ) -> (u64, Option<f64>) {
        let left = games_left(layers, &self.layer_games);
        let until = inner.finished_at.unwrap_or(now);
        (left, inner.recent.per_second(until, inner.games_this_run))
    }

    pub(super) fn status_of(
        &self,
        inner: &Inner,
        run: gops_db::status::RunStatus,
        now: Instant,
    ) -> ClusterStatus {
        let (left, recent) = self.left_and_speed(inner, &run.layers, now);
        // a finished run's rates stay what they were at the end
        let end = inner.finished_at.unwrap_or(now);
        let elapsed = end
            .saturating_duration_since(inner.started)
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
            workers: match inner.finished_at {
                Some(end) => inner.workers.contributors(end, MAX_LISTED_WORKERS),
                None => inner
                    .workers
                    .live(now, self.config.lease * 2, MAX_LISTED_WORKERS),
            },
            slices_per_second: inner.slices_this_run as f64 / elapsed,
            games_per_second: inner.games_this_run as f64 / elapsed,
            rejected_submissions: inner.rejected,
            refused_calls: inner.refused_calls,
            disagreements: inner.disagreements,
            workers_registered: inner.workers.len() as u64,
            failure: inner.failure.as_ref().map(RunFailure::to_string),
            repaired_slices: inner.repaired,
            eta_seconds: eta_seconds(left, recent.unwrap_or(0.0)),
            stall: inner.stall.as_ref().map(Stall::describe),
        }
    }

    /// Looks at the run's progress at `now` ([`StallWatch`]): the stall to report now, if
    /// there is one and none was reported within the quiet period. The status shows the
    /// current one meanwhile. The same for a cluster and the in-process solve
    /// ([`crate::stall_clock`] asks on its own clock).
    pub fn check_stall(&self, now: Instant) -> Option<Stall> {
        let mut inner = self.lock();
        if inner.open.is_none() {
            inner.stall = None;
            return None;
        }
        let names: Vec<String> = inner
            .workers
            .live(now, self.config.lease * 2, MAX_LISTED_WORKERS)
            .into_iter()
            .map(|w| w.name)
            .collect();
        let games = inner.games_this_run;
        let report = inner.stalls.observe(now, games, &names);
        inner.stall = inner.stalls.current().cloned();
        report
    }
}
