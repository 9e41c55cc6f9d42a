//! The workers a coordinator knows: the ids handed out at `Hello`, when each was last
//! heard from, what it stored, how many of its submissions were rejected, and whether it
//! has been told that the run is finished.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use gops_proto::ids::WorkerId;

use crate::status::WorkerStatus;

#[derive(Clone, Debug)]
struct WorkerEntry {
    name: String,
    threads: u32,
    last_seen: Instant,
    slices: u64,
    rejected: u64,
}

/// Longest worker name kept (characters).
const MAX_NAME_CHARS: usize = 128;

pub struct WorkerRegistry {
    workers: BTreeMap<WorkerId, WorkerEntry>,
    next: WorkerId,
    told_finished: HashSet<WorkerId>,
}

impl WorkerRegistry {
    /// An empty registry numbering workers from `first`.
    pub fn new(first: WorkerId) -> WorkerRegistry {
        WorkerRegistry {
            workers: BTreeMap::new(),
            next: first,
            told_finished: HashSet::new(),
        }
    }

    /// Registers a new worker and returns its id.
    pub fn join(&mut self, name: &str, threads: u32, now: Instant) -> WorkerId {
        let id = self.next;
        self.next = WorkerId(id.0 + 1);
        self.workers.insert(
            id,
            WorkerEntry {
                name: name.chars().take(MAX_NAME_CHARS).collect(),
                threads,
                last_seen: now,
                slices: 0,
                rejected: 0,
            },
        );
        id
    }

    /// The worker's name, if it is registered.
    pub fn name(&self, id: WorkerId) -> Option<&str> {
        self.workers.get(&id).map(|w| w.name.as_str())
    }

    /// Notes that `id` was heard from; false if it is not registered.
    pub fn touch(&mut self, id: WorkerId, now: Instant) -> bool {
        match self.workers.get_mut(&id) {
            Some(w) => {
                w.last_seen = now;
                true
            }
            None => false,
        }
    }

    /// Rejected submissions of `id` (0 for an unknown worker).
    pub fn rejections(&self, id: WorkerId) -> u64 {
        self.workers.get(&id).map_or(0, |w| w.rejected)
    }

    /// Credits `id` with stored slices.
    pub fn credit(&mut self, id: WorkerId, slices: u64) {
        if let Some(w) = self.workers.get_mut(&id) {
            w.slices += slices;
        }
    }

    /// Counts a rejected submission against `id`.
    pub fn blame(&mut self, id: WorkerId) {
        if let Some(w) = self.workers.get_mut(&id) {
            w.rejected += 1;
        }
    }

    /// Notes that `id` was told the run is finished.
    pub fn told_finished(&mut self, id: WorkerId) {
        self.told_finished.insert(id);
    }

    /// Whether every worker heard from within `within` has been told the run is finished.
    pub fn all_told_finished(&self, now: Instant, within: Duration) -> bool {
        self.workers
            .iter()
            .filter(|(_, w)| now.duration_since(w.last_seen) <= within)
            .all(|(id, _)| self.told_finished.contains(id))
    }

    /// The workers heard from within `within`, by id.
    pub fn live(&self, now: Instant, within: Duration) -> Vec<WorkerStatus> {
        self.workers
            .iter()
            .filter(|(_, w)| now.duration_since(w.last_seen) <= within)
            .map(|(id, w)| WorkerStatus {
                id: id.0,
                name: w.name.clone(),
                threads: w.threads,
                slices: w.slices,
                rejected: w.rejected,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_numbered_credited_and_fall_silent() {
        let t0 = Instant::now();
        let mut registry = WorkerRegistry::new(WorkerId(7));
        let a = registry.join("a", 2, t0);
        let b = registry.join(&"x".repeat(500), 1, t0);
        assert_eq!((a, b), (WorkerId(7), WorkerId(8)));
        assert_eq!(registry.name(b).unwrap().chars().count(), MAX_NAME_CHARS);
        assert!(!registry.touch(WorkerId(99), t0));
        registry.credit(a, 5);
        registry.blame(b);
        assert_eq!(registry.rejections(b), 1);
        let later = t0 + Duration::from_secs(10);
        assert!(registry.touch(a, later));
        let live = registry.live(later, Duration::from_secs(5));
        assert_eq!(live.len(), 1);
        assert_eq!((live[0].id, live[0].slices), (7, 5));
        // b is silent: only a must hear that the run is finished
        assert!(!registry.all_told_finished(later, Duration::from_secs(5)));
        registry.told_finished(a);
        assert!(registry.all_told_finished(later, Duration::from_secs(5)));
        assert!(!registry.all_told_finished(later, Duration::from_secs(60)));
    }
}
