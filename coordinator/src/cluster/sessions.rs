//! Sessions: hello, the key every later call presents, standing (bans), leaving,
//! and whether every live worker has heard that the run is finished.

use std::time::{Duration, Instant};

use gops_proto::ids::{Caller, LeaseId, SessionKey, WorkerId};

use super::state::Inner;
use super::{Admitted, Coordinator};
use crate::cluster::ledger::Party;
use crate::cluster::registry::{AuthRefusal, Credential, JoinRefusal, StandingRefusal};
use crate::error::CoreError;
use crate::report::happening::Happening;

impl Coordinator {
    /// Opens a session: the worker's id and the key its later calls present.
    /// `credential` is the token it presented, when the coordinator has one per worker.
    pub fn hello(
        &self,
        protocol_version: u32,
        name: &str,
        threads: u32,
        credential: Option<Credential>,
    ) -> Result<Caller, CoreError> {
        if protocol_version != gops_proto::PROTOCOL_VERSION {
            return Err(CoreError::Version {
                got: protocol_version,
                want: gops_proto::PROTOCOL_VERSION,
            });
        }
        // from the thread-local CSPRNG, seeded by the operating system
        let key = SessionKey(rand::random());
        let mut inner = self.lock();
        let now = Instant::now();
        let joined = inner
            .workers
            .join(name, threads, key, credential, now, self.silent_for());
        let worker = joined.map_err(|refusal| match refusal {
            JoinRefusal::Full(max) => CoreError::Full(max),
            JoinRefusal::Banned(count) => CoreError::CredentialBanned(count),
        })?;
        let who = Self::who(&inner, worker);
        let name = inner.workers.name(worker).unwrap_or("").to_owned();
        inner.notices.note(Happening::WorkerJoined {
            worker,
            name: &name,
            who,
            threads,
        });
        Ok(Caller { worker, key })
    }

    /// A worker as events name it: its name and id.
    pub(super) fn who(inner: &Inner, worker: WorkerId) -> String {
        match inner.workers.name(worker) {
            Some(name) => format!("worker {name:?} ({worker})"),
            None => format!("worker {worker}"),
        }
    }

    /// How long a silent session is kept: its leases expired long before.
    pub(super) fn silent_for(&self) -> Duration {
        self.config.lease * 4
    }

    /// Lets `caller` in if it presents its session's key; a forged call is counted and
    /// changes nothing of the worker it names.
    pub(super) fn authenticate(
        inner: &mut Inner,
        caller: &Caller,
        now: Instant,
    ) -> Result<(), CoreError> {
        match inner.workers.authenticate(caller, now) {
            Ok(()) => Ok(()),
            Err(AuthRefusal::WrongKey) => {
                inner.trouble.refused_calls += 1;
                let who = Self::who(inner, caller.worker);
                inner.notices.note(Happening::CallRefused {
                    worker: caller.worker,
                    who,
                });
                Err(CoreError::WrongSession(caller.worker))
            }
            Err(AuthRefusal::Unknown) => Err(CoreError::UnknownWorker(caller.worker)),
        }
    }

    /// Lets `caller` begin a submission under `lease`: a live session presenting its
    /// key, in good standing. Checked from a `Submit` call's metadata before its message
    /// is read ([`crate::server::submit_gate`]), which hands the admission on to the handler;
    /// [`Coordinator::submit_admitted`] then only looks again at the standing (a ban may
    /// land while the message arrives).
    pub fn admit(
        &self,
        caller: Caller,
        lease: LeaseId,
        now: Instant,
    ) -> Result<Admitted, CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, now)?;
        Self::check_standing(&inner, caller.worker)?;
        Ok(Admitted { caller, lease })
    }

    /// Refuses a banned session (or credential).
    pub(super) fn check_standing(inner: &Inner, worker: WorkerId) -> Result<(), CoreError> {
        match inner.workers.check_standing(worker) {
            Ok(()) => Ok(()),
            Err(StandingRefusal::Banned(count)) => Err(CoreError::Banned(worker, count)),
            Err(StandingRefusal::Unknown) => Err(CoreError::UnknownWorker(worker)),
        }
    }

    /// The source a copy counts as: the per-worker token when there is one (so that one
    /// token's sessions cannot confirm each other), else the session.
    pub(super) fn party(inner: &Inner, worker: WorkerId) -> Party {
        match inner.workers.credential(worker) {
            Some(c) => Party::Credential(c),
            None => Party::Session(worker),
        }
    }

    /// Ends `caller`'s session: its leases are given back at once and it no longer
    /// counts as a live worker (nor is waited for to hear that the run is finished).
    pub fn leave(&self, caller: Caller) -> Result<(), CoreError> {
        let mut inner = self.lock();
        Self::authenticate(&mut inner, &caller, Instant::now())?;
        if let Some(open) = inner.open.as_mut() {
            open.release_all(caller.worker);
        }
        let who = Self::who(&inner, caller.worker);
        inner.workers.remove(caller.worker);
        inner.notices.signal_change();
        inner.notices.note(Happening::WorkerLeft {
            worker: caller.worker,
            who,
        });
        Ok(())
    }

    /// Whether the run is finished and every worker seen within a lease period has been
    /// told so (a coordinator about to exit lets its workers hear it first).
    pub fn workers_released(&self, now: Instant) -> bool {
        let inner = self.lock();
        inner.open.is_none() && inner.workers.all_told_finished(now, self.config.lease)
    }
}
