//! Replicated verification (`--verify-mode replicate`): the first copy of a slice is
//! held, its bytes in the store's unconfirmed tree, until a copy from another party
//! matches it; a shard whose every slice one party handed in goes to another party.

use std::collections::HashMap;

use gops_proto::ids::WorkerId;

use super::Coordinator;
use super::storing::StoreRound;
use crate::cluster::ledger::Party;
use crate::cluster::open_layer::{FirstCopy, OpenLayer};
use crate::cluster::rules::Submitted;
use crate::error::CoreError;

/// For each slice a second copy confirmed: the first copy's worker and the games of
/// its slice.
pub(super) type ConfirmedBy = HashMap<u32, (WorkerId, u64)>;

impl Coordinator {
    /// Of the `new` copies (checked, missing, not being written), holds each first copy
    /// and lets through each that matches a first copy of another party. The copies to
    /// store, and for each the first copy's worker and the games of its slice (that
    /// worker is credited once the slice is stored).
    pub(super) fn hold_or_confirm(
        &self,
        open: &mut OpenLayer,
        party: Party,
        worker: WorkerId,
        new: Vec<(Submitted, u64)>,
        round: &mut StoreRound,
    ) -> Result<(Vec<(Submitted, u64)>, ConfirmedBy), CoreError> {
        let k = open.k();
        let mut confirmed_by = HashMap::new();
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
                !open.ledger().is_missing(r) || open.first_copy(r).is_some_and(|f| f.party == party)
            });
            if complete {
                open.copy_handed_in(s.prize_rank, party, worker);
            }
        }
        Ok((to_store, confirmed_by))
    }
}
