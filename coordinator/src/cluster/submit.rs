//! A submission's way, step by step: admitted (its sender checked at the gate), its
//! slices sorted under the lock, then in rounds checked without it ([`super::checking`]),
//! written and recorded ([`super::storing`]), counted; a rejection at any step
//! ([`super::rejections`]); the end of the submission, which may complete the layer.
//!
//! Where the coordinator's lock is taken, in order, for a submission settled in one
//! round (each a `self.lock()` in this file or the one named):
//!
//! 1. the sorting ([`Coordinator::submit_admitted`]): standing, lease, sorting;
//! 2. the cache of the layer below, only when states are to be re-solved
//!    ([`super::checking`]), and once more for the disputes if there are any
//!    ([`super::disputes`]);
//! 3. the verdict of the checks: a rejection, or the claims of the slices to write
//!    ([`Coordinator::write_unclaimed`]);
//! 4. after the write: the records, the counts and the worker's credit;
//! 5. the end ([`Coordinator::end_submission`]), which may complete the layer.
//!
//! A copy that raced another one to the store adds a round (steps 2 to 4 again, after a
//! wait on the write it met), at most [`SUBMISSION_ROUNDS`] in all.

use std::sync::Arc;
use std::time::Instant;

use gops_common::engine::LayerEngine;
use gops_proto::ids::{Caller, LeaseId, WorkerId};

use super::state::Inner;
use super::{Admitted, Coordinator};
use crate::cluster::rules::{CheckFailure, LeaseGrant, Rejection, Submitted, sort_submission};
use crate::config::RACE_WAIT_LIMIT;
use crate::error::{CoreError, SubmitOutcome};

/// Who hands in under which lease, for which layer's engine, and when: what every step
/// of a submission after the sorting needs.
pub(super) struct SubmissionContext {
    pub(super) worker: WorkerId,
    pub(super) lease_id: LeaseId,
    pub(super) engine: Arc<LayerEngine>,
    pub(super) now: Instant,
}

/// A submission counted as under way in its layer ([`OpenLayer::submission_began`]):
/// [`SubmissionUnderWay::end`] ends it and may complete the layer; dropped without that
/// (a panic in the checks), it still ends it, so the layer is never held open.
struct SubmissionUnderWay<'a> {
    core: &'a Coordinator,
    k: u8,
    ended: bool,
}

impl SubmissionUnderWay<'_> {
    fn end(mut self) -> Result<(), CoreError> {
        self.ended = true;
        self.core.end_submission(self.k)
    }
}

impl Drop for SubmissionUnderWay<'_> {
    fn drop(&mut self) {
        if !self.ended {
            // a failure to complete the layer is noted by end_submission itself
            let _ = self.core.end_submission(self.k);
        }
    }
}

/// Rounds a submission may take: the first, and two more for copies that raced another
/// submission's copy of the same slice (with a different digest) to the store and are
/// settled as disputes once that write ends. A copy still racing after them is rejected
/// as differing from the stored one: a worker that keeps losing races is not trusted.
const SUBMISSION_ROUNDS: usize = 3;

impl Coordinator {
    /// Validates and stores a worker's finished slices. All or nothing: one bad slice
    /// rejects the submission, and the lease goes back to be leased again.
    ///
    /// Slices of the open layer must belong to the shard of `lease_id`, a lease granted
    /// to the caller (live or expired). A copy whose digest differs from the stored one
    /// is a dispute: both copies are re-solved in full; the one that fails is wrong (the
    /// submitter is rejected, or the stored copy is replaced and its author blamed).
    pub fn submit(
        &self,
        caller: Caller,
        lease_id: LeaseId,
        slices: Vec<Submitted>,
        now: Instant,
    ) -> Result<SubmitOutcome, CoreError> {
        let admitted = self.admit(caller, lease_id, now)?;
        self.submit_admitted(admitted, slices, now)
    }

    /// [`Coordinator::submit`] from a sender [`Coordinator::admit`] let in: its session
    /// is not looked up again, only its standing (a ban may have landed since).
    pub fn submit_admitted(
        &self,
        admitted: Admitted,
        slices: Vec<Submitted>,
        now: Instant,
    ) -> Result<SubmitOutcome, CoreError> {
        let (worker, lease_id) = (admitted.caller.worker, admitted.lease);
        // step 1: the cheap checks under the lock: standing, lease, sorting
        let (engine, fresh, disputed, duplicates) = {
            let mut inner = self.lock();
            Self::check_standing(&inner, worker)?;
            let Some(open) = inner.open.as_mut() else {
                // the run is complete: whatever arrives now is late
                return Ok(SubmitOutcome {
                    stored: 0,
                    duplicates: slices.len() as u32,
                    held: 0,
                });
            };
            let grant = LeaseGrant {
                lease: lease_id,
                ranks: open.ledger().granted_ranks(worker, lease_id),
            };
            let sorted = match sort_submission(open.progress(), grant, slices) {
                Ok(sorted) => sorted,
                Err(why) => return Err(self.reject(&mut inner, worker, lease_id, why)),
            };
            // the layer does not complete while this submission is under way
            open.submission_began();
            (
                Arc::clone(open.engine()),
                sorted.fresh,
                sorted.disputed,
                sorted.duplicates,
            )
        };
        let under_way = SubmissionUnderWay {
            core: self,
            k: engine.k(),
            ended: false,
        };
        let context = SubmissionContext {
            worker,
            lease_id,
            engine,
            now,
        };
        let outcome = self.submit_sorted(&context, fresh, disputed, duplicates);
        let ended = under_way.end();
        let outcome = outcome?;
        ended?;
        Ok(outcome)
    }

    /// [`Coordinator::submit`] after the sorting: the checks, the disputes and the
    /// writes, in rounds.
    pub(super) fn submit_sorted(
        &self,
        context: &SubmissionContext,
        mut fresh: Vec<Submitted>,
        mut disputed: Vec<Submitted>,
        duplicates: u32,
    ) -> Result<SubmitOutcome, CoreError> {
        let (worker, lease_id, engine) = (context.worker, context.lease_id, &context.engine);
        let mut outcome = SubmitOutcome {
            stored: 0,
            duplicates,
            held: 0,
        };
        // a copy that raced another one to the store becomes a dispute in a second round
        for _round in 0..SUBMISSION_ROUNDS {
            if fresh.is_empty() && disputed.is_empty() {
                break;
            }
            // the expensive checks, without the lock (step 2 takes it briefly)
            let verdict = self.check_round(context, &fresh, &disputed);
            let mut inner = self.lock();
            let (checked, replaced) = match verdict {
                Ok(both) => both,
                Err(CheckFailure::Rejected(why)) => {
                    return Err(self.reject(&mut inner, worker, lease_id, why));
                }
                // the coordinator's own failure: not the worker's fault, nothing is blamed
                Err(CheckFailure::Engine(e)) => return Err(e.into()),
                Err(CheckFailure::Store(e)) => return Err(e.into()),
            };
            let checked: Vec<(Submitted, u64)> = fresh.drain(..).zip(checked).collect();
            let replaced: Vec<(Submitted, u64)> = disputed
                .drain(..)
                .zip(replaced)
                .filter_map(|(s, r)| r.map(|values| (s, values)))
                .collect();
            // write what is still missing, flushed, without the lock (steps 3 and 4)
            let (mut inner, claimed) = self.write_unclaimed(inner, engine.k(), &checked)?;
            // then record it (and store, under the lock, the rarer kinds: replacements
            // and replicated copies)
            let round = self
                .store_checked(&mut inner, context, checked, replaced, &claimed)
                .inspect_err(|e| Self::note_failure(&mut inner, e))?;
            outcome.stored += round.stored;
            outcome.duplicates += round.duplicates;
            outcome.held += round.held;
            disputed = round.raced;
            if disputed.is_empty() {
                if outcome.stored + outcome.held > 0 {
                    inner.workers.credit_shard(worker);
                    inner.workers.progress(worker, Instant::now());
                }
                return Ok(outcome);
            }
            // a copy that met another one being written: wait for that write to end
            let ranks: Vec<u32> = disputed.iter().map(|s| s.prize_rank).collect();
            let being_written = |inner: &mut Inner| {
                let open = inner.open.as_ref().filter(|o| o.k() == engine.k());
                open.is_some_and(|o| ranks.iter().any(|&r| o.being_written(r).is_some()))
            };
            let waited = self
                .written
                .wait_timeout_while(inner, RACE_WAIT_LIMIT, being_written);
            drop(waited.unwrap_or_else(|poisoned| poisoned.into_inner()));
        }
        // every round met another copy being written with a different digest
        let Some(s) = disputed.first() else {
            return Ok(outcome);
        };
        let mut inner = self.lock();
        let why = Rejection::DiffersFromStored { rank: s.prize_rank };
        Err(self.reject(&mut inner, worker, lease_id, why))
    }

    /// A submission to layer `k` is over (whatever its outcome): the layer completes
    /// when its slices are all stored and no other submission to it is under way. A
    /// copy that disagrees with a stored one is thus settled, the stored one replaced if
    /// it is wrong, before the layer's checksum is taken; completing at the last stored
    /// slice let a lie that won the race to the last shard's store outlive its dispute.
    pub(super) fn end_submission(&self, k: u8) -> Result<(), CoreError> {
        let mut inner = self.lock();
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == k) else {
            return Ok(());
        };
        if open.submission_ended() {
            self.complete_layer(&mut inner)
                .inspect_err(|e| Self::note_failure(&mut inner, e))?;
        }
        Ok(())
    }
}
