//! The workers a coordinator knows: the ids handed out at `Hello`, when each joined and
//! was last heard from, what it stored (shards, slices, matrix games), how many of its
//! submissions were rejected, and whether it has been told that the run is finished.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use gops_proto::ids::{Caller, SessionKey, WorkerId};

use crate::report::status::{WorkerActivity, WorkerStatus};

/// Which of the coordinator's tokens a client presented, when it holds one token per
/// worker (a token file of several lines). Standing lost under a credential stays lost
/// when its holder reconnects; with one shared token there is no such identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Credential(pub u32);

#[derive(Clone, Debug)]
struct WorkerEntry {
    name: String,
    threads: u32,
    key: SessionKey,
    credential: Option<Credential>,
    joined: Instant,
    last_seen: Instant,
    /// When it last made progress (a shard leased, a lease kept, a shard handed in):
    /// what keeps a session when the registry is full, where any call keeps it seen.
    last_progress: Option<Instant>,
    /// Submissions that stored (or, replicated, handed in) at least one new slice.
    shards: u64,
    slices: u64,
    /// Matrix games of the slices it stored.
    games: u64,
    rejected: u64,
}

/// Longest worker name kept (characters).
const MAX_NAME_CHARS: usize = 128;

/// Why a hello opens no session ([`WorkerRegistry::join`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinRefusal {
    /// The credential presented has this many rejections.
    Banned(u64),
    /// The registry (or the credential) holds its maximum of live sessions.
    Full(usize),
}

/// Why a call is not let in as the session it names ([`WorkerRegistry::authenticate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthRefusal {
    /// No such session (a coordinator restarted, or the session was pruned).
    Unknown,
    /// The id exists, but the key presented is not its key.
    WrongKey,
}

/// Why a session may not work ([`WorkerRegistry::check_standing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandingRefusal {
    /// No such session.
    Unknown,
    /// The session, or the credential it was opened with, has this many rejections.
    Banned(u64),
}

pub struct WorkerRegistry {
    workers: BTreeMap<WorkerId, WorkerEntry>,
    next: WorkerId,
    told_finished: HashSet<WorkerId>,
    /// Rejected submissions per credential, kept when its sessions are pruned.
    credential_rejections: HashMap<Credential, u64>,
    max_rejections: u64,
    max_sessions: usize,
}

/// Most sessions one credential (a per-worker token) may hold at once.
pub const MAX_SESSIONS_PER_CREDENTIAL: usize = 64;

impl WorkerRegistry {
    /// An empty registry numbering workers from `first`, banning a session or credential
    /// at `max_rejections` rejected submissions, holding at most `max_sessions`.
    pub fn new(first: WorkerId, max_rejections: u64, max_sessions: usize) -> WorkerRegistry {
        WorkerRegistry {
            workers: BTreeMap::new(),
            next: first,
            told_finished: HashSet::new(),
            credential_rejections: HashMap::new(),
            max_rejections,
            max_sessions,
        }
    }

    /// Opens a session for a new worker: its id. Refused for a banned credential. When
    /// the registry is full, the sessions silent for `silent_for` are forgotten, then
    /// the oldest session that never made progress makes room (a flood of hellos cannot
    /// lock a worker out); refused only when every session has made progress. A
    /// credential holds at most [`MAX_SESSIONS_PER_CREDENTIAL`] sessions the same way.
    pub fn join(
        &mut self,
        name: &str,
        threads: u32,
        key: SessionKey,
        credential: Option<Credential>,
        now: Instant,
        silent_for: Duration,
    ) -> Result<WorkerId, JoinRefusal> {
        if let Some(c) = credential {
            let rejected = self.credential_rejections.get(&c).copied().unwrap_or(0);
            if rejected >= self.max_rejections {
                return Err(JoinRefusal::Banned(rejected));
            }
            let held = self
                .workers
                .values()
                .filter(|w| w.credential == Some(c))
                .count();
            if held >= MAX_SESSIONS_PER_CREDENTIAL && !self.evict_idle(Some(c)) {
                return Err(JoinRefusal::Full(MAX_SESSIONS_PER_CREDENTIAL));
            }
        }
        if self.workers.len() >= self.max_sessions {
            self.prune(now, silent_for);
            if self.workers.len() >= self.max_sessions && !self.evict_idle(None) {
                return Err(JoinRefusal::Full(self.max_sessions));
            }
        }
        let id = self.next;
        self.next = WorkerId(id.0 + 1);
        self.workers.insert(
            id,
            WorkerEntry {
                name: name.chars().take(MAX_NAME_CHARS).collect(),
                threads,
                key,
                credential,
                joined: now,
                last_seen: now,
                last_progress: None,
                shards: 0,
                slices: 0,
                games: 0,
                rejected: 0,
            },
        );
        Ok(id)
    }

    /// Forgets the sessions not heard from for longer than `silent_for` (their leases
    /// expired long ago); a credential's rejections are kept.
    pub fn prune(&mut self, now: Instant, silent_for: Duration) {
        let silent: Vec<WorkerId> = self
            .workers
            .iter()
            .filter(|(_, w)| now.duration_since(w.last_seen) > silent_for)
            .map(|(&id, _)| id)
            .collect();
        for id in silent {
            self.remove(id);
        }
    }

    /// Forgets the oldest session (of `credential`, if given) that never made progress;
    /// false if there is none.
    fn evict_idle(&mut self, credential: Option<Credential>) -> bool {
        let oldest = self
            .workers
            .iter()
            .filter(|(_, w)| w.last_progress.is_none())
            .find(|(_, w)| credential.is_none() || w.credential == credential)
            .map(|(&id, _)| id);
        oldest.inspect(|&id| self.remove(id)).is_some()
    }

    /// Whether `id` has handed in a shard that stored new slices this run.
    pub fn has_stored(&self, id: WorkerId) -> bool {
        self.workers.get(&id).is_some_and(|w| w.shards > 0)
    }

    /// Notes that `id` made progress: leased a shard, kept a lease, handed in a shard.
    pub fn progress(&mut self, id: WorkerId, now: Instant) {
        if let Some(w) = self.workers.get_mut(&id) {
            w.last_progress = Some(now);
        }
    }

    /// The sessions banned with `id` once it is banned: itself and, with per-worker
    /// tokens, every session of its credential. Empty while it is in good standing.
    pub fn banned_with(&self, id: WorkerId) -> Vec<WorkerId> {
        if !matches!(self.check_standing(id), Err(StandingRefusal::Banned(_))) {
            return Vec::new();
        }
        match self.credential(id) {
            Some(c) => self
                .workers
                .iter()
                .filter(|(_, w)| w.credential == Some(c))
                .map(|(&session, _)| session)
                .collect(),
            None => vec![id],
        }
    }

    /// Forgets the session of `id` (a worker that left); a credential's rejections are
    /// kept.
    pub fn remove(&mut self, id: WorkerId) {
        self.workers.remove(&id);
        self.told_finished.remove(&id);
    }

    /// The worker's name, if it is registered.
    pub fn name(&self, id: WorkerId) -> Option<&str> {
        self.workers.get(&id).map(|w| w.name.as_str())
    }

    /// Checks that `caller` presents its session's key, and notes that it was heard
    /// from. A wrong key changes nothing (not even the victim's last contact).
    pub fn authenticate(&mut self, caller: &Caller, now: Instant) -> Result<(), AuthRefusal> {
        match self.workers.get_mut(&caller.worker) {
            None => Err(AuthRefusal::Unknown),
            Some(w) if !w.key.matches(&caller.key) => Err(AuthRefusal::WrongKey),
            Some(w) => {
                w.last_seen = now;
                Ok(())
            }
        }
    }

    /// Refused once the session, or its credential, has `max_rejections` rejections.
    pub fn check_standing(&self, id: WorkerId) -> Result<(), StandingRefusal> {
        let Some(w) = self.workers.get(&id) else {
            return Err(StandingRefusal::Unknown);
        };
        let by_credential = w
            .credential
            .and_then(|c| self.credential_rejections.get(&c).copied())
            .unwrap_or(0);
        let rejected = w.rejected.max(by_credential);
        if rejected >= self.max_rejections {
            Err(StandingRefusal::Banned(rejected))
        } else {
            Ok(())
        }
    }

    /// The per-worker token `id` presented at hello, if the coordinator has such tokens.
    pub fn credential(&self, id: WorkerId) -> Option<Credential> {
        self.workers.get(&id).and_then(|w| w.credential)
    }

    /// Credits `id` with stored slices and their matrix games.
    pub fn credit(&mut self, id: WorkerId, slices: u64, games: u64) {
        if let Some(w) = self.workers.get_mut(&id) {
            w.slices += slices;
            w.games = w.games.saturating_add(games);
        }
    }

    /// Credits `id` with a shard done: a submission that brought new slices.
    pub fn credit_shard(&mut self, id: WorkerId) {
        if let Some(w) = self.workers.get_mut(&id) {
            w.shards += 1;
        }
    }

    /// Counts a rejected submission against `id` and its credential.
    pub fn blame(&mut self, id: WorkerId) {
        if let Some(w) = self.workers.get_mut(&id) {
            w.rejected += 1;
            if let Some(c) = w.credential {
                *self.credential_rejections.entry(c).or_default() += 1;
            }
        }
    }

    /// Notes that `id` was told the run is finished.
    pub fn told_finished(&mut self, id: WorkerId) {
        self.told_finished.insert(id);
    }

    /// Whether every worker heard from within `within` has been told the run is finished.
    pub fn all_told_finished(&self, now: Instant, within: Duration) -> bool {
        self.workers
            .iter()
            .filter(|(_, w)| now.duration_since(w.last_seen) <= within)
            .all(|(id, _)| self.told_finished.contains(id))
    }

    /// Workers heard from within `within` and not told that the run is finished.
    pub fn live_count(&self, now: Instant, within: Duration) -> usize {
        self.live_entries(now, within).count()
    }

    /// The entries of the workers heard from within `within` and not told that the run
    /// is finished (those exit).
    fn live_entries(
        &self,
        now: Instant,
        within: Duration,
    ) -> impl Iterator<Item = (&WorkerId, &WorkerEntry)> {
        self.workers.iter().filter(move |(id, w)| {
            now.duration_since(w.last_seen) <= within && !self.told_finished.contains(id)
        })
    }

    /// Sessions registered, live or silent.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// Up to `limit` of the workers heard from within `within` and not told that the run is finished (those exit), by id, with their
    /// activity (shards, games, games per second since they joined, silence).
    pub fn live(&self, now: Instant, within: Duration, limit: usize) -> Vec<WorkerStatus> {
        self.live_entries(now, within)
            .take(limit)
            .map(|(id, w)| worker_status(*id, w, now))
            .collect()
    }

    /// Up to `limit` of the workers that stored slices this run, by id, whether still
    /// connected or not, with their activity up to `end`: the final table of a finished
    /// run.
    pub fn contributors(&self, end: Instant, limit: usize) -> Vec<WorkerStatus> {
        self.workers
            .iter()
            .filter(|(_, w)| w.slices > 0)
            .take(limit)
            .map(|(id, w)| worker_status(*id, w, end))
            .collect()
    }
}

/// A worker's line of the status, its rates and silence taken at `now`.
fn worker_status(id: WorkerId, w: &WorkerEntry, now: Instant) -> WorkerStatus {
    let lifetime = now.saturating_duration_since(w.joined).as_secs_f64();
    WorkerStatus {
        id: id.0,
        name: w.name.clone(),
        threads: w.threads,
        slices: w.slices,
        rejected: w.rejected,
        activity: Some(WorkerActivity {
            shards: w.shards,
            games: w.games,
            games_per_second: if lifetime > 0.0 {
                w.games as f64 / lifetime
            } else {
                0.0
            },
            seconds_since_heard: now.saturating_duration_since(w.last_seen).as_secs_f64(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: SessionKey = SessionKey([1; 32]);
    const SILENT: Duration = Duration::from_secs(30);

    fn caller(worker: WorkerId) -> Caller {
        Caller { worker, key: KEY }
    }

    #[test]
    fn workers_are_numbered_credited_and_fall_silent() {
        let t0 = Instant::now();
        let mut registry = WorkerRegistry::new(WorkerId(7), 3, 100);
        let a = registry.join("a", 2, KEY, None, t0, SILENT).unwrap();
        let b = registry
            .join(&"x".repeat(500), 1, KEY, None, t0, SILENT)
            .unwrap();
        assert_eq!((a, b), (WorkerId(7), WorkerId(8)));
        assert_eq!(registry.name(b).unwrap().chars().count(), MAX_NAME_CHARS);
        assert_eq!(
            registry.authenticate(&caller(WorkerId(99)), t0),
            Err(AuthRefusal::Unknown)
        );
        registry.credit(a, 5, 2_000);
        registry.credit(a, 1, 500);
        registry.credit_shard(a);
        registry.credit_shard(a);
        registry.blame(b);
        let later = t0 + Duration::from_secs(10);
        assert!(registry.authenticate(&caller(a), later).is_ok());
        let live = registry.live(later, Duration::from_secs(5), 10);
        assert_eq!(live.len(), 1);
        assert_eq!((live[0].id, live[0].slices), (7, 6));
        assert_eq!(live[0].rejected, 0);
        let activity = live[0].activity.as_ref().unwrap();
        assert_eq!((activity.shards, activity.games), (2, 2_500));
        // 2,500 games in the 10 s since it joined, heard from just now
        assert_eq!(activity.games_per_second, 250.0);
        assert_eq!(activity.seconds_since_heard, 0.0);
        let quiet = registry.live(later + Duration::from_secs(3), Duration::from_secs(5), 10);
        assert_eq!(quiet[0].activity.as_ref().unwrap().seconds_since_heard, 3.0);
        assert!(registry.live(later, Duration::from_secs(60), 1).len() == 1);
        // b is silent: only a must hear that the run is finished
        assert!(!registry.all_told_finished(later, Duration::from_secs(5)));
        registry.told_finished(a);
        assert!(registry.all_told_finished(later, Duration::from_secs(5)));
        // a worker told so exits: it is no longer live
        assert!(registry.live(later, Duration::from_secs(5), 10).is_empty());
        assert!(!registry.all_told_finished(later, Duration::from_secs(60)));
    }

    #[test]
    fn a_wrong_key_is_refused_and_leaves_the_victim_alone() {
        let t0 = Instant::now();
        let mut registry = WorkerRegistry::new(WorkerId(1), 3, 100);
        let victim = registry.join("v", 1, KEY, None, t0, SILENT).unwrap();
        let forged = Caller {
            worker: victim,
            key: SessionKey([2; 32]),
        };
        let later = t0 + Duration::from_secs(20);
        assert_eq!(
            registry.authenticate(&forged, later),
            Err(AuthRefusal::WrongKey)
        );
        // the forged call did not count as the victim being heard from
        assert!(registry.live(later, Duration::from_secs(5), 10).is_empty());
        assert!(registry.check_standing(victim).is_ok());
    }

    #[test]
    fn a_session_is_banned_and_a_credential_stays_banned_across_reconnects() {
        let t0 = Instant::now();
        let mut registry = WorkerRegistry::new(WorkerId(1), 2, 100);
        let shared = registry.join("s", 1, KEY, None, t0, SILENT).unwrap();
        registry.blame(shared);
        registry.blame(shared);
        assert_eq!(
            registry.check_standing(shared),
            Err(StandingRefusal::Banned(2))
        );
        // with no credential, a new session starts clean (a shared token)
        let again = registry.join("s", 1, KEY, None, t0, SILENT).unwrap();
        assert!(registry.check_standing(again).is_ok());

        let mine = Some(Credential(3));
        let liar = registry.join("l", 1, KEY, mine, t0, SILENT).unwrap();
        registry.blame(liar);
        let second = registry.join("l", 1, KEY, mine, t0, SILENT).unwrap();
        registry.blame(second);
        assert_eq!(
            registry.check_standing(liar),
            Err(StandingRefusal::Banned(2))
        );
        assert_eq!(
            registry.join("l", 1, KEY, mine, t0, SILENT),
            Err(JoinRefusal::Banned(2))
        );
        // pruning the sessions does not clear the credential
        registry.prune(t0 + SILENT * 2, SILENT);
        assert!(registry.is_empty());
        assert_eq!(
            registry.join("l", 1, KEY, mine, t0 + SILENT * 2, SILENT),
            Err(JoinRefusal::Banned(2))
        );
        // another credential is unaffected
        assert!(
            registry
                .join("h", 1, KEY, Some(Credential(4)), t0, SILENT)
                .is_ok()
        );
    }

    #[test]
    fn a_full_registry_forgets_silent_sessions_then_idle_ones_before_refusing() {
        let t0 = Instant::now();
        let mut registry = WorkerRegistry::new(WorkerId(1), 3, 2);
        let a = registry.join("a", 1, KEY, None, t0, SILENT).unwrap();
        let b = registry.join("b", 1, KEY, None, t0, SILENT).unwrap();
        registry.progress(a, t0);
        registry.progress(b, t0);
        // both at work: no room
        assert_eq!(
            registry.join("c", 1, KEY, None, t0, SILENT),
            Err(JoinRefusal::Full(2))
        );
        // silent ones are forgotten
        let later = t0 + SILENT * 2;
        let c = registry.join("c", 1, KEY, None, later, SILENT).unwrap();
        assert_eq!(registry.len(), 1);
        // then the oldest that never made progress
        let d = registry.join("d", 1, KEY, None, later, SILENT).unwrap();
        registry.progress(d, later);
        let e = registry.join("e", 1, KEY, None, later, SILENT).unwrap();
        assert_eq!(registry.name(c), None);
        assert_eq!((registry.name(d), registry.name(e)), (Some("d"), Some("e")));
    }
}
