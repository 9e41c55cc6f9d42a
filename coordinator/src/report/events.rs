//! The coordinator's recent events (a layer complete, a worker joined, a lease expired, a
//! submission rejected, ...): a bounded ring buffer for the dashboard, oldest dropped
//! first, with a run of identical events folded into one entry and a count, so that a
//! flood of one kind (a client calling with a wrong key in a loop) cannot push every
//! other event out at once.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// Events a coordinator keeps (the dashboard shows them all).
pub const EVENTS_KEPT: usize = 100;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A layer's last slice was stored and its record written.
    LayerComplete,
    /// Every layer is complete.
    RunComplete,
    /// A rolling solve removed a layer's data (its record kept): nothing reads it again.
    LayerReleased,
    /// A worker opened a session (hello).
    WorkerJoined,
    /// A worker ended its session (shutting down).
    WorkerLeft,
    /// A worker's lease ran out without a heartbeat: the worker is lost or silent.
    LeaseExpired,
    /// A submission failed its checks and was discarded.
    SubmissionRejected,
    /// A worker could not solve its shard and gave it back.
    ShardFailed,
    /// A worker (or its token) had too many submissions rejected: its leases are taken
    /// back and it gets no more.
    Banned,
    /// A call presented another session's key.
    CallRefused,
    /// Two copies of a slice differed (both re-checked in full).
    Disagreement,
    /// A damaged stored slice was solved again.
    SliceRepaired,
    /// Two differing copies of a slice were re-checked in full: which one is kept.
    DisputeSettled,
    /// A worker's stored copy of a slice failed a full re-check and was replaced.
    CopyBlamed,
    /// Stored slices failed a full re-check after their layer was complete: `gops
    /// verify` the db.
    LateReplacement,
    /// The store can no longer be written: the coordinator stops.
    StoreFailed,
    /// The run cannot go on for another cause (a shard no worker gets past): the
    /// coordinator stops.
    RunStopped,
}

/// One entry of the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    /// Numbers events in the order recorded, from 1 (a folded repeat keeps its number).
    pub seq: u64,
    /// When it last happened, in milliseconds since the Unix epoch.
    pub unix_ms: u64,
    pub kind: EventKind,
    pub message: String,
    /// How many times in a row it happened (1 unless repeats were folded into it).
    pub count: u64,
}

/// The last [`EventLog::capacity`] events, oldest first.
#[derive(Clone, Debug)]
pub struct EventLog {
    events: VecDeque<Event>,
    capacity: usize,
    next_seq: u64,
}

impl EventLog {
    /// An empty log keeping at most `capacity` events (at least one).
    pub fn new(capacity: usize) -> EventLog {
        let capacity = capacity.max(1);
        EventLog {
            events: VecDeque::with_capacity(capacity),
            capacity,
            next_seq: 1,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records an event at `unix_ms`. The same kind and message as the newest entry
    /// adds to that entry's count (and moves its time) instead of taking a new one.
    pub fn record(&mut self, unix_ms: u64, kind: EventKind, message: String) {
        if let Some(last) = self.events.back_mut()
            && last.kind == kind
            && last.message == message
        {
            last.count = last.count.saturating_add(1);
            last.unix_ms = last.unix_ms.max(unix_ms);
            return;
        }
        if self.events.len() == self.capacity {
            self.events.pop_front();
        }
        self.events.push_back(Event {
            seq: self.next_seq,
            unix_ms,
            kind,
            message,
            count: 1,
        });
        self.next_seq += 1;
    }

    /// Records an event now (the system clock).
    pub fn record_now(&mut self, kind: EventKind, message: String) {
        self.record(unix_ms(SystemTime::now()), kind, message);
    }

    /// The events kept, oldest first.
    pub fn recent(&self) -> Vec<Event> {
        self.events.iter().cloned().collect()
    }

    /// Events recorded since the start, those dropped and folded ones included once.
    pub fn recorded(&self) -> u64 {
        self.next_seq - 1
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

impl Default for EventLog {
    fn default() -> Self {
        EventLog::new(EVENTS_KEPT)
    }
}

/// Milliseconds from the Unix epoch to `at` (0 for a clock set before 1970).
pub fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_kept_in_order_and_the_oldest_go_first() {
        let mut log = EventLog::new(3);
        assert!(log.is_empty());
        for i in 0..5u64 {
            log.record(1000 + i, EventKind::LayerComplete, format!("layer {i}"));
        }
        assert_eq!(log.len(), 3);
        assert_eq!(log.recorded(), 5);
        let kept = log.recent();
        let messages: Vec<&str> = kept.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(messages, ["layer 2", "layer 3", "layer 4"]);
        let seqs: Vec<u64> = kept.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [3, 4, 5]);
        assert_eq!(kept[0].unix_ms, 1002);
        assert!(kept.iter().all(|e| e.count == 1));
    }

    #[test]
    fn a_run_of_the_same_event_is_folded_into_one_entry() {
        let mut log = EventLog::new(2);
        log.record(1, EventKind::WorkerJoined, "worker a joined".into());
        for t in 2..=500 {
            log.record(t, EventKind::CallRefused, "wrong key for worker 7".into());
        }
        // the flood took one entry: the join is still there
        let kept = log.recent();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].kind, EventKind::WorkerJoined);
        assert_eq!((kept[1].count, kept[1].unix_ms, kept[1].seq), (499, 500, 2));
        // another message, or another kind, is a new entry
        log.record(501, EventKind::CallRefused, "wrong key for worker 8".into());
        log.record(
            502,
            EventKind::LeaseExpired,
            "wrong key for worker 8".into(),
        );
        let kinds: Vec<EventKind> = log.recent().iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventKind::CallRefused, EventKind::LeaseExpired]);
        assert_eq!(log.recorded(), 4);
    }

    #[test]
    fn a_log_keeps_at_least_one_event() {
        let mut log = EventLog::new(0);
        assert_eq!(log.capacity(), 1);
        log.record(1, EventKind::RunComplete, "done".into());
        log.record(2, EventKind::StoreFailed, "full".into());
        assert_eq!(log.recent().len(), 1);
        assert_eq!(log.recent()[0].kind, EventKind::StoreFailed);
        assert_eq!(EventLog::default().capacity(), EVENTS_KEPT);
    }

    #[test]
    fn events_serialize_with_snake_case_kinds() {
        let mut log = EventLog::new(4);
        log.record(1_700_000_000_000, EventKind::SubmissionRejected, "x".into());
        let json = serde_json::to_value(log.recent()).unwrap();
        assert_eq!(
            json,
            serde_json::json!([{
                "seq": 1,
                "unix_ms": 1_700_000_000_000u64,
                "kind": "submission_rejected",
                "message": "x",
                "count": 1
            }])
        );
        assert_eq!(
            unix_ms(UNIX_EPOCH + std::time::Duration::from_millis(42)),
            42
        );
        assert_eq!(unix_ms(UNIX_EPOCH - std::time::Duration::from_secs(1)), 0);
    }
}
