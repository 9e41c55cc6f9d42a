//! A coordinator in memory for the worker's unit tests: it runs a small game layer by
//! layer as the real one does (leases of one prize set each, a layer opened once the one
//! below is stored, the slices below served back as they were submitted, "finished"
//! at the end), checks what the real one checks of every call (the protocol version at
//! hello, the worker's id and session key after it), locates the slices it stores in a
//! shared directory when given one, records every call with tokio's (paused) clock, and
//! can be told to misbehave: go away, forget the worker, lose a lease, hang heartbeats,
//! answer a wait.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use gops_common::prizes::prize_set_count;
use gops_proto::answers;
use gops_proto::v1::{
    FetchRequest, Finished, HeartbeatReply, HeartbeatRequest, HelloReply, HelloRequest, LeaseReply,
    LeaseRequest, LeaveRequest, LocateReply, ReleaseRequest, Shard, SliceData, SlicePlace,
    SubmitReply, SubmitRequest, Wait, lease_reply,
};
use gops_proto::wire::slice_parts;
use tokio::sync::watch;
use tokio::time::Instant;
use tonic::Status;

use crate::link::Link;

/// A call as the fake saw it: its name, the lease it named (0: none) and when.
#[derive(Clone, Debug)]
pub struct Seen {
    pub call: &'static str,
    pub lease: u64,
    pub at: Instant,
}

/// How the fake misbehaves; everything off by default.
#[derive(Default)]
pub struct Script {
    /// Every call fails as unreachable from this many stored slices on.
    pub down_after_stored: Option<usize>,
    /// Every call fails as unreachable (until set back).
    pub down: bool,
    /// The first this-many lease calls fail as unreachable, then it answers.
    pub unreachable_leases: usize,
    /// Hello is refused for good (a wrong token).
    pub refuse_hello: bool,
    /// The lease of this number is lost at once: heartbeats say so, its submission is
    /// refused and its prize set is leased again.
    pub lose_lease: Option<u64>,
    /// Heartbeats never answer.
    pub hang_heartbeats: bool,
    /// The first lease call answers "wait this many ms".
    pub wait_first_ms: Option<u64>,
    /// At the lease call of this number (1-based), the coordinator "restarts": it forgets
    /// the worker and every lease, and answers "unknown worker".
    pub restart_at_lease: Option<usize>,
    /// After a restart, hello names this game size instead.
    pub n_after_restart: Option<u8>,
    /// At the lease call of this number (1-based), the worker is asked to stop.
    pub stop_at_lease: Option<(usize, watch::Sender<bool>)>,
    /// The coordinator's db directory: each slice stored is appended to its layer's
    /// data file there, and `LocateSlices` answers where (without one, the call is
    /// unimplemented, as by a coordinator of an older build).
    pub shared_dir: Option<PathBuf>,
    /// Every submission is answered with the coordinator's own failure (its store
    /// cannot be written).
    pub store_failed: bool,
}

struct State {
    n: u8,
    lease_ms: u64,
    script: Script,
    /// The worker's id while the fake knows it (after a hello, until a restart).
    known: Option<u64>,
    hellos: u64,
    lease_calls: usize,
    next_lease: u64,
    /// Open leases: lease number -> (layer, prize rank).
    leases: HashMap<u64, (u8, u32)>,
    stored: BTreeMap<(u8, u32), SliceData>,
    /// Where each stored slice lies in the shared directory, if there is one.
    places: HashMap<(u8, u32), SlicePlace>,
    seen: Vec<Seen>,
}

/// The fake coordinator; clones share it.
#[derive(Clone)]
pub struct Fake(Arc<Mutex<State>>);

impl Fake {
    /// The `n`-card points game, leases of `lease_ms`.
    pub fn new(n: u8, lease_ms: u64, script: Script) -> Fake {
        Fake(Arc::new(Mutex::new(State {
            n,
            lease_ms,
            script,
            known: None,
            hellos: 0,
            lease_calls: 0,
            next_lease: 1,
            leases: HashMap::new(),
            stored: BTreeMap::new(),
            places: HashMap::new(),
            seen: Vec::new(),
        })))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().expect("the fake's lock")
    }

    /// Every call seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state().seen.clone()
    }

    /// When each call named `call` came, in order.
    pub fn times_of(&self, call: &str) -> Vec<Instant> {
        let state = self.state();
        state
            .seen
            .iter()
            .filter(|s| s.call == call)
            .map(|s| s.at)
            .collect()
    }

    /// The calls named `call` seen so far.
    pub fn count(&self, call: &str) -> usize {
        self.state().seen.iter().filter(|s| s.call == call).count()
    }

    /// How many slices are stored.
    pub fn stored(&self) -> usize {
        self.state().stored.len()
    }

    /// The slices stored, by (layer, prize rank).
    pub fn stored_slices(&self) -> BTreeMap<(u8, u32), SliceData> {
        self.state().stored.clone()
    }

    /// Whether every layer of the game is stored.
    pub fn complete(&self) -> bool {
        let state = self.state();
        (1..=state.n).all(|k| state.layer_stored(k))
    }

    /// Records a call, then answers unreachable if the script says the fake is away.
    fn enter(&self, call: &'static str, lease: u64) -> Result<MutexGuard<'_, State>, Status> {
        let mut state = self.state();
        state.seen.push(Seen {
            call,
            lease,
            at: Instant::now(),
        });
        let away = state.script.down
            || state
                .script
                .down_after_stored
                .is_some_and(|count| state.stored.len() >= count);
        if away {
            return Err(Status::unavailable("connection refused"));
        }
        Ok(state)
    }

    /// As the real coordinator: "unknown worker" unless `worker` is the one the fake
    /// knows, and "wrong session key" unless `key` is the one its last hello gave.
    fn check_worker(state: &State, worker: u64, key: &[u8]) -> Result<(), Status> {
        match state.known {
            Some(known) if known == worker && key == state.key().as_slice() => Ok(()),
            Some(known) if known == worker => Err(answers::wrong_key("wrong session key")),
            _ => Err(answers::forgotten("unknown worker")),
        }
    }
}

impl State {
    /// The session key of the last hello (each hello gives another).
    fn key(&self) -> Vec<u8> {
        vec![self.hellos as u8; 32]
    }

    /// Appends `slice` to its layer's data file in the shared directory and notes where.
    fn write_shared(&mut self, layer: u8, rank: u32, slice: &SliceData) -> Result<(), Status> {
        let Some(dir) = self.script.shared_dir.clone() else {
            return Ok(());
        };
        let (_, _, bytes) = slice_parts(slice.clone()).map_err(Status::invalid_argument)?;
        let record = bytes.to_record();
        let file = format!("slices-{layer:02}.dat");
        let mut data = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(&file))
            .map_err(|e| Status::internal(e.to_string()))?;
        let offset = data
            .metadata()
            .map_err(|e| Status::internal(e.to_string()))?
            .len();
        data.write_all(&record)
            .map_err(|e| Status::internal(e.to_string()))?;
        let place = SlicePlace {
            prize_rank: rank,
            file,
            offset,
            len: record.len() as u32,
            digest: bytes.digest.to_vec(),
        };
        self.places.insert((layer, rank), place);
        Ok(())
    }

    fn layer_stored(&self, k: u8) -> bool {
        (0..prize_set_count(self.n, k) as u32).all(|r| self.stored.contains_key(&(k, r)))
    }

    /// The layer open for leases: the lowest not stored whole.
    fn open_layer(&self) -> Option<u8> {
        (1..=self.n).find(|&k| !self.layer_stored(k))
    }
}

impl Link for Fake {
    async fn hello(&self, request: HelloRequest) -> Result<HelloReply, Status> {
        let mut state = self.enter("hello", 0)?;
        if state.script.refuse_hello {
            return Err(Status::permission_denied("wrong token"));
        }
        if request.protocol_version != gops_proto::PROTOCOL_VERSION {
            return Err(answers::precondition(format!(
                "protocol version {} is not supported",
                request.protocol_version
            )));
        }
        state.hellos += 1;
        let n = match state.script.n_after_restart {
            Some(n) if state.hellos > 1 => n,
            _ => state.n,
        };
        let worker = 40 + state.hellos;
        state.known = Some(worker);
        Ok(HelloReply {
            worker_id: worker,
            n: u32::from(n),
            objective: "points".into(),
            lease_ms: state.lease_ms,
            session_key: state.key(),
            pivot_start: 1,
        })
    }

    async fn lease(&self, request: LeaseRequest) -> Result<LeaseReply, Status> {
        let mut state = self.enter("lease", 0)?;
        state.lease_calls += 1;
        let call = state.lease_calls;
        if let Some((at, stop)) = &state.script.stop_at_lease
            && *at == call
        {
            let _ = stop.send(true);
        }
        if call <= state.script.unreachable_leases {
            return Err(Status::unavailable("connection reset"));
        }
        if state.script.restart_at_lease == Some(call) {
            state.known = None;
            state.leases.clear();
        }
        Fake::check_worker(&state, request.worker_id, &request.session_key)?;
        if call == 1
            && let Some(ms) = state.script.wait_first_ms
        {
            return Ok(reply(lease_reply::Reply::Wait(Wait { retry_after_ms: ms })));
        }
        let Some(layer) = state.open_layer() else {
            return Ok(reply(lease_reply::Reply::Finished(Finished {})));
        };
        let leased: BTreeSet<u32> = state
            .leases
            .values()
            .filter(|(k, _)| *k == layer)
            .map(|&(_, r)| r)
            .collect();
        let free = (0..prize_set_count(state.n, layer) as u32)
            .find(|r| !leased.contains(r) && !state.stored.contains_key(&(layer, *r)));
        let Some(rank) = free else {
            return Ok(reply(lease_reply::Reply::Wait(Wait {
                retry_after_ms: 5_000,
            })));
        };
        let lease = state.next_lease;
        state.next_lease += 1;
        state.leases.insert(lease, (layer, rank));
        Ok(reply(lease_reply::Reply::Shard(Shard {
            lease_id: lease,
            layer: u32::from(layer),
            prize_ranks: vec![rank],
        })))
    }

    async fn heartbeat(&self, request: HeartbeatRequest) -> Result<HeartbeatReply, Status> {
        let hang = {
            let state = self.enter("heartbeat", request.lease_id)?;
            state.script.hang_heartbeats
        };
        if hang {
            std::future::pending::<()>().await;
        }
        let state = self.state();
        Fake::check_worker(&state, request.worker_id, &request.session_key)?;
        let valid = state.leases.contains_key(&request.lease_id)
            && state.script.lose_lease != Some(request.lease_id);
        Ok(HeartbeatReply { valid })
    }

    async fn fetch_slices(&self, request: FetchRequest) -> Result<Vec<SliceData>, Status> {
        let state = self.enter("fetch", 0)?;
        let layer = request.layer as u8;
        request
            .prize_ranks
            .iter()
            .map(|&r| {
                state.stored.get(&(layer, r)).cloned().ok_or_else(|| {
                    Status::failed_precondition(format!("slice {r} of layer {layer} not stored"))
                })
            })
            .collect()
    }

    async fn locate_slices(&self, request: FetchRequest) -> Result<LocateReply, Status> {
        let state = self.enter("locate", 0)?;
        if state.script.shared_dir.is_none() {
            return Err(Status::unimplemented("no shared directory"));
        }
        let layer = request.layer as u8;
        let places = request
            .prize_ranks
            .iter()
            .map(|&r| {
                state.places.get(&(layer, r)).cloned().ok_or_else(|| {
                    answers::precondition(format!("slice {r} of layer {layer} not stored"))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(LocateReply { places })
    }

    async fn submit(&self, request: SubmitRequest) -> Result<SubmitReply, Status> {
        let mut state = self.enter("submit", request.lease_id)?;
        Fake::check_worker(&state, request.worker_id, &request.session_key)?;
        if state.script.store_failed {
            return Err(answers::coordinator_failed(
                "the store cannot be written: the db's file system is full",
            ));
        }
        if state.script.lose_lease == Some(request.lease_id) {
            state.leases.remove(&request.lease_id);
            return Err(Status::failed_precondition(format!(
                "lease {} expired",
                request.lease_id
            )));
        }
        let Some(&(layer, rank)) = state.leases.get(&request.lease_id) else {
            return Err(Status::failed_precondition("not your lease"));
        };
        let mut stored = 0;
        for slice in request.slices {
            if slice.layer != u32::from(layer) || slice.prize_rank != rank {
                return Err(Status::invalid_argument("a slice outside the lease"));
            }
            state.write_shared(layer, rank, &slice)?;
            state.stored.insert((layer, rank), slice);
            stored += 1;
        }
        state.leases.remove(&request.lease_id);
        Ok(SubmitReply {
            stored,
            duplicates: 0,
            held: 0,
        })
    }

    async fn release(&self, request: ReleaseRequest) -> Result<(), Status> {
        let mut state = self.enter("release", request.lease_id)?;
        Fake::check_worker(&state, request.worker_id, &request.session_key)?;
        state.leases.remove(&request.lease_id);
        Ok(())
    }

    async fn leave(&self, request: LeaveRequest) -> Result<(), Status> {
        let mut state = self.enter("leave", 0)?;
        Fake::check_worker(&state, request.worker_id, &request.session_key)?;
        state.known = None;
        Ok(())
    }
}

fn reply(reply: lease_reply::Reply) -> LeaseReply {
    LeaseReply { reply: Some(reply) }
}
