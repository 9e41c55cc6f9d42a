//! Leases: a shard of the open layer for a worker, heartbeats that keep it, and
//! giving it back.

use std::time::Instant;

use gops_proto::ids::{Caller, LeaseId};

use super::Coordinator;
use crate::cluster::ledger::Assignment;
use crate::error::{CoreError, LeaseOutcome, RunFailure};
use crate::report::happening::Happening;

impl Coordinator {
    pub fn lease(&self, caller: Caller, now: Instant) -> Result<LeaseOutcome, CoreError> {
        let worker = caller.worker;
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        Self::check_standing(&inner, worker)?;
        if inner.slice_budget_spent() {
            return Ok(LeaseOutcome::Wait(self.config.retry_after));
        }
        let party = Self::party(&inner, worker);
        let live_workers = inner.workers.live_count(now, self.config.lease).max(1);
        let Some(open) = inner.open.as_mut() else {
            inner.workers.told_finished(worker);
            inner.notices.signal_change();
            return Ok(LeaseOutcome::Finished);
        };
        let k = open.k();
        let expired = open.expire_leases(now);
        let assignment = open.assign(worker, party, now, live_workers);
        for (lease_id, holder) in expired {
            let who = Self::who(&inner, holder);
            inner.notices.note(Happening::LeaseExpired {
                worker: holder,
                who,
                lease: lease_id,
                layer: k,
            });
        }
        Ok(match assignment {
            Assignment::Shard {
                lease_id,
                prize_ranks,
            } => {
                inner
                    .tally
                    .leased
                    .extend(prize_ranks.iter().map(|&r| (k, r)));
                inner.workers.progress(worker, now);
                LeaseOutcome::Shard {
                    lease_id,
                    layer: k,
                    prize_ranks,
                }
            }
            Assignment::Wait | Assignment::LayerDone => LeaseOutcome::Wait(self.config.retry_after),
        })
    }

    pub fn heartbeat(
        &self,
        caller: Caller,
        lease_id: LeaseId,
        now: Instant,
    ) -> Result<bool, CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        // a banned session keeps no lease alive
        Self::check_standing(&inner, caller.worker)?;
        let kept = inner
            .open
            .as_mut()
            .is_some_and(|open| open.heartbeat(caller.worker, lease_id, now));
        if kept {
            inner.workers.progress(caller.worker, now);
        }
        Ok(kept)
    }

    pub fn release(&self, caller: Caller, lease_id: LeaseId) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.release(caller.worker, lease_id);
        }
        Ok(())
    }

    /// Gives back a lease whose shard the worker failed on, for `why` (an error it
    /// cannot get past). Once workers of [`SHARD_FAILURES_TO_STOP`] parties have failed
    /// on the same shard, the run stops with an error naming it: no worker will get
    /// past it, and leasing it again for ever would hide the cause. Only workers that
    /// have stored a shard this run count, so that stopping a run costs real work.
    pub fn release_failed(
        &self,
        caller: Caller,
        lease_id: LeaseId,
        why: &str,
        now: Instant,
    ) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        let party = Self::party(&inner, caller.worker);
        let has_stored = inner.workers.has_stored(caller.worker);
        let Some(open) = inner.open.as_mut() else {
            return Ok(());
        };
        let k = open.k();
        let Some(ranks) = open
            .ledger()
            .lease_ranks(caller.worker, lease_id)
            .map(<[u32]>::to_vec)
        else {
            return Ok(());
        };
        open.release(caller.worker, lease_id);
        let why: String = why.chars().take(1000).collect();
        let shard = describe_ranks(&ranks);
        let who = Self::who(&inner, caller.worker);
        inner.notices.note(Happening::ShardFailed {
            worker: caller.worker,
            who,
            layer: k,
            shard: &shard,
            why: &why,
        });
        // only workers that stored a shard this run count towards stopping it
        let counted = has_stored.then_some(party);
        let (failed, last) = inner.health.shard_failed((k, ranks[0]), counted, why);
        if failed >= SHARD_FAILURES_TO_STOP && inner.health.failure().is_none() {
            let failure = RunFailure::ShardNoOneGetsPast {
                parties: failed,
                layer: k,
                shard,
                last,
            };
            inner
                .notices
                .note(Happening::RunStopped { failure: &failure });
            inner.health.fail(failure);
            inner.notices.signal_change();
        }
        Ok(())
    }
}

/// Parties that must fail on one shard before the run stops.
pub(super) const SHARD_FAILURES_TO_STOP: usize = 3;

/// Prize ranks as text, runs shortened: `4..=9, 12`.
fn describe_ranks(ranks: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}..={}", ranks[i], ranks[j])
        } else {
            ranks[i].to_string()
        });
        i = j + 1;
    }
    parts.join(", ")
}
