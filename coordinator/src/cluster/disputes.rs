//! Disputes: a copy that disagrees with the stored one (or with the first copy waiting
//! for confirmation) is settled by re-solving both in full.

use gops_common::engine::LayerEngine;
use gops_db::store::StoreError;
use gops_proto::ids::WorkerId;
use tracing::error;

use super::Coordinator;
use crate::checks::{CheckFailure, Submitted};
use crate::happening::Happening;

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
}
