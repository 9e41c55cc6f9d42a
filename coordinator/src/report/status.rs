//! The status of a coordinator's run: the store's [`RunStatus`] plus the open layer's
//! shards, the live workers and the rates, as one typed value from the coordinator to
//! `gops status --coordinator`, converted to and from its protocol message here; and
//! [`LiveStatus`], that status with what only the coordinator's own process shows (each
//! worker's activity, an estimate of the time left, the recent events), which the
//! dashboard's `GET /api/status` serves. The status as people read it: [`table`].

mod table;

use gops_db::status::{LayerStatus, RunStatus};
use gops_proto::v1;
use serde::Serialize;

use crate::error::RunFailure;
use crate::report::events::Event;
use crate::report::stall::Stall;
use crate::report::trouble_wire::{
    failure_from_proto, failure_to_proto, stall_from_proto, stall_to_proto,
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ShardCounts {
    pub pending: usize,
    pub leased: usize,
    pub done: usize,
}

/// A live worker as `status` shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkerStatus {
    pub id: u64,
    pub name: String,
    pub threads: u32,
    pub slices: u64,
    pub rejected: u64,
    /// Known in the coordinator's process only: not on the wire (so not in `gops status
    /// --coordinator`), and its fields are left out of the JSON when absent.
    #[serde(flatten)]
    pub activity: Option<WorkerActivity>,
}

/// What a worker did and when it was last heard from, as the dashboard shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkerActivity {
    /// Submissions that brought new slices.
    pub shards: u64,
    /// Matrix games of the slices it stored.
    pub games: u64,
    /// `games` over the time since it joined.
    pub games_per_second: f64,
    pub seconds_since_heard: f64,
}

/// `status --coordinator --json`: DESIGN §6's fields, then the cluster's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterStatus {
    #[serde(flatten)]
    pub run: RunStatus,
    pub open_layer: Option<u8>,
    pub shards: Option<ShardCounts>,
    pub workers: Vec<WorkerStatus>,
    pub slices_per_second: f64,
    pub games_per_second: f64,
    pub rejected_submissions: u64,
    /// Calls refused for a wrong session key (a client acting for another).
    pub refused_calls: u64,
    /// Copies of a slice that differed from the stored copy (each re-checked in full).
    pub disagreements: u64,
    /// Sessions the coordinator holds, live or silent (`workers` lists at most 1000).
    pub workers_registered: u64,
    /// Why the coordinator is stopping (its store cannot be written, or a shard no
    /// worker gets past), in words; `failure_detail` has it as fields.
    pub failure: Option<String>,
    pub failure_detail: Option<RunFailure>,
    /// Damaged slices found and solved again this run.
    pub repaired_slices: u64,
    /// Seconds to solve the games left ([`games_left`]) at the last minute's speed
    /// ([`eta_seconds`]): the one estimate of the time left that the progress log, `gops
    /// status --coordinator` and the dashboard show. `null` while there is no speed to
    /// tell, 0 once the run is complete.
    pub eta_seconds: Option<f64>,
    /// Why the run does not move, with the likely causes, while it does not
    /// ([`crate::report::stall`]); `None` while it moves. `stall_detail` has it as fields.
    pub stall: Option<String>,
    pub stall_detail: Option<Stall>,
}

impl ClusterStatus {
    pub fn to_proto(&self) -> v1::StatusReply {
        let run = &self.run;
        v1::StatusReply {
            run: Some(v1::RunStatus {
                n: u32::from(run.n),
                objective: run.objective.clone(),
                complete: run.complete,
                layers: run
                    .layers
                    .iter()
                    .map(|l| v1::LayerStatus {
                        k: u32::from(l.k),
                        slices: l.slices as u64,
                        done: l.done as u64,
                        states: l.states,
                        checksum: l.checksum.clone(),
                        max_gap: l.max_gap,
                        complete: l.complete,
                        stored_values: l.stored_values,
                        dense_values: l.dense_values,
                        matrix_games: l.matrix_games,
                    })
                    .collect(),
                db: run.db.clone(),
                format_version: run.format_version,
                db_bytes: run.db_bytes,
                estimated_db_bytes: run.estimated_db_bytes,
            }),
            open_layer: self.open_layer.map(u32::from),
            shards: self.shards.map(|s| v1::ShardCounts {
                pending: s.pending as u64,
                leased: s.leased as u64,
                done: s.done as u64,
            }),
            workers: self
                .workers
                .iter()
                .map(|w| v1::WorkerStatus {
                    id: w.id,
                    name: w.name.clone(),
                    threads: w.threads,
                    slices: w.slices,
                    rejected: w.rejected,
                })
                .collect(),
            slices_per_second: self.slices_per_second,
            games_per_second: self.games_per_second,
            rejected_submissions: self.rejected_submissions,
            refused_calls: self.refused_calls,
            disagreements: self.disagreements,
            workers_registered: self.workers_registered,
            failure: self.failure.clone(),
            repaired_slices: self.repaired_slices,
            eta_seconds: self.eta_seconds,
            stall: self.stall.clone(),
            failure_detail: self.failure_detail.as_ref().map(failure_to_proto),
            stall_detail: self.stall_detail.as_ref().map(stall_to_proto),
        }
    }

    /// The status a coordinator sent; an error names what does not fit.
    pub fn from_proto(reply: v1::StatusReply) -> Result<ClusterStatus, String> {
        let small =
            |what: &str, v: u32| u8::try_from(v).map_err(|_| format!("{what} {v} is out of range"));
        let size = |what: &str, v: u64| {
            usize::try_from(v).map_err(|_| format!("{what} {v} is out of range"))
        };
        let run = reply.run.ok_or("the status has no run")?;
        let layers = run
            .layers
            .into_iter()
            .map(|l| {
                Ok(LayerStatus {
                    k: small("layer", l.k)?,
                    slices: size("slice count", l.slices)?,
                    done: size("slices done", l.done)?,
                    states: l.states,
                    checksum: l.checksum,
                    max_gap: l.max_gap,
                    complete: l.complete,
                    stored_values: l.stored_values,
                    dense_values: l.dense_values,
                    matrix_games: l.matrix_games,
                    on_demand: false,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(ClusterStatus {
            run: RunStatus {
                n: small("n", run.n)?,
                objective: run.objective,
                complete: run.complete,
                layers,
                db: run.db,
                format_version: run.format_version,
                db_bytes: run.db_bytes,
                estimated_db_bytes: run.estimated_db_bytes,
                book_from_layer: None,
            },
            open_layer: reply
                .open_layer
                .map(|k| small("open layer", k))
                .transpose()?,
            shards: reply
                .shards
                .map(|s| -> Result<ShardCounts, String> {
                    Ok(ShardCounts {
                        pending: size("pending shards", s.pending)?,
                        leased: size("leased shards", s.leased)?,
                        done: size("shards done", s.done)?,
                    })
                })
                .transpose()?,
            workers: reply
                .workers
                .into_iter()
                .map(|w| WorkerStatus {
                    id: w.id,
                    name: w.name,
                    threads: w.threads,
                    slices: w.slices,
                    rejected: w.rejected,
                    activity: None,
                })
                .collect(),
            slices_per_second: reply.slices_per_second,
            games_per_second: reply.games_per_second,
            rejected_submissions: reply.rejected_submissions,
            refused_calls: reply.refused_calls,
            disagreements: reply.disagreements,
            workers_registered: reply.workers_registered,
            failure: reply.failure,
            repaired_slices: reply.repaired_slices,
            eta_seconds: reply.eta_seconds,
            stall: reply.stall,
            failure_detail: reply.failure_detail.map(failure_from_proto).transpose()?,
            stall_detail: reply.stall_detail.map(stall_from_proto).transpose()?,
        })
    }
}

/// `GET /api/status`: the [`ClusterStatus`] (its fields first, the workers with their
/// activity) and what the dashboard adds to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LiveStatus {
    #[serde(flatten)]
    pub cluster: ClusterStatus,
    /// Matrix games of each layer, lowest first (what the progress estimate weighs by).
    pub layer_games: Vec<u64>,
    /// Matrix games stored this run.
    pub games_this_run: u64,
    /// Matrix games still to solve, estimated from the slices done of each layer.
    pub games_left: u64,
    /// Matrix games stored per second over the last minute (over the run while it is
    /// shorter); `null` in the first second.
    pub recent_games_per_second: Option<f64>,
    /// Seconds since the coordinator started.
    pub uptime_seconds: f64,
    /// The coordinator's clock, in milliseconds since the Unix epoch (events are dated by
    /// it: a page shows their age against this, not against its own clock).
    pub now_unix_ms: u64,
    /// The last events, oldest first.
    pub events: Vec<Event>,
}

/// The matrix games still to solve: for each incomplete layer, its games in proportion
/// to its slices not yet done (slices differ in size, so this is an estimate).
pub fn games_left(layers: &[LayerStatus], layer_games: &[u64]) -> u64 {
    layers
        .iter()
        .zip(layer_games)
        .filter(|(l, _)| !l.complete && l.slices > 0)
        .map(|(l, &games)| {
            let left = l.slices.saturating_sub(l.done) as u128;
            (u128::from(games) * left / l.slices as u128) as u64
        })
        .fold(0u64, u64::saturating_add)
}

/// Seconds to solve `games_left` at `games_per_second`; `None` when nothing has been
/// solved yet to tell a rate from, 0 when nothing is left.
pub fn eta_seconds(games_left: u64, games_per_second: f64) -> Option<f64> {
    if games_left == 0 {
        Some(0.0)
    } else if games_per_second.is_finite() && games_per_second > 0.0 {
        Some(games_left as f64 / games_per_second)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ClusterStatus {
        ClusterStatus {
            run: RunStatus {
                n: 3,
                objective: "win".into(),
                complete: false,
                layers: vec![
                    LayerStatus {
                        k: 1,
                        slices: 3,
                        done: 3,
                        states: 12,
                        checksum: Some("ab".into()),
                        max_gap: Some(1e-12),
                        complete: true,
                        stored_values: Some(9),
                        dense_values: 20,
                        matrix_games: Some(27),
                        on_demand: false,
                    },
                    LayerStatus {
                        k: 2,
                        slices: 3,
                        done: 1,
                        states: 30,
                        checksum: None,
                        max_gap: None,
                        complete: false,
                        stored_values: None,
                        dense_values: 40,
                        matrix_games: None,
                        on_demand: false,
                    },
                ],
                db: "/tmp/db".into(),
                format_version: 3,
                db_bytes: 12_345,
                estimated_db_bytes: 99_999,
                book_from_layer: None,
            },
            open_layer: Some(2),
            shards: Some(ShardCounts {
                pending: 1,
                leased: 2,
                done: 3,
            }),
            workers: vec![WorkerStatus {
                id: 4_294_967_297,
                name: "w".into(),
                threads: 2,
                slices: 5,
                rejected: 1,
                activity: None,
            }],
            slices_per_second: 0.5,
            games_per_second: 1234.5,
            rejected_submissions: 1,
            refused_calls: 2,
            disagreements: 3,
            workers_registered: 4,
            failure: Some("the db's file system is full".into()),
            failure_detail: Some(RunFailure::StoreUnwritable {
                fault: crate::error::StoreFault::DiskFull,
                message: "the db's file system is full".into(),
            }),
            repaired_slices: 5,
            eta_seconds: Some(2.0),
            stall: Some("no live worker for 60 s".into()),
            stall_detail: Some(Stall::NoWorker { for_seconds: 60 }),
        }
    }

    #[test]
    fn the_status_survives_the_wire_unchanged() {
        let status = sample();
        assert_eq!(ClusterStatus::from_proto(status.to_proto()), Ok(status));
        let finished = ClusterStatus {
            open_layer: None,
            shards: None,
            ..sample()
        };
        assert_eq!(ClusterStatus::from_proto(finished.to_proto()), Ok(finished));
    }

    #[test]
    fn a_status_out_of_range_is_refused() {
        let mut reply = sample().to_proto();
        reply.open_layer = Some(300);
        assert!(
            ClusterStatus::from_proto(reply)
                .unwrap_err()
                .contains("300")
        );
        let mut reply = sample().to_proto();
        reply.run = None;
        assert!(ClusterStatus::from_proto(reply).is_err());
    }

    #[test]
    fn the_json_keeps_the_documented_fields_in_order() {
        let json = serde_json::to_string(&sample()).unwrap();
        let keys = [
            "\"n\"",
            "\"objective\"",
            "\"complete\"",
            "\"layers\"",
            "\"db\"",
            "\"format_version\"",
            "\"db_bytes\"",
            "\"estimated_db_bytes\"",
            "\"open_layer\"",
            "\"shards\"",
            "\"workers\"",
            "\"slices_per_second\"",
            "\"games_per_second\"",
            "\"rejected_submissions\"",
            "\"refused_calls\"",
            "\"disagreements\"",
            "\"workers_registered\"",
            "\"failure\"",
            "\"repaired_slices\"",
        ];
        let positions: Vec<usize> = keys.iter().map(|k| json.find(k).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{json}");
    }

    fn active(status: ClusterStatus) -> ClusterStatus {
        let mut status = status;
        status.workers[0].activity = Some(WorkerActivity {
            shards: 3,
            games: 9_000,
            games_per_second: 450.5,
            seconds_since_heard: 1.25,
        });
        status
    }

    #[test]
    fn worker_activity_stays_off_the_wire_and_out_of_the_remote_json() {
        let status = active(sample());
        let back = ClusterStatus::from_proto(status.to_proto()).unwrap();
        assert_eq!(back.workers[0].activity, None);
        assert_eq!(back, sample());
        // `gops status --coordinator --json` prints what came over the wire: no new keys
        let text = serde_json::to_string(&back.workers[0]).unwrap();
        assert_eq!(
            text,
            r#"{"id":4294967297,"name":"w","threads":2,"slices":5,"rejected":1}"#
        );
        // in the coordinator's process they are there
        let local = serde_json::to_value(&status).unwrap();
        assert_eq!(local["workers"][0]["shards"], 3);
        assert_eq!(local["workers"][0]["games"], 9_000);
        assert_eq!(local["workers"][0]["games_per_second"], 450.5);
        assert_eq!(local["workers"][0]["seconds_since_heard"], 1.25);
    }

    fn live(cluster: ClusterStatus) -> LiveStatus {
        LiveStatus {
            cluster,
            layer_games: vec![0, 600],
            games_this_run: 200,
            games_left: 400,
            recent_games_per_second: Some(200.0),
            uptime_seconds: 10.5,
            now_unix_ms: 1_700_000_000_000,
            events: vec![Event {
                seq: 1,
                unix_ms: 1_699_999_999_000,
                kind: crate::report::events::EventKind::LayerComplete,
                message: "layer 1 complete".into(),
                count: 1,
            }],
        }
    }

    #[test]
    fn the_live_status_json_holds_every_field_of_the_status_and_its_own() {
        let cluster = active(sample());
        let plain = serde_json::to_value(&cluster).unwrap();
        let json = serde_json::to_value(live(cluster)).unwrap();
        let (plain, json) = (plain.as_object().unwrap(), json.as_object().unwrap());
        for (key, value) in plain {
            assert_eq!(json.get(key), Some(value), "{key}");
        }
        assert_eq!(json["layer_games"], serde_json::json!([0, 600]));
        assert_eq!(json["games_this_run"], 200);
        assert_eq!(json["games_left"], 400);
        assert_eq!(json["recent_games_per_second"], 200.0);
        assert_eq!(json["eta_seconds"], 2.0);
        assert_eq!(json["uptime_seconds"], 10.5);
        assert_eq!(json["now_unix_ms"], 1_700_000_000_000u64);
        assert_eq!(json["events"][0]["kind"], "layer_complete");
        assert_eq!(json["events"][0]["message"], "layer 1 complete");
        assert_eq!(json.len(), plain.len() + 7);
        // a finished run: no open layer, and no estimate needed
        let finished = live(ClusterStatus {
            open_layer: None,
            shards: None,
            eta_seconds: None,
            stall: None,
            ..sample()
        });
        let json = serde_json::to_value(finished).unwrap();
        assert!(json["open_layer"].is_null() && json["shards"].is_null());
        assert!(json["eta_seconds"].is_null());
    }

    #[test]
    fn the_games_left_follow_the_slices_left_of_incomplete_layers() {
        let layers = sample().run.layers;
        // layer 1 is complete; layer 2 has 1 of its 3 slices done
        assert_eq!(games_left(&layers, &[100, 600]), 400);
        assert_eq!(games_left(&layers, &[100, 0]), 0);
        // more layers than game counts: the extra ones are not counted
        assert_eq!(games_left(&layers, &[100]), 0);
        let huge = games_left(&layers, &[0, u64::MAX]);
        assert_eq!(huge, (u128::from(u64::MAX) * 2 / 3) as u64);
        assert_eq!(eta_seconds(400, 200.0), Some(2.0));
        assert_eq!(eta_seconds(0, 0.0), Some(0.0));
        assert_eq!(eta_seconds(400, 0.0), None);
        assert_eq!(eta_seconds(400, f64::NAN), None);
    }
}
