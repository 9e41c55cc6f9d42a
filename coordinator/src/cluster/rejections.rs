//! A submission rejected: the event, the worker blamed, its lease taken back to be
//! leased again, and once the blame bans it, every lease of its sessions.

use gops_proto::ids::{LeaseId, WorkerId};

use super::Coordinator;
use super::state::Inner;
use crate::cluster::rules::Rejection;
use crate::error::CoreError;
use crate::report::happening::Happening;

impl Coordinator {
    /// Rejects the submission of `worker` under `lease_id` for `why`; the error the
    /// worker is answered.
    pub(super) fn reject(
        &self,
        inner: &mut Inner,
        worker: WorkerId,
        lease_id: LeaseId,
        why: Rejection,
    ) -> CoreError {
        let who = Self::who(inner, worker);
        inner.notices.note(Happening::SubmissionRejected {
            worker,
            who,
            lease: lease_id,
            why: &why,
        });
        inner.trouble.rejected += 1;
        inner.workers.blame(worker);
        if let Some(open) = inner.open.as_mut() {
            open.release(worker, lease_id);
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
        let taken: usize = banned.iter().map(|&w| open.release_all(w)).sum();
        let who = Self::who(inner, worker);
        inner.notices.note(Happening::Banned {
            worker,
            who,
            sessions: banned.len(),
            leases: taken,
        });
    }
}
