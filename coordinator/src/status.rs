//! The status of a coordinator's run: the store's [`RunStatus`] plus the open layer's
//! shards, the live workers and the rates, as one typed value from the coordinator to
//! `gops status --coordinator`, converted to and from its protocol message here.

use gops_db::status::{LayerStatus, RunStatus};
use gops_proto::v1;
use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ShardCounts {
    pub pending: usize,
    pub leased: usize,
    pub done: usize,
}

/// A live worker as `status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerStatus {
    pub id: u64,
    pub name: String,
    pub threads: u32,
    pub slices: u64,
    pub rejected: u64,
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
    /// Why the coordinator is stopping, if its store cannot be written (a full disk).
    pub failure: Option<String>,
    /// Damaged slices found and solved again this run.
    pub repaired_slices: u64,
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
        })
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
                    },
                ],
                db: "/tmp/db".into(),
                format_version: 3,
                db_bytes: 12_345,
                estimated_db_bytes: 99_999,
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
            }],
            slices_per_second: 0.5,
            games_per_second: 1234.5,
            rejected_submissions: 1,
            refused_calls: 2,
            disagreements: 3,
            workers_registered: 4,
            failure: Some("the db's file system is full".into()),
            repaired_slices: 5,
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
}
