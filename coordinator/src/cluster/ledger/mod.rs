//! The lease ledger of the open layer: which shards are pending, leased (to whom, until
//! when) or done. A plain struct that takes `now` as an argument: no clock, no I/O, so
//! every rule here is unit- and property-tested.
//!
//! Life cycle of a shard:
//!
//! ```text
//!            assign                  every slice stored
//! Pending ───────────▶ Leased ───────────────────────────▶ Done
//!    ▲                  │ │ ▲                                 ▲
//!    └──────────────────┘ │ └── assign (speculative copy, when │
//!     last lease expired  │     nothing is pending)            │
//!     or released         └────────────────────────────────────┘
//!                          slices may also come from a lease that
//!                          expired: the first valid result wins
//! ```

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use gops_proto::ids::{LeaseId, WorkerId};

use crate::cluster::registry::Credential;

/// What a worker gets when it asks for work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Assignment {
    Shard {
        lease_id: LeaseId,
        prize_ranks: Vec<u32>,
    },
    /// Every remaining shard is leased (and already has a speculative copy).
    Wait,
    /// Every shard of the layer is done.
    LayerDone,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardState {
    Pending,
    /// Leases currently out for this shard (two when speculated).
    Leased(Vec<LeaseId>),
    Done,
}

#[derive(Clone, Debug)]
struct Shard {
    prize_ranks: Vec<u32>,
    /// Ranks not stored yet.
    missing: usize,
    state: ShardState,
    /// Parties that handed in a complete copy not yet confirmed (replicated
    /// verification): the shard's next lease goes to someone else.
    copied_by: Vec<Party>,
    /// Since when the shard has been leased without a break.
    leased_since: Option<Instant>,
    /// Whether the shard was ever leased (a pending one that was is work handed back).
    ever_leased: bool,
}

/// Who counts as one source of a copy when shards are solved twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Party {
    /// A worker's session, where workers hold no token of their own.
    Session(WorkerId),
    /// The per-worker token a session holds: one token's sessions cannot confirm each
    /// other's copies.
    Credential(Credential),
}

#[derive(Clone, Copy, Debug)]
struct Lease {
    shard: usize,
    worker: WorkerId,
    party: Party,
    deadline: Instant,
}

/// Counts of shards by state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LedgerCounts {
    pub pending: usize,
    pub leased: usize,
    pub done: usize,
}

#[derive(Clone, Debug)]
pub struct LeaseLedger {
    shards: Vec<Shard>,
    /// prize rank -> (shard, stored yet)
    ranks: HashMap<u32, (usize, bool)>,
    leases: BTreeMap<LeaseId, Lease>,
    /// Every lease granted in this layer, live or not: lease -> (worker, shard). A
    /// submission must name one of its worker's.
    granted: HashMap<LeaseId, (WorkerId, usize)>,
    next_lease: LeaseId,
    lease_duration: Duration,
    /// A shard gets at most this many leases at once (1 + speculative copies).
    max_copies: usize,
    /// A worker holds at most this many live leases (the cluster sets three: one solving,
    /// one submitting, one leased ahead).
    max_per_worker: usize,
    /// Time from first lease to done of the shards finished so far, and their number:
    /// a speculative copy is made only of a shard out for twice the mean.
    finished_time: Duration,
    finished: u32,
    /// The shard each worker was last given: its next is the one after, if free, so a
    /// worker walks through neighbouring prize sets and its cache keeps the slices they
    /// share.
    last_shard: HashMap<WorkerId, usize>,
}

impl LeaseLedger {
    /// A ledger over `shards` (runs of prize ranks still to solve). `first_lease_id`
    /// lets a restarted coordinator avoid reusing ids an old worker may still hold.
    pub fn new(shards: Vec<Vec<u32>>, lease_duration: Duration, first_lease_id: LeaseId) -> Self {
        let mut ranks = HashMap::new();
        let shards: Vec<Shard> = shards
            .into_iter()
            .enumerate()
            .map(|(i, prize_ranks)| {
                for &r in &prize_ranks {
                    ranks.insert(r, (i, false));
                }
                Shard {
                    copied_by: Vec::new(),
                    leased_since: None,
                    ever_leased: false,
                    missing: prize_ranks.len(),
                    state: if prize_ranks.is_empty() {
                        ShardState::Done
                    } else {
                        ShardState::Pending
                    },
                    prize_ranks,
                }
            })
            .collect();
        LeaseLedger {
            shards,
            ranks,
            leases: BTreeMap::new(),
            granted: HashMap::new(),
            next_lease: first_lease_id.max(LeaseId(1)),
            lease_duration,
            max_copies: 2,
            max_per_worker: 2,
            finished_time: Duration::ZERO,
            finished: 0,
            last_shard: HashMap::new(),
        }
    }

    /// Sets how many live leases one worker may hold (at least 1).
    pub fn with_max_per_worker(mut self, leases: usize) -> Self {
        self.max_per_worker = leases.max(1);
        self
    }

    /// Takes back every lease whose deadline has passed.
    pub fn expire(&mut self, now: Instant) -> Vec<(LeaseId, WorkerId)> {
        self.take_back(|l| l.deadline <= now)
    }

    /// Drops every lease `which` picks; the leases dropped and their workers.
    fn take_back(&mut self, which: impl Fn(&Lease) -> bool) -> Vec<(LeaseId, WorkerId)> {
        let picked: Vec<(LeaseId, WorkerId)> = self
            .leases
            .iter()
            .filter(|(_, l)| which(l))
            .map(|(&id, l)| (id, l.worker))
            .collect();
        for &(id, _) in &picked {
            self.drop_lease(id);
        }
        picked
    }

    fn drop_lease(&mut self, lease_id: LeaseId) {
        let Some(lease) = self.leases.remove(&lease_id) else {
            return;
        };
        let shard = &mut self.shards[lease.shard];
        if let ShardState::Leased(ids) = &mut shard.state {
            ids.retain(|&id| id != lease_id);
            if ids.is_empty() {
                shard.state = ShardState::Pending;
                shard.leased_since = None;
            }
        }
    }

    /// Gives `worker` a pending shard (see [`LeaseLedger::pending_for`]: the one after
    /// its last if it can); when none is pending, a speculative copy
    /// of a leased shard that worker does not already hold. A worker holding its maximum
    /// of live leases waits.
    pub fn assign(&mut self, worker: WorkerId, now: Instant) -> Assignment {
        self.assign_to(worker, Party::Session(worker), now)
    }

    /// [`LeaseLedger::assign`] for a worker that is part of `party`: never a shard that
    /// party already handed a copy of.
    pub fn assign_to(&mut self, worker: WorkerId, party: Party, now: Instant) -> Assignment {
        self.assign_among(worker, party, now, 1)
    }

    /// [`LeaseLedger::assign_to`] with `live_workers` workers at work: a worker that
    /// already holds a lease (one it solves or hands in) gets another only while at
    /// least `live_workers` shards are pending (or none is, for a speculative copy), so
    /// at a layer's end every worker gets a shard before any takes a second one ahead.
    pub fn assign_among(
        &mut self,
        worker: WorkerId,
        party: Party,
        now: Instant,
        live_workers: usize,
    ) -> Assignment {
        self.expire(now);
        if self.is_done() {
            return Assignment::LayerDone;
        }
        let held = self.leases.values().filter(|l| l.worker == worker).count();
        if held >= self.max_per_worker {
            return Assignment::Wait;
        }
        if held > 0 {
            // (with none pending, the speculative copies below are as before)
            let pending = self.counts().pending;
            if pending > 0 && pending < live_workers {
                return Assignment::Wait;
            }
        }
        let pending = self.pending_for(worker, party);
        let overdue = self.overdue_after();
        let chosen = pending.or_else(|| {
            self.shards.iter().position(|s| match &s.state {
                ShardState::Leased(_) if s.copied_by.contains(&party) => false,
                ShardState::Leased(ids) => {
                    ids.len() < self.max_copies
                        && ids.iter().all(|id| {
                            let holder = &self.leases[id];
                            holder.worker != worker && holder.party != party
                        })
                        && s.leased_since
                            .is_some_and(|since| now.duration_since(since) >= overdue)
                }
                _ => false,
            })
        });
        let Some(index) = chosen else {
            return Assignment::Wait;
        };
        let lease_id = self.next_lease;
        self.next_lease = lease_id.next();
        self.granted.insert(lease_id, (worker, index));
        self.last_shard.insert(worker, index);
        self.leases.insert(
            lease_id,
            Lease {
                shard: index,
                worker,
                party,
                deadline: now + self.lease_duration,
            },
        );
        let shard = &mut self.shards[index];
        shard.ever_leased = true;
        match &mut shard.state {
            ShardState::Leased(ids) => ids.push(lease_id),
            state => {
                *state = ShardState::Leased(vec![lease_id]);
                shard.leased_since = Some(now);
            }
        }
        Assignment::Shard {
            lease_id,
            prize_ranks: shard.prize_ranks.clone(),
        }
    }

    /// The pending shard for `worker` of `party`, if any: the first that was handed back
    /// (expired, released or rejected: done first, so it does not hold up the layer's
    /// end); else the one after the worker's last, if pending; else a fresh stretch: the start of the longest run of never-leased shards, or its
    /// middle when the shard just before it is leased (a worker walking into it): each
    /// new worker halves the largest stretch left, so workers walk through separate
    /// regions of the layer.
    fn pending_for(&self, worker: WorkerId, party: Party) -> Option<usize> {
        let free = |s: &Shard| s.state == ShardState::Pending && !s.copied_by.contains(&party);
        if let Some(back) = self.shards.iter().position(|s| free(s) && s.ever_leased) {
            return Some(back);
        }
        if let Some(&last) = self.last_shard.get(&worker)
            && self.shards.get(last + 1).is_some_and(free)
        {
            return Some(last + 1);
        }
        // the longest run of fresh shards: (start, length), the first of equals
        let mut best: Option<(usize, usize)> = None;
        let mut run_start = None;
        for (i, shard) in self.shards.iter().enumerate() {
            let fresh = free(shard) && !shard.ever_leased;
            match (fresh, run_start) {
                (true, None) => run_start = Some(i),
                (false, Some(start)) => {
                    if best.is_none_or(|(_, len)| i - start > len) {
                        best = Some((start, i - start));
                    }
                    run_start = None;
                }
                _ => {}
            }
        }
        if let Some(start) = run_start {
            let len = self.shards.len() - start;
            if best.is_none_or(|(_, best_len)| len > best_len) {
                best = Some((start, len));
            }
        }
        let (start, len) = best?;
        // a worker on the shard just before will walk into this run: leave it room
        let walked_into =
            start > 0 && matches!(self.shards[start - 1].state, ShardState::Leased(_));
        Some(if walked_into { start + len / 2 } else { start })
    }

    /// Gives back every lease `worker` holds (a worker that left, or banned): how many.
    pub fn release_all(&mut self, worker: WorkerId) -> usize {
        self.take_back(|l| l.worker == worker).len()
    }

    /// Extends a lease held by `worker`; false if it is unknown, expired, or its shard
    /// is done.
    pub fn heartbeat(&mut self, worker: WorkerId, lease_id: LeaseId, now: Instant) -> bool {
        self.expire(now);
        match self.leases.get_mut(&lease_id) {
            Some(lease) if lease.worker == worker => {
                lease.deadline = now + self.lease_duration;
                true
            }
            _ => false,
        }
    }

    /// A worker gives its lease back unfinished (or its submission was rejected).
    pub fn release(&mut self, worker: WorkerId, lease_id: LeaseId) {
        if self
            .leases
            .get(&lease_id)
            .is_some_and(|l| l.worker == worker)
        {
            self.drop_lease(lease_id);
        }
    }

    /// The prize ranks of the shard that `rank` belongs to.
    pub fn shard_ranks(&self, rank: u32) -> Option<&[u32]> {
        self.ranks
            .get(&rank)
            .map(|&(i, _)| self.shards[i].prize_ranks.as_slice())
    }

    /// Notes that `party` (through `worker`) handed in a complete copy of the shard of
    /// `rank`, to be confirmed by another party: the worker's leases of it end, and the
    /// shard is leased to others only.
    pub fn copy_handed_in(&mut self, rank: u32, party: Party, worker: WorkerId) {
        let Some(&(index, _)) = self.ranks.get(&rank) else {
            return;
        };
        if !self.shards[index].copied_by.contains(&party) {
            self.shards[index].copied_by.push(party);
        }
        let held: Vec<LeaseId> = self
            .leases
            .iter()
            .filter(|(_, l)| l.shard == index && l.worker == worker)
            .map(|(&id, _)| id)
            .collect();
        for id in held {
            self.drop_lease(id);
        }
    }

    /// Forgets the copies of the shard of `rank` (one was found wrong): any party may
    /// solve it again.
    pub fn copies_discarded(&mut self, rank: u32) {
        if let Some(&(index, _)) = self.ranks.get(&rank) {
            self.shards[index].copied_by.clear();
        }
    }

    /// Whether `rank` belongs to the layer and is still missing.
    pub fn is_missing(&self, rank: u32) -> bool {
        matches!(self.ranks.get(&rank), Some((_, false)))
    }

    /// Whether `rank` belongs to the layer.
    pub fn contains(&self, rank: u32) -> bool {
        self.ranks.contains_key(&rank)
    }

    /// How long a shard must have been out before an idle worker gets a speculative
    /// copy of it: twice the mean time the finished shards took, or before any shard is
    /// finished, twice the lease (so that a party that leased every shard and
    /// heartbeats them cannot keep the others idle for ever).
    fn overdue_after(&self) -> Duration {
        if self.finished > 0 {
            self.finished_time * 2 / self.finished
        } else {
            self.lease_duration * 2
        }
    }

    /// Records that the slice of `rank` is stored at `now`. A rank stored already, or
    /// not of this layer, changes nothing. Returns true when this completed its shard.
    pub fn slice_stored(&mut self, rank: u32, now: Instant) -> bool {
        let Some((index, stored)) = self.ranks.get_mut(&rank) else {
            return false;
        };
        if *stored {
            return false;
        }
        *stored = true;
        let index = *index;
        let shard = &mut self.shards[index];
        shard.missing -= 1;
        if shard.missing > 0 {
            return false;
        }
        if let Some(since) = shard.leased_since.take() {
            self.finished_time += now.duration_since(since);
            self.finished += 1;
        }
        if let ShardState::Leased(ids) = std::mem::replace(&mut shard.state, ShardState::Done) {
            for id in ids {
                self.leases.remove(&id);
            }
        }
        true
    }

    /// The prize ranks of a live lease held by `worker`.
    pub fn lease_ranks(&self, worker: WorkerId, lease_id: LeaseId) -> Option<&[u32]> {
        self.leases
            .get(&lease_id)
            .filter(|l| l.worker == worker)
            .map(|l| self.shards[l.shard].prize_ranks.as_slice())
    }

    /// The prize ranks of a lease of this layer granted to `worker`, live or not: what
    /// it may submit under that lease.
    pub fn granted_ranks(&self, worker: WorkerId, lease_id: LeaseId) -> Option<&[u32]> {
        self.granted
            .get(&lease_id)
            .filter(|(holder, _)| *holder == worker)
            .map(|&(_, shard)| self.shards[shard].prize_ranks.as_slice())
    }

    pub fn is_done(&self) -> bool {
        self.shards.iter().all(|s| s.state == ShardState::Done)
    }

    pub fn counts(&self) -> LedgerCounts {
        let mut c = LedgerCounts::default();
        for s in &self.shards {
            match s.state {
                ShardState::Pending => c.pending += 1,
                ShardState::Leased(_) => c.leased += 1,
                ShardState::Done => c.done += 1,
            }
        }
        c
    }

    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The next lease id this ledger would hand out.
    pub fn next_lease_id(&self) -> LeaseId {
        self.next_lease
    }

    /// Checks the ledger's invariants; used by tests after every operation.
    pub fn assert_consistent(&self) {
        for (i, shard) in self.shards.iter().enumerate() {
            let stored = shard.prize_ranks.iter().filter(|r| self.ranks[r].1).count();
            assert_eq!(
                shard.missing,
                shard.prize_ranks.len() - stored,
                "shard {i} count"
            );
            match &shard.state {
                ShardState::Done => assert_eq!(shard.missing, 0, "done shard {i} has missing"),
                ShardState::Pending => assert!(shard.missing > 0),
                ShardState::Leased(ids) => {
                    assert!(!ids.is_empty() && ids.len() <= self.max_copies);
                    for id in ids {
                        assert_eq!(self.leases[id].shard, i, "lease {id} points elsewhere");
                    }
                }
            }
        }
        let mut per_worker: HashMap<WorkerId, usize> = HashMap::new();
        for (id, lease) in &self.leases {
            assert_eq!(
                self.granted.get(id),
                Some(&(lease.worker, lease.shard)),
                "lease {id} not recorded as granted"
            );
            *per_worker.entry(lease.worker).or_default() += 1;
            match &self.shards[lease.shard].state {
                ShardState::Leased(ids) => assert!(ids.contains(id)),
                other => panic!("lease {id} on a shard in state {other:?}"),
            }
        }
        assert!(per_worker.values().all(|&n| n <= self.max_per_worker));
    }
}

#[cfg(test)]
mod tests;
