//! Submissions: sorting a worker's slices, the checks outside the lock, rejections
//! and the end of a submission.

use super::*;

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
        // 1. cheap checks under the lock: standing, lease, sorting
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
        for _round in 0..3 {
            if fresh.is_empty() && disputed.is_empty() {
                break;
            }
            // 2. the expensive checks, without the lock
            let fractions = slice_fractions(
                fresh.len(),
                self.config.verify_fraction,
                self.config.verify_slices,
                &mut rand::rng(),
            );
            let checked = self.check_submitted(engine, &fresh, &fractions);
            let resolved = self.resolve_disputes(engine, worker, &disputed);
            let mut inner = self.lock();
            let (checked, replaced) = match checked.and_then(|c| resolved.map(|r| (c, r))) {
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
            // 3. write what is still missing, flushed, without the lock (leases and
            // heartbeats go on meanwhile): the slices are claimed first, so no other copy
            // of them is written at the same time
            let claimed = self.claim_for_writing(&mut inner, engine.k(), &checked);
            drop(inner);
            let written = if claimed.is_empty() {
                Ok(())
            } else {
                let batch: Vec<(u32, &SliceBytes)> = checked
                    .iter()
                    .filter(|(s, _)| claimed.contains(&s.prize_rank))
                    .map(|(s, _)| (s.prize_rank, &s.bytes))
                    .collect();
                self.store.put_slice_bytes(engine.k(), &batch)
            };
            let mut inner = self.lock();
            if let Some(open) = inner.open.as_mut().filter(|o| o.k() == engine.k()) {
                open.writes_ended(&claimed);
            }
            if !claimed.is_empty() {
                self.written.notify_all();
            }
            if let Err(e) = written {
                let e = CoreError::from(e);
                Self::note_failure(&mut inner, &e);
                return Err(e);
            }
            // then record it (and store, under the lock, the rarer kinds: replacements
            // and replicated copies)
            let round = self
                .store_checked(&mut inner, context, checked, replaced, &claimed)
                .inspect_err(|e| Self::note_failure(&mut inner, e))?;
            outcome.stored += round.stored;
            outcome.duplicates += round.duplicates;
            outcome.held += round.held;
            disputed = round.raced;
            if !disputed.is_empty() {
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
        }
        if let Some(s) = disputed.first() {
            let mut inner = self.lock();
            let why = Rejection::DiffersFromStored { rank: s.prize_rank };
            return Err(self.reject(&mut inner, worker, lease_id, why));
        }
        if outcome.stored + outcome.held > 0 {
            let mut inner = self.lock();
            inner.workers.credit_shard(worker);
            inner.workers.progress(worker, Instant::now());
        }
        Ok(outcome)
    }

    /// Checks new slices, each with the share of its states re-solved that `fractions`
    /// gives it; the number of stored values of each.
    pub(super) fn check_submitted(
        &self,
        engine: &LayerEngine,
        slices: &[Submitted],
        fractions: &[f64],
    ) -> Result<Vec<u64>, CheckFailure> {
        if slices.is_empty() {
            return Ok(Vec::new());
        }
        // the cheap checks first: a damaged submission loads nothing
        let decoded = slices
            .iter()
            .map(|s| check_form(self.n(), self.objective(), engine, s))
            .collect::<Result<Vec<_>, Rejection>>()?;
        // only the slices with states to re-solve read the slices below
        let resolved: Vec<u32> = slices
            .iter()
            .zip(fractions)
            .filter(|&(_, &fraction)| fraction > 0.0)
            .map(|(s, _)| s.prize_rank)
            .collect();
        let below = if resolved.is_empty() {
            HashMap::new()
        } else {
            self.dependencies(engine.k(), &resolved)?
        };
        let check = SliceCheck {
            n: self.n(),
            objective: self.objective(),
            engine,
            below: &below,
        };
        slices
            .iter()
            .zip(&decoded)
            .zip(fractions)
            .map(|((s, slice), &fraction)| check_slice(&check, s, slice, fraction))
            .collect()
    }

    /// The slices of the layer below that the slices `ranks` read, through the open
    /// layer's bounded cache. Loaded under the cache's own lock, not the coordinator's:
    /// leases and heartbeats go on meanwhile.
    pub(super) fn dependencies(
        &self,
        k: u8,
        ranks: &[u32],
    ) -> Result<HashMap<u32, Arc<gops_common::slice::Slice>>, CheckFailure> {
        let cache = {
            let inner = self.lock();
            inner
                .open
                .as_ref()
                .filter(|o| o.k() == k)
                .map(OpenLayer::below)
        };
        // the layer completed meanwhile: its dependencies are still in the store
        let cache = cache.unwrap_or_else(|| {
            Arc::new(Mutex::new(gops_common::cache::SliceCache::new(
                self.config.verify_cache_bytes,
            )))
        });
        let mut cache = cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.slices_below(&mut cache, k, ranks)
            .map_err(|e| match e {
                CoreError::Store(e) => CheckFailure::Store(e),
                CoreError::Engine(e) => CheckFailure::Engine(e),
                other => CheckFailure::Store(StoreError::Io(other.to_string())),
            })
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

    pub(super) fn reject(
        &self,
        inner: &mut Inner,
        worker: WorkerId,
        lease_id: LeaseId,
        why: Rejection,
    ) -> CoreError {
        warn!(worker = %worker, lease = %lease_id, reason = %why, "submission rejected");
        let message = format!(
            "submission of {} (lease {lease_id}) rejected: {why}",
            Self::who(inner, worker)
        );
        inner
            .events
            .record_now(EventKind::SubmissionRejected, message);
        inner.rejected += 1;
        inner.workers.blame(worker);
        if let Some(open) = inner.open.as_mut() {
            open.ledger_mut().release(worker, lease_id);
        }
        Self::end_leases_of_banned(inner, worker);
        CoreError::Rejected(why)
    }

    /// Once `worker` is banned, every lease of its session and, with per-worker tokens,
    /// of its credential's other sessions goes back to be leased to others.
    pub(super) fn end_leases_of_banned(inner: &mut Inner, worker: WorkerId) {
        let banned = inner.workers.banned_with(worker);
        if banned.is_empty() {
            return;
        }
        let Some(open) = inner.open.as_mut() else {
            return;
        };
        let taken: usize = banned
            .iter()
            .map(|&w| open.ledger_mut().release_all(w))
            .sum();
        warn!(worker = %worker, sessions = banned.len(), leases = taken, "banned: every lease of its sessions taken back");
        let message = format!(
            "{} is banned: {taken} lease(s) of {} session(s) taken back",
            Self::who(inner, worker),
            banned.len()
        );
        inner
            .events
            .record_now(EventKind::SubmissionRejected, message);
    }

    /// A write to the store failed: sled keeps failing after that, so the coordinator
    /// stops (and a supervisor restarts it once the cause is mended). Nothing is lost:
    /// what was acknowledged was flushed before.
    pub(super) fn note_failure(inner: &mut Inner, e: &CoreError) {
        if let CoreError::Store(e @ (StoreError::DiskFull(_) | StoreError::Io(_))) = e {
            if inner.failure.is_none() {
                error!(error = %e, "the store cannot be written: stopping the coordinator");
                inner.events.record_now(
                    EventKind::StoreFailed,
                    format!("the store cannot be written ({e}): the coordinator stops"),
                );
            }
            inner
                .failure
                .get_or_insert_with(|| RunFailure::StoreUnwritable(e.to_string()));
            inner.signal_change();
        }
    }
}
