//! Leases: a shard of the open layer for a worker, heartbeats that keep it, and
//! giving it back.

use super::*;

impl Coordinator {
    pub fn lease(&self, caller: Caller, now: Instant) -> Result<LeaseOutcome, CoreError> {
        let worker = caller.worker;
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        Self::check_standing(&inner, worker)?;
        if Self::slice_budget_spent(&mut inner) {
            return Ok(LeaseOutcome::Wait(self.config.retry_after));
        }
        let party = Self::party(&inner, worker);
        let live_workers = inner.workers.live_count(now, self.config.lease).max(1);
        let Some(open) = inner.open.as_mut() else {
            inner.workers.told_finished(worker);
            inner.signal_change();
            return Ok(LeaseOutcome::Finished);
        };
        let k = open.k();
        let expired = open.ledger_mut().expire(now);
        let assignment = open
            .ledger_mut()
            .assign_among(worker, party, now, live_workers);
        for (lease_id, holder) in expired {
            let who = Self::who(&inner, holder);
            inner.events.note(Happening::LeaseExpired {
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
                inner.leased.extend(prize_ranks.iter().map(|&r| (k, r)));
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

    /// Whether this run has stored its slice budget; logs the hold the first time.
    fn slice_budget_spent(inner: &mut Inner) -> bool {
        let stored = inner.slices_this_run;
        let Some(budget) = inner.slice_budget.as_mut() else {
            return false;
        };
        if stored < budget.slices {
            return false;
        }
        if !budget.announced {
            budget.announced = true;
            info!(
                slices_stored = stored,
                budget = budget.slices,
                "slice budget reached: leasing nothing more (--hold-after-slices)"
            );
        }
        true
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
            .is_some_and(|open| open.ledger_mut().heartbeat(caller.worker, lease_id, now));
        if kept {
            inner.workers.progress(caller.worker, now);
        }
        Ok(kept)
    }

    pub fn release(&self, caller: Caller, lease_id: LeaseId) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.ledger_mut().release(caller.worker, lease_id);
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
        open.ledger_mut().release(caller.worker, lease_id);
        let why: String = why.chars().take(1000).collect();
        let shard = describe_ranks(&ranks);
        let who = Self::who(&inner, caller.worker);
        inner.events.note(Happening::ShardFailed {
            worker: caller.worker,
            who,
            layer: k,
            shard: &shard,
            why: &why,
        });
        let (parties, last) = inner
            .shard_failures
            .entry((k, ranks[0]))
            .or_insert_with(|| (HashSet::new(), String::new()));
        if has_stored {
            parties.insert(party);
        }
        *last = why;
        let failed = parties.len();
        if failed >= SHARD_FAILURES_TO_STOP && inner.failure.is_none() {
            let failure = RunFailure::ShardNoOneGetsPast {
                parties: failed,
                layer: k,
                shard,
                last: inner.shard_failures[&(k, ranks[0])].1.clone(),
            };
            inner
                .events
                .note(Happening::RunStopped { failure: &failure });
            inner.failure = Some(failure);
            inner.signal_change();
        }
        Ok(())
    }
}

/// Parties that must fail on one shard before the run stops.
pub const SHARD_FAILURES_TO_STOP: usize = 3;

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
