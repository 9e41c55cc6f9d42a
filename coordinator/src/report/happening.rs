//! What happened in a run that an operator should hear of, said once: each
//! [`Happening`] is one value from which both its log line (level, message and fields,
//! as scripts and the troubleshooting guide match them) and its entry in the dashboard's
//! [`EventLog`] are made, so the two cannot drift apart.

use gops_db::store::{LayerRecord, StoreError};
use gops_proto::ids::{LeaseId, WorkerId};
use tracing::{error, info, warn};

use crate::cluster::rules::Rejection;
use crate::error::RunFailure;
use crate::report::events::{EventKind, EventLog};

/// How a dispute over a slice ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DisputeOutcome {
    /// Both copies pass a full re-check (which two different copies cannot): the stored
    /// one is kept.
    BothPass,
    /// The stored copy fails a full re-check: the new copy replaces it.
    StoredFails { why: String },
    /// The stored copy could not be re-checked (an engine or store error): it is kept.
    Unchecked { error: String },
}

impl DisputeOutcome {
    /// Whether the new copy replaces the stored one.
    pub(crate) fn replaces_stored(&self) -> bool {
        matches!(self, DisputeOutcome::StoredFails { .. })
    }
}

/// Something that happened. `who` is the worker as events name it (its name and id).
pub(crate) enum Happening<'a> {
    /// Every layer is complete.
    RunComplete {
        layers: u8,
    },
    /// A layer's last slice was stored and its record written.
    LayerComplete {
        record: &'a LayerRecord,
    },
    /// A rolling solve removed the data of a layer below the one completed.
    LayerReleased {
        layer: u8,
        keep_from: u8,
    },
    WorkerJoined {
        worker: WorkerId,
        name: &'a str,
        who: String,
        threads: u32,
    },
    WorkerLeft {
        worker: WorkerId,
        who: String,
    },
    /// A call presented another session's key.
    CallRefused {
        worker: WorkerId,
        who: String,
    },
    LeaseExpired {
        worker: WorkerId,
        who: String,
        lease: LeaseId,
        layer: u8,
    },
    /// A submission failed its checks.
    SubmissionRejected {
        worker: WorkerId,
        who: String,
        lease: LeaseId,
        why: &'a Rejection,
    },
    /// A worker reported that it could not solve its shard.
    ShardFailed {
        worker: WorkerId,
        who: String,
        layer: u8,
        shard: &'a str,
        why: &'a str,
    },
    /// A worker's sessions lost every lease: it is banned.
    Banned {
        worker: WorkerId,
        who: String,
        sessions: usize,
        leases: usize,
    },
    /// Two copies of a slice differed.
    Disagreement {
        worker: WorkerId,
        who: String,
        layer: u8,
        slice: u32,
    },
    /// A damaged stored slice was solved again.
    SliceRepaired {
        layer: u8,
        slice: u32,
        why: &'a str,
    },
    /// A dispute over a slice (two copies differed) was settled by full re-checks.
    DisputeSettled {
        layer: u8,
        slice: u32,
        outcome: DisputeOutcome,
    },
    /// A worker's stored copy failed a full re-check and was replaced: it is blamed.
    CopyBlamed {
        worker: WorkerId,
        who: String,
        layer: u8,
        slice: u32,
    },
    /// Stored copies failed a full re-check after their layer was complete: the layer's
    /// record stands, and only `gops verify` tells whether the db holds them.
    LateReplacement {
        layer: u8,
        slices: usize,
    },
    /// The run stops for `failure` (the store's own failure is [`Happening::StoreUnwritable`],
    /// told with the store's error).
    RunStopped {
        failure: &'a RunFailure,
    },
    /// The run stops: the store cannot be written.
    StoreUnwritable {
        error: &'a StoreError,
    },
}

impl Happening<'_> {
    /// Its kind in the event log.
    pub(crate) fn kind(&self) -> EventKind {
        match self {
            Happening::RunComplete { .. } => EventKind::RunComplete,
            Happening::LayerComplete { .. } => EventKind::LayerComplete,
            Happening::LayerReleased { .. } => EventKind::LayerReleased,
            Happening::WorkerJoined { .. } => EventKind::WorkerJoined,
            Happening::WorkerLeft { .. } => EventKind::WorkerLeft,
            Happening::CallRefused { .. } => EventKind::CallRefused,
            Happening::LeaseExpired { .. } => EventKind::LeaseExpired,
            Happening::SubmissionRejected { .. } => EventKind::SubmissionRejected,
            Happening::ShardFailed { .. } => EventKind::ShardFailed,
            Happening::Banned { .. } => EventKind::Banned,
            Happening::Disagreement { .. } => EventKind::Disagreement,
            Happening::SliceRepaired { .. } => EventKind::SliceRepaired,
            Happening::DisputeSettled { .. } => EventKind::DisputeSettled,
            Happening::CopyBlamed { .. } => EventKind::CopyBlamed,
            Happening::LateReplacement { .. } => EventKind::LateReplacement,
            Happening::RunStopped { .. } => EventKind::RunStopped,
            Happening::StoreUnwritable { .. } => EventKind::StoreFailed,
        }
    }

    /// What the dashboard's event says: a sentence for an operator.
    pub(crate) fn message(&self) -> String {
        let plural =
            |n: u64, one: &'static str, many: &'static str| if n == 1 { one } else { many };
        match self {
            Happening::RunComplete { layers } => {
                format!("run complete: all {layers} layers solved")
            }
            Happening::LayerComplete { record } => format!(
                "layer {} complete: {} {}, checksum {}",
                record.k,
                record.slices,
                plural(record.slices as u64, "slice", "slices"),
                record.checksum
            ),
            Happening::LayerReleased { layer, keep_from } => format!(
                "layer {layer}'s data removed (a rolling solve keeps layers from {keep_from}); its record and checksum kept"
            ),
            Happening::WorkerJoined { who, threads, .. } => format!(
                "{who} joined with {threads} {}",
                plural(u64::from(*threads), "thread", "threads")
            ),
            Happening::WorkerLeft { who, .. } => format!("{who} left"),
            Happening::CallRefused { who, .. } => {
                format!("a call in the name of {who} with a wrong session key refused")
            }
            Happening::LeaseExpired {
                who, lease, layer, ..
            } => format!(
                "lease {lease} of {who} in layer {layer} expired: no heartbeat in time (worker lost or silent); its shard is leased again"
            ),
            Happening::SubmissionRejected {
                who, lease, why, ..
            } => {
                format!("submission of {who} (lease {lease}) rejected: {why}")
            }
            Happening::ShardFailed {
                who,
                layer,
                shard,
                why,
                ..
            } => format!("{who} failed on the shard of layer {layer}, prize ranks {shard}: {why}"),
            Happening::Banned {
                who,
                sessions,
                leases,
                ..
            } => format!("{who} is banned: {leases} lease(s) of {sessions} session(s) taken back"),
            Happening::Disagreement {
                who, layer, slice, ..
            } => format!(
                "the copy of slice {slice} of layer {layer} from {who} differs from another copy: re-checking both in full"
            ),
            Happening::SliceRepaired { layer, slice, why } => {
                format!(
                    "slice {slice} of layer {layer} was damaged ({why}): solved again and stored"
                )
            }
            Happening::DisputeSettled {
                layer,
                slice,
                outcome,
            } => match outcome {
                DisputeOutcome::BothPass => format!(
                    "two different copies of slice {slice} of layer {layer} both pass a full re-check: the stored one is kept"
                ),
                DisputeOutcome::StoredFails { why } => format!(
                    "the stored copy of slice {slice} of layer {layer} fails a full re-check ({why}): the new copy replaces it"
                ),
                DisputeOutcome::Unchecked { error } => format!(
                    "the stored copy of slice {slice} of layer {layer} cannot be re-checked ({error}): it is kept"
                ),
            },
            Happening::CopyBlamed {
                who, layer, slice, ..
            } => format!(
                "{who} had handed in slice {slice} of layer {layer}, which failed a full re-check: its copy is replaced"
            ),
            Happening::LateReplacement { layer, slices } => format!(
                "{slices} stored {} of layer {layer} failed a full re-check after the layer was complete: run `gops verify` on this db",
                plural(*slices as u64, "slice", "slices")
            ),
            Happening::RunStopped { failure } => failure.to_string(),
            Happening::StoreUnwritable { error } => {
                format!("the store cannot be written ({error}): the coordinator stops")
            }
        }
    }

    /// Writes its log line.
    fn log(&self) {
        match self {
            Happening::RunComplete { .. } => info!("run complete"),
            Happening::LayerComplete { record } => {
                info!(layer = record.k, checksum = %record.checksum, max_gap = record.max_gap, "layer complete");
            }
            Happening::LayerReleased { layer, keep_from } => {
                info!(
                    layer = *layer,
                    keep_from = *keep_from,
                    "layer data removed: a rolling solve"
                );
            }
            Happening::WorkerJoined {
                worker,
                name,
                threads,
                ..
            } => info!(worker = %worker, name = *name, threads = *threads, "worker joined"),
            Happening::WorkerLeft { worker, .. } => info!(worker = %worker, "worker left"),
            Happening::CallRefused { worker, .. } => {
                warn!(worker = %worker, "call with a wrong session key refused");
            }
            Happening::LeaseExpired {
                worker,
                lease,
                layer,
                ..
            } => warn!(worker = %worker, lease = %lease, layer = *layer, "lease expired"),
            Happening::SubmissionRejected {
                worker, lease, why, ..
            } => warn!(worker = %worker, lease = %lease, reason = %why, "submission rejected"),
            Happening::ShardFailed {
                worker,
                layer,
                shard,
                why,
                ..
            } => {
                warn!(worker = %worker, layer = *layer, shard = %shard, error = %why, "a worker failed on a shard");
            }
            Happening::Banned {
                worker,
                sessions,
                leases,
                ..
            } => {
                warn!(worker = %worker, sessions = *sessions, leases = *leases, "banned: every lease of its sessions taken back");
            }
            Happening::Disagreement {
                worker,
                layer,
                slice,
                ..
            } => {
                warn!(worker = %worker, layer = *layer, slice = *slice, "two copies of a slice differ: re-checking both in full");
            }
            Happening::SliceRepaired { layer, slice, .. } => {
                info!(
                    layer = *layer,
                    slice = *slice,
                    "damaged slice solved again and stored"
                );
            }
            Happening::DisputeSettled {
                layer,
                slice,
                outcome,
            } => match outcome {
                DisputeOutcome::BothPass => {
                    error!(
                        layer = *layer,
                        slice = *slice,
                        "two different copies of a slice both pass a full re-check; keeping the stored one"
                    );
                }
                DisputeOutcome::StoredFails { why } => {
                    error!(layer = *layer, slice = *slice, reason = %why, "the stored copy of a slice fails a full re-check: replacing it");
                }
                DisputeOutcome::Unchecked { error } => {
                    error!(layer = *layer, slice = *slice, error = %error, "cannot re-check the stored copy of a slice");
                }
            },
            Happening::CopyBlamed {
                worker,
                layer,
                slice,
                ..
            } => {
                warn!(worker = %worker, layer = *layer, slice = *slice, "handed in a slice that failed a full re-check");
            }
            Happening::LateReplacement { layer, slices } => {
                error!(
                    layer = *layer,
                    slices = *slices,
                    "a stored slice failed a full re-check after its layer completed: run `gops verify` on this db"
                );
            }
            Happening::RunStopped { failure } => match failure {
                RunFailure::ShardNoOneGetsPast { .. } => {
                    error!(error = %failure, "stopping: a shard no worker gets past");
                }
                RunFailure::StoreUnwritable { .. } => {
                    error!(error = %failure, "stopping: the store cannot be written");
                }
            },
            Happening::StoreUnwritable { error } => {
                error!(error = %error, "the store cannot be written: stopping the coordinator");
            }
        }
    }
}

impl EventLog {
    /// Logs `happening` and records it: the one way the coordinator's core tells of
    /// what happened.
    pub(crate) fn note(&mut self, happening: Happening) {
        happening.log();
        self.record_now(happening.kind(), happening.message());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every happening's kind, its own for each variant, and its dashboard sentence, as
    /// the core wrote it before they were one value (the dashboard and its readers see
    /// the same text).
    #[test]
    fn each_happening_reads_as_its_event_did() {
        let record = LayerRecord {
            k: 3,
            slices: 1,
            states: 10,
            stored_values: 10,
            dense_values: 12,
            checksum: "ab12".into(),
            max_gap: 0.0,
            matrix_games: None,
        };
        let worker = WorkerId(7);
        let who = || "worker \"w\" (7)".to_string();
        let rejection = Rejection::Repeated { rank: 5 };
        let failure = RunFailure::ShardNoOneGetsPast {
            parties: 3,
            layer: 6,
            shard: "10..=12".into(),
            last: "out of memory".into(),
        };
        let error = StoreError::DiskFull("no space".into());
        let cases = [
            (
                Happening::RunComplete { layers: 9 },
                EventKind::RunComplete,
                "run complete: all 9 layers solved",
            ),
            (
                Happening::LayerComplete { record: &record },
                EventKind::LayerComplete,
                "layer 3 complete: 1 slice, checksum ab12",
            ),
            (
                Happening::LayerReleased {
                    layer: 2,
                    keep_from: 5,
                },
                EventKind::LayerReleased,
                "layer 2's data removed (a rolling solve keeps layers from 5); its record and checksum kept",
            ),
            (
                Happening::WorkerJoined {
                    worker,
                    name: "w",
                    who: who(),
                    threads: 2,
                },
                EventKind::WorkerJoined,
                "worker \"w\" (7) joined with 2 threads",
            ),
            (
                Happening::WorkerJoined {
                    worker,
                    name: "w",
                    who: who(),
                    threads: 1,
                },
                EventKind::WorkerJoined,
                "worker \"w\" (7) joined with 1 thread",
            ),
            (
                Happening::WorkerLeft { worker, who: who() },
                EventKind::WorkerLeft,
                "worker \"w\" (7) left",
            ),
            (
                Happening::CallRefused { worker, who: who() },
                EventKind::CallRefused,
                "a call in the name of worker \"w\" (7) with a wrong session key refused",
            ),
            (
                Happening::LeaseExpired {
                    worker,
                    who: who(),
                    lease: LeaseId(4),
                    layer: 6,
                },
                EventKind::LeaseExpired,
                "lease 4 of worker \"w\" (7) in layer 6 expired: no heartbeat in time (worker lost or silent); its shard is leased again",
            ),
            (
                Happening::SubmissionRejected {
                    worker,
                    who: who(),
                    lease: LeaseId(4),
                    why: &rejection,
                },
                EventKind::SubmissionRejected,
                "submission of worker \"w\" (7) (lease 4) rejected: slice 5 submitted twice in one request",
            ),
            (
                Happening::ShardFailed {
                    worker,
                    who: who(),
                    layer: 6,
                    shard: "10-12",
                    why: "out of memory",
                },
                EventKind::ShardFailed,
                "worker \"w\" (7) failed on the shard of layer 6, prize ranks 10-12: out of memory",
            ),
            (
                Happening::Banned {
                    worker,
                    who: who(),
                    sessions: 2,
                    leases: 3,
                },
                EventKind::Banned,
                "worker \"w\" (7) is banned: 3 lease(s) of 2 session(s) taken back",
            ),
            (
                Happening::Disagreement {
                    worker,
                    who: who(),
                    layer: 6,
                    slice: 11,
                },
                EventKind::Disagreement,
                "the copy of slice 11 of layer 6 from worker \"w\" (7) differs from another copy: re-checking both in full",
            ),
            (
                Happening::SliceRepaired {
                    layer: 2,
                    slice: 1,
                    why: "digest mismatch",
                },
                EventKind::SliceRepaired,
                "slice 1 of layer 2 was damaged (digest mismatch): solved again and stored",
            ),
            (
                Happening::DisputeSettled {
                    layer: 6,
                    slice: 11,
                    outcome: DisputeOutcome::BothPass,
                },
                EventKind::DisputeSettled,
                "two different copies of slice 11 of layer 6 both pass a full re-check: the stored one is kept",
            ),
            (
                Happening::DisputeSettled {
                    layer: 6,
                    slice: 11,
                    outcome: DisputeOutcome::StoredFails {
                        why: "values differ".into(),
                    },
                },
                EventKind::DisputeSettled,
                "the stored copy of slice 11 of layer 6 fails a full re-check (values differ): the new copy replaces it",
            ),
            (
                Happening::DisputeSettled {
                    layer: 6,
                    slice: 11,
                    outcome: DisputeOutcome::Unchecked {
                        error: "disk".into(),
                    },
                },
                EventKind::DisputeSettled,
                "the stored copy of slice 11 of layer 6 cannot be re-checked (disk): it is kept",
            ),
            (
                Happening::CopyBlamed {
                    worker,
                    who: who(),
                    layer: 6,
                    slice: 11,
                },
                EventKind::CopyBlamed,
                "worker \"w\" (7) had handed in slice 11 of layer 6, which failed a full re-check: its copy is replaced",
            ),
            (
                Happening::LateReplacement {
                    layer: 6,
                    slices: 1,
                },
                EventKind::LateReplacement,
                "1 stored slice of layer 6 failed a full re-check after the layer was complete: run `gops verify` on this db",
            ),
            (
                Happening::RunStopped { failure: &failure },
                EventKind::RunStopped,
                "workers of 3 parties failed on the shard of layer 6, prize ranks 10..=12, the last with: out of memory",
            ),
            (
                Happening::StoreUnwritable { error: &error },
                EventKind::StoreFailed,
                "the store cannot be written (the db's file system is full (no space): free space on it and start again (everything stored so far is kept and the run resumes)): the coordinator stops",
            ),
        ];
        // a kind of its own for each variant
        let kinds: std::collections::HashSet<EventKind> = cases
            .iter()
            .map(|(happening, _, _)| happening.kind())
            .collect();
        assert_eq!(
            kinds.len(),
            cases.len() - 3,
            "two WorkerJoined cases, three DisputeSettled"
        );
        let mut log = EventLog::new(cases.len());
        for (happening, kind, message) in cases {
            assert_eq!(happening.kind(), kind, "{message}");
            assert_eq!(happening.message(), message);
            log.note(happening);
        }
        // one entry each (the cases of one kind differ in their message)
        assert_eq!(log.recorded(), 20);
    }
}
