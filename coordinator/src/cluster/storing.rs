//! Storing checked slices: claiming them and writing them without the lock, then
//! recording them (and replacements found by a dispute) in the open layer and the store;
//! under replicated verification the first copies are held ([`super::replication`]). A
//! write that fails stops the run.

use std::sync::MutexGuard;

use gops_common::slice::SliceBytes;

use super::Coordinator;
use super::replication::ConfirmedBy;
use super::state::Inner;
use super::submit::SubmissionContext;
use crate::cluster::rules::Submitted;
use crate::error::{CoreError, RunFailure};
use crate::report::happening::Happening;

/// What one round of storing did: stored, duplicates, and copies that lost a race to
/// another copy with a different digest (disputes for the next round).
#[derive(Default)]
pub(super) struct StoreRound {
    pub(super) stored: u32,
    pub(super) duplicates: u32,
    pub(super) held: u32,
    pub(super) raced: Vec<Submitted>,
}

impl Coordinator {
    /// Claims, for writing without the lock, the checked slices still missing that no
    /// other submission is writing (none under replicated verification, whose copies are
    /// stored under the lock); their ranks. The caller releases the claims.
    pub(super) fn claim_for_writing(
        &self,
        inner: &mut Inner,
        k: u8,
        checked: &[(Submitted, u64)],
    ) -> Vec<u32> {
        if self.config.verify_mode.replicates() {
            return Vec::new();
        }
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == k) else {
            return Vec::new();
        };
        let mut claimed = Vec::new();
        for (s, _) in checked {
            if open.claim_for_writing(s.prize_rank, s.bytes.claim()) {
                claimed.push(s.prize_rank);
            }
        }
        claimed
    }

    /// Records checked slices and replacements: those in `written` are in the store
    /// already; the rest still missing are stored here, flushed, under the lock.
    pub(super) fn store_checked(
        &self,
        inner: &mut Inner,
        context: &SubmissionContext,
        checked: Vec<(Submitted, u64)>,
        replacements: Vec<(Submitted, u64)>,
        written: &[u32],
    ) -> Result<StoreRound, CoreError> {
        let (worker, engine, now) = (context.worker, &context.engine, context.now);
        let mut round = StoreRound::default();
        let party = Self::party(inner, worker);
        let Some(open) = inner.open.as_mut().filter(|o| o.k() == engine.k()) else {
            // the layer completed meanwhile: everything here was a duplicate
            round.duplicates += checked.len() as u32;
            if !replacements.is_empty() {
                inner.notices.note(Happening::LateReplacement {
                    layer: engine.k(),
                    slices: replacements.len(),
                });
            }
            return Ok(round);
        };
        let k = open.k();
        let (missing, late): (Vec<_>, Vec<_>) = checked
            .into_iter()
            .partition(|(s, _)| open.ledger().is_missing(s.prize_rank));
        let mut new = Vec::new();
        for (s, values) in missing {
            // another submission's copy is being written without the lock
            match open.being_written(s.prize_rank) {
                Some(claim) if *claim == s.bytes.claim() => round.duplicates += 1,
                Some(_) => round.raced.push(s),
                None => new.push((s, values)),
            }
        }
        for (s, _) in late {
            // checked at the same time as another copy that was stored first
            if open
                .progress()
                .holds(s.prize_rank, &s.bytes.digest, s.bytes.max_gap)
            {
                round.duplicates += 1;
            } else {
                round.raced.push(s);
            }
        }
        // replicated verification: a first copy waits for another party's, and only a
        // matching second copy is stored; the first copy's worker and the games of its
        // slice, credited below
        let mut confirmed_by = ConfirmedBy::new();
        if self.config.verify_mode.replicates() {
            (new, confirmed_by) = self.hold_or_confirm(open, party, worker, new, &mut round)?;
        }
        let batch: Vec<(u32, &SliceBytes)> = new
            .iter()
            .filter(|(s, _)| !written.contains(&s.prize_rank))
            .chain(&replacements)
            .map(|(s, _)| (s.prize_rank, &s.bytes))
            .collect();
        if !batch.is_empty() {
            self.store.put_slice_bytes(k, &batch)?;
        }
        let mut blamed = Vec::new();
        for (s, values) in replacements {
            let rank = s.prize_rank;
            let (first, author) = open.slice_replaced(rank, s.bytes.claim(), values, worker, now);
            if first.is_some() {
                self.store.remove_unconfirmed(k, rank)?;
            }
            if let Some(author) = author {
                blamed.push((author, rank));
            }
            round.stored += 1;
        }
        let mut games = 0u64;
        for (s, values) in new {
            let rank = s.prize_rank;
            if open
                .slice_stored(rank, s.bytes.claim(), values, worker, now)
                .is_some()
            {
                self.store.remove_unconfirmed(k, rank)?;
            }
            games = games.saturating_add(s.bytes.games);
            round.stored += 1;
        }
        for (author, slice) in blamed {
            let who = Self::who(inner, author);
            inner.notices.note(Happening::CopyBlamed {
                worker: author,
                who,
                layer: k,
                slice,
            });
            inner.workers.blame(author);
            Self::end_leases_of_banned(inner, author);
        }
        for (_, (first, first_games)) in confirmed_by {
            inner.workers.credit(first, 1, first_games);
        }
        inner.tally.stored(now, u64::from(round.stored), games);
        if round.stored > 0 {
            inner.notices.signal_change();
        }
        inner.workers.credit(worker, u64::from(round.stored), games);
        if round.stored > 0 {
            self.observer.shard_done(k, round.stored as usize, games);
        }
        Ok(round)
    }

    /// Writes, flushed and without the lock (leases and heartbeats go on meanwhile), the
    /// checked slices still missing that no other submission is writing: claimed first
    /// under `inner`, released after, and whoever waits on such a write woken. The lock
    /// again and the ranks written; a failed write stops the run ([`Self::note_failure`]).
    pub(super) fn write_unclaimed<'a>(
        &'a self,
        mut inner: MutexGuard<'a, Inner>,
        k: u8,
        checked: &[(Submitted, u64)],
    ) -> Result<(MutexGuard<'a, Inner>, Vec<u32>), CoreError> {
        let claimed = self.claim_for_writing(&mut inner, k, checked);
        drop(inner);
        let written = if claimed.is_empty() {
            Ok(())
        } else {
            let batch: Vec<(u32, &SliceBytes)> = checked
                .iter()
                .filter(|(s, _)| claimed.contains(&s.prize_rank))
                .map(|(s, _)| (s.prize_rank, &s.bytes))
                .collect();
            self.store.put_slice_bytes(k, &batch)
        };
        let mut inner = self.lock();
        if let Some(open) = inner.open.as_mut().filter(|o| o.k() == k) {
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
        Ok((inner, claimed))
    }

    /// A write to the store failed: sled keeps failing after that, so the coordinator
    /// stops (and a supervisor restarts it once the cause is mended). Nothing is lost:
    /// what was acknowledged was flushed before.
    pub(super) fn note_failure(inner: &mut Inner, e: &CoreError) {
        let CoreError::Store(error) = e else {
            return;
        };
        if let Some(failure) = RunFailure::of_store(error) {
            if inner.health.fail(failure) {
                inner.notices.note(Happening::StoreUnwritable { error });
            }
            inner.notices.signal_change();
        }
    }
}
