//! Leases: a shard of the open layer for a worker, heartbeats that keep it, and
//! giving it back.

use super::*;

impl Coordinator {
    pub fn lease(&self, caller: Caller, now: Instant) -> Result<LeaseOutcome, CoreError> {
        let worker = caller.worker;
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        Self::check_standing(&inner, worker)?;
        if inner
            .slice_budget
            .is_some_and(|b| inner.slices_this_run >= b)
        {
            return Ok(LeaseOutcome::Wait(self.config.retry_after));
        }
        let party = Self::party(&inner, worker);
        let live_workers = inner.workers.live_count(now, self.config.lease).max(1);
        let Some(open) = inner.open.as_mut() else {
            inner.workers.told_finished(worker);
            return Ok(LeaseOutcome::Finished);
        };
        let k = open.k();
        let expired = open.ledger.expire(now);
        let assignment = open.ledger.assign_among(worker, party, now, live_workers);
        for (lease_id, holder) in expired {
            warn!(worker = %holder, lease = %lease_id, layer = k, "lease expired");
            let message = format!(
                "lease {lease_id} of {} in layer {k} expired: no heartbeat in time (worker lost or silent); its shard is leased again",
                Self::who(&inner, holder)
            );
            inner.events.record_now(EventKind::LeaseExpired, message);
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
            .is_some_and(|open| open.ledger.heartbeat(caller.worker, lease_id, now));
        if kept {
            inner.workers.progress(caller.worker, now);
        }
        Ok(kept)
    }

    pub fn release(&self, caller: Caller, lease_id: LeaseId) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.ledger.release(caller.worker, lease_id);
        }
        Ok(())
    }
}
