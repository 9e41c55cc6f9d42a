//! Disputes: a copy that disagrees with the stored one (or with the first copy waiting
//! for confirmation) is settled by re-solving both in full.

use gops_common::engine::LayerEngine;
use gops_db::store::StoreError;
use gops_proto::ids::WorkerId;

use super::Coordinator;
use crate::cluster::rules::{CheckFailure, Submitted};
use crate::report::happening::{DisputeOutcome, Happening};

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
            inner.trouble.disagreements += disputed.len() as u64;
            for s in disputed {
                let who = Self::who(&inner, worker);
                inner.notices.note(Happening::Disagreement {
                    worker,
                    who,
                    layer: k,
                    slice: s.prize_rank,
                });
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
        let settled: Vec<(u32, DisputeOutcome, u64)> = stored_copies
            .iter()
            .zip(new_values)
            .map(|(stored, values)| {
                let outcome =
                    match self.check_submitted(engine, std::slice::from_ref(stored), &[1.0]) {
                        // both equal a full re-solve in values, gap and games: two copies
                        // that claim different things cannot; keep the stored copy
                        Ok(_) => DisputeOutcome::BothPass,
                        Err(CheckFailure::Rejected(why)) => DisputeOutcome::StoredFails {
                            why: why.to_string(),
                        },
                        Err(CheckFailure::Engine(e)) => DisputeOutcome::Unchecked {
                            error: e.to_string(),
                        },
                        Err(CheckFailure::Store(e)) => DisputeOutcome::Unchecked {
                            error: e.to_string(),
                        },
                    };
                (stored.prize_rank, outcome, values)
            })
            .collect();
        // the outcomes told under the lock once, after the re-checks that ran without it
        let mut inner = self.lock();
        Ok(settled
            .into_iter()
            .map(|(slice, outcome, values)| {
                let replacement = outcome.replaces_stored().then_some(values);
                inner.notices.note(Happening::DisputeSettled {
                    layer: k,
                    slice,
                    outcome,
                });
                replacement
            })
            .collect())
    }
}
