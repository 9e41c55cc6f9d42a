//! Storing checked slices: a copy that disagrees with the stored one is a dispute,
//! settled by re-solving both in full; first copies held for confirmation.

use super::*;

impl Coordinator {
    /// Settles each disputed copy: re-checked in full, and, when it passes, the stored
    /// copy too. `Some(values)` where the stored copy failed and the new one replaces it.
    pub(super) fn resolve_disputes(
        &self,
        engine: &LayerEngine,
        worker: WorkerId,
        disputed: &[Submitted],
    ) -> Result<Vec<Option<u64>>, CheckFailure> {
        if disputed.is_empty() {
            return Ok(Vec::new());
        }
        let k = engine.k();
        {
            let mut inner = self.lock();
            inner.disagreements += disputed.len() as u64;
            for s in disputed {
                warn!(worker = %worker, layer = k, slice = s.prize_rank, "two copies of a slice differ: re-checking both in full");
                let message = format!(
                    "the copy of slice {} of layer {k} from {} differs from another copy: re-checking both in full",
                    s.prize_rank,
                    Self::who(&inner, worker)
                );
                inner.events.record_now(EventKind::Disagreement, message);
            }
        }
        let new_values = self.check_submitted(engine, disputed, &vec![1.0; disputed.len()])?;
        let mut stored_copies = Vec::with_capacity(disputed.len());
        for s in disputed {
            // the stored copy, or the first copy waiting for confirmation
            let stored = self
                .store
                .slice_bytes(k, s.prize_rank)
                .map_err(CheckFailure::Store)?;
            let bytes = match stored {
                Some(bytes) => bytes,
                None => self
                    .store
                    .unconfirmed(k, s.prize_rank)
                    .map_err(CheckFailure::Store)?
                    .ok_or_else(|| {
                        CheckFailure::Store(StoreError::Corrupt(format!(
                            "slice {} of layer {k}: the copy it disagreed with is gone",
                            s.prize_rank
                        )))
                    })?,
            };
            stored_copies.push(Submitted {
                layer: k,
                prize_rank: s.prize_rank,
                bytes,
            });
        }
        Ok(stored_copies
            .iter()
            .zip(new_values)
            .map(|(stored, values)| {
                match self.check_submitted(engine, std::slice::from_ref(stored), &[1.0]) {
                    // both equal a full re-solve in values, gap and games: two copies
                    // that claim different things cannot; keep the stored copy
                    Ok(_) => {
                        error!(layer = k, slice = stored.prize_rank, "two different copies of a slice both pass a full re-check; keeping the stored one");
                        None
                    }
                    Err(CheckFailure::Rejected(why)) => {
                        error!(layer = k, slice = stored.prize_rank, reason = %why, "the stored copy of a slice fails a full re-check: replacing it");
                        Some(values)
                    }
                    Err(CheckFailure::Engine(e)) => {
                        error!(layer = k, slice = stored.prize_rank, error = %e, "cannot re-check the stored copy of a slice");
                        None
                    }
                    Err(CheckFailure::Store(e)) => {
                        error!(layer = k, slice = stored.prize_rank, error = %e, "cannot re-check the stored copy of a slice");
                        None
                    }
                }
            })
            .collect())
    }

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
                error!(
                    layer = engine.k(),
                    slices = replacements.len(),
                    "a stored slice failed a full re-check after its layer completed: run `gops verify` on this db"
                );
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
        // matching second copy is stored
        // the first copy's worker and the games of its slice
        let mut confirmed_by: HashMap<u32, (WorkerId, u64)> = HashMap::new();
        if self.config.verify_mode.replicates() {
            let mut to_store = Vec::new();
            let mut held = Vec::new();
            for (s, values) in new {
                let rank = s.prize_rank;
                match open.first_copy(rank) {
                    None => held.push(s),
                    Some(first) if first.claim == s.bytes.claim() && first.party == party => {
                        round.duplicates += 1;
                    }
                    Some(first) if first.claim == s.bytes.claim() => {
                        confirmed_by.insert(rank, (first.worker, s.bytes.games));
                        to_store.push((s, values));
                    }
                    Some(_) => round.raced.push(s),
                }
            }
            for s in &held {
                self.store.put_unconfirmed(k, s.prize_rank, &s.bytes)?;
                open.hold_first_copy(
                    s.prize_rank,
                    FirstCopy {
                        party,
                        worker,
                        claim: s.bytes.claim(),
                    },
                );
                round.held += 1;
            }
            // a shard whose every slice this party handed in goes to another party
            for s in &held {
                let Some(ranks) = open.ledger().shard_ranks(s.prize_rank) else {
                    continue;
                };
                let complete = ranks.iter().all(|&r| {
                    !open.ledger().is_missing(r)
                        || open.first_copy(r).is_some_and(|f| f.party == party)
                });
                if complete {
                    open.ledger_mut()
                        .copy_handed_in(s.prize_rank, party, worker);
                }
            }
            new = to_store;
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
                warn!(worker = %author, layer = k, slice = rank, "handed in a slice that failed a full re-check");
                blamed.push(author);
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
        for author in blamed {
            inner.workers.blame(author);
            Self::end_leases_of_banned(inner, author);
        }
        for (_, (first, first_games)) in confirmed_by {
            inner.workers.credit(first, 1, first_games);
        }
        inner.slices_this_run += u64::from(round.stored);
        if round.stored > 0 {
            inner.signal_change();
        }
        inner.games_this_run = inner.games_this_run.saturating_add(games);
        let total = inner.games_this_run;
        inner.recent.record(now, total);
        inner.workers.credit(worker, u64::from(round.stored), games);
        if round.stored > 0 {
            self.observer.shard_done(k, round.stored as usize, games);
        }
        Ok(round)
    }
}
