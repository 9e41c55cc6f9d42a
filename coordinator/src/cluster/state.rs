//! The coordinator's state behind its one lock, in named parts with one job each: the
//! run's clock and totals ([`RunTally`]), its counters of trouble ([`TroubleCounts`]), why
//! it cannot go on ([`Health`]), and what it tells outside ([`Notices`]: the events and
//! the change signal). [`Inner`] holds them with the open layer, the workers, the next
//! lease id and a test's slice budget; each part's methods change only that part.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use gops_proto::ids::LeaseId;
use tracing::info;

use crate::cluster::ledger::Party;
use crate::cluster::open_layer::OpenLayer;
use crate::cluster::registry::WorkerRegistry;
use crate::error::RunFailure;
use crate::report::events::EventLog;
use crate::report::happening::Happening;
use crate::report::rate::RecentRate;
use crate::report::stall::{Stall, StallWatch};

/// What the coordinator's lock guards.
pub(super) struct Inner {
    /// The layer being solved; `None` once the run is complete.
    pub(super) open: Option<OpenLayer>,
    pub(super) workers: WorkerRegistry,
    /// The first lease id of the next layer opened.
    pub(super) next_lease: LeaseId,
    pub(super) tally: RunTally,
    pub(super) trouble: TroubleCounts,
    pub(super) health: Health,
    /// Stop leasing after this many slices this run (tests of interruption).
    pub(super) slice_budget: Option<SliceBudget>,
    pub(super) notices: Notices,
}

impl Inner {
    /// The state of a run that starts at `started`, no layer open yet.
    pub(super) fn new(
        workers: WorkerRegistry,
        first_lease: LeaseId,
        quiet_after: Duration,
        started: Instant,
    ) -> Inner {
        Inner {
            open: None,
            workers,
            next_lease: first_lease,
            tally: RunTally::new(started),
            trouble: TroubleCounts::default(),
            health: Health::new(quiet_after, started),
            slice_budget: None,
            notices: Notices::default(),
        }
    }

    /// Whether this run has stored its slice budget; logs the hold the first time.
    pub(super) fn slice_budget_spent(&mut self) -> bool {
        let stored = self.tally.slices;
        self.slice_budget
            .as_mut()
            .is_some_and(|budget| budget.spent(stored))
    }
}

/// A test's interruption: no more leases once this run has stored `slices` slices.
pub(super) struct SliceBudget {
    slices: u64,
    /// The hold was logged (once).
    announced: bool,
}

impl SliceBudget {
    pub(super) fn new(slices: u64) -> SliceBudget {
        SliceBudget {
            slices,
            announced: false,
        }
    }

    /// Whether `stored` slices spend it; logs the hold the first time. Not a
    /// [`Happening`]: a test's hold, for the test's log alone, not the operator's events.
    fn spent(&mut self, stored: u64) -> bool {
        if stored < self.slices {
            return false;
        }
        if !self.announced {
            self.announced = true;
            info!(
                slices_stored = stored,
                budget = self.slices,
                "slice budget reached: leasing nothing more (--hold-after-slices)"
            );
        }
        true
    }
}

/// The run's clock and what it stored: the rates and the time left are made from it.
pub(super) struct RunTally {
    pub(super) started: Instant,
    /// When the last layer completed: rates stop there.
    pub(super) finished_at: Option<Instant>,
    /// Slices and their matrix games stored this run.
    pub(super) slices: u64,
    pub(super) games: u64,
    /// `games` over the last minute, for the time left.
    pub(super) recent: RecentRate,
    /// Distinct (layer, prize rank) leased this run.
    pub(super) leased: HashSet<(u8, u32)>,
}

impl RunTally {
    fn new(started: Instant) -> RunTally {
        RunTally {
            started,
            finished_at: None,
            slices: 0,
            games: 0,
            recent: RecentRate::new(started),
            leased: HashSet::new(),
        }
    }

    /// `slices` slices of `games` games stored at `now`.
    pub(super) fn stored(&mut self, now: Instant, slices: u64, games: u64) {
        self.slices += slices;
        self.games = self.games.saturating_add(games);
        self.recent.record(now, self.games);
    }

    /// The last layer completed.
    pub(super) fn finish(&mut self) {
        self.finished_at.get_or_insert_with(Instant::now);
    }

    /// The end of the rates: the run's end, or `now` while it runs.
    pub(super) fn until(&self, now: Instant) -> Instant {
        self.finished_at.unwrap_or(now)
    }
}

/// Counts of what went wrong without stopping the run, for the status.
#[derive(Default)]
pub(super) struct TroubleCounts {
    pub(super) rejected: u64,
    /// Calls refused for a wrong session key.
    pub(super) refused_calls: u64,
    /// Copies of a slice whose digest differed from the stored one's.
    pub(super) disagreements: u64,
    /// Damaged slices solved again this run.
    pub(super) repaired: u64,
}

/// Why the run cannot go on, or does not move.
pub(super) struct Health {
    /// Why the coordinator must stop; the first failure found is kept.
    failure: Option<RunFailure>,
    /// Shards workers failed on this run, by (layer, first prize rank): the parties
    /// that failed, and the last reason given.
    shard_failures: HashMap<(u8, u32), (HashSet<Party>, String)>,
    /// Watches the run's progress for a stall.
    pub(super) stalls: StallWatch,
    /// Why the run does not move, as last found; `None` while it moves.
    pub(super) stall: Option<Stall>,
}

impl Health {
    fn new(quiet_after: Duration, started: Instant) -> Health {
        Health {
            failure: None,
            shard_failures: HashMap::new(),
            stalls: StallWatch::new(quiet_after, started),
            stall: None,
        }
    }

    pub(super) fn failure(&self) -> Option<&RunFailure> {
        self.failure.as_ref()
    }

    /// A worker of `party` (`None`: one that does not count) failed on `shard` (layer,
    /// first prize rank) for `why`: how many counted parties failed on it, and the last
    /// reason given.
    pub(super) fn shard_failed(
        &mut self,
        shard: (u8, u32),
        party: Option<Party>,
        why: String,
    ) -> (usize, String) {
        let (parties, last) = self.shard_failures.entry(shard).or_default();
        parties.extend(party);
        *last = why;
        (parties.len(), last.clone())
    }

    /// Keeps `failure` unless one is kept already: whether it was the first.
    pub(super) fn fail(&mut self, failure: RunFailure) -> bool {
        if self.failure.is_some() {
            return false;
        }
        self.failure = Some(failure);
        true
    }
}

/// What the core tells outside: the events the dashboard shows (each logged as it is
/// noted) and the count of changes a waiter may watch.
pub(super) struct Notices {
    events: EventLog,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Default for Notices {
    fn default() -> Notices {
        Notices {
            events: EventLog::default(),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl Notices {
    /// Logs `happening` and records it among the events.
    pub(super) fn note(&mut self, happening: Happening) {
        self.events.note(happening);
    }

    pub(super) fn events(&self) -> &EventLog {
        &self.events
    }

    /// Wakes whoever waits on the changes: a layer opened or the run finished, slices
    /// stored, a failure, a worker told the run is finished or gone.
    pub(super) fn signal_change(&mut self) {
        self.changes
            .send_modify(|count| *count = count.wrapping_add(1));
    }

    pub(super) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
