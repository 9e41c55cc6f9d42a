//! What every test here uses: a coordinator on a temporary db, honest virtual workers
//! that lease, solve and hand in, and the reference checksums.

pub use gops_common::checksum::digest_bytes;
pub use gops_common::engine::{LayerEngine, SolvedSlice, terminal_slice};
pub use gops_common::objective::Objective;
pub use gops_common::prizes::prize_rank;
pub use gops_common::slice::{Slice, UNREACHABLE};
pub use gops_common::solution::InMemorySolution;
pub use gops_coordinator::cluster::registry::Credential;
pub use gops_coordinator::cluster::rules::{Rejection, Submitted};
pub use gops_coordinator::cluster::{Coordinator, CoordinatorConfig, CoreError, LeaseOutcome};
pub use gops_coordinator::report::observer::Silent;
pub use gops_db::store::Store;
pub use gops_proto::ids::{Caller, LeaseId, SessionKey, WorkerId};
pub use std::collections::HashMap;
pub use std::sync::Arc;
pub use std::time::{Duration, Instant};

pub const LEASE: Duration = Duration::from_millis(50);

pub fn coordinator(db: &std::path::Path, n: u8, verify_fraction: f64) -> Coordinator {
    coordinator_of(db, n, Objective::Points, verify_fraction)
}

pub fn coordinator_of(
    db: &std::path::Path,
    n: u8,
    objective: Objective,
    verify_fraction: f64,
) -> Coordinator {
    with_config(
        db,
        n,
        objective,
        CoordinatorConfig {
            verify_fraction,
            ..CoordinatorConfig::default()
        },
    )
}

pub fn with_config(
    db: &std::path::Path,
    n: u8,
    objective: Objective,
    config: CoordinatorConfig,
) -> Coordinator {
    let store = Store::open_or_create(db, n, objective).unwrap();
    let config = CoordinatorConfig {
        lease: LEASE,
        min_shards: 4,
        min_games_per_shard: 1,
        ..config
    };
    Coordinator::new(store, config, Arc::new(Silent)).unwrap()
}

/// What an honest worker computes for a shard, reading layer k - 1 from the store.
pub fn solve_shard(core: &Coordinator, layer: u8, ranks: &[u32]) -> Vec<Submitted> {
    let engine = LayerEngine::new(core.n(), layer, core.objective());
    let below: HashMap<u32, Slice> = if layer == 1 {
        HashMap::from([(0, terminal_slice())])
    } else {
        (0..gops_common::prizes::prize_set_count(core.n(), layer - 1) as u32)
            .map(|r| (r, core.store().slice(layer - 1, r).unwrap().unwrap().slice))
            .collect()
    };
    let dependency = |p| &below[&prize_rank(p)];
    ranks
        .iter()
        .map(|&r| to_submitted(layer, engine.solve_slice(r, &dependency).unwrap()))
        .collect()
}

pub fn to_submitted(layer: u8, solved: SolvedSlice) -> Submitted {
    Submitted::solved(layer, &solved)
}

/// Leases a shard for `worker`: (lease id, layer, prize ranks); there must be one.
pub fn lease_shard(core: &Coordinator, worker: Caller, now: Instant) -> (LeaseId, u8, Vec<u32>) {
    match core.lease(worker, now).unwrap() {
        LeaseOutcome::Shard {
            lease_id,
            layer,
            prize_ranks,
        } => (lease_id, layer, prize_ranks),
        other => panic!("no shard to lease: {other:?}"),
    }
}

/// Leases a shard for `worker` (there must be one) and solves it honestly.
pub fn lease_and_solve(
    core: &Coordinator,
    worker: Caller,
    now: Instant,
) -> (LeaseId, u8, Vec<u32>, Vec<Submitted>) {
    let (lease_id, layer, prize_ranks) = lease_shard(core, worker, now);
    let slices = solve_shard(core, layer, &prize_ranks);
    (lease_id, layer, prize_ranks, slices)
}

/// An honest worker solves every layer below `layer` (and leases nothing of it).
pub fn solve_layers_below(core: &Coordinator, layer: u8, now: Instant) {
    let setup = core
        .hello(gops_proto::PROTOCOL_VERSION, "setup", 1, None)
        .unwrap();
    loop {
        let (lease_id, k, ranks) = lease_shard(core, setup, now);
        if k == layer {
            core.release(setup, lease_id).unwrap();
            return;
        }
        core.submit(setup, lease_id, solve_shard(core, k, &ranks), now)
            .unwrap();
    }
}

/// Runs honest virtual workers until the run is finished.
pub fn run_to_the_end(core: &Coordinator, worker: Caller, now: Instant) {
    for _ in 0..10_000 {
        match core.lease(worker, now).unwrap() {
            LeaseOutcome::Finished => return,
            LeaseOutcome::Wait(_) => panic!("a single worker never waits"),
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => {
                let slices = solve_shard(core, layer, &prize_ranks);
                core.submit(worker, lease_id, slices, now).unwrap();
            }
        }
    }
    panic!("the run did not finish");
}

pub fn checksums(core: &Coordinator) -> Vec<String> {
    (1..=core.n())
        .map(|k| core.store().layer(k).unwrap().unwrap().checksum)
        .collect()
}

/// The checksums of the game solved in memory, without the coordinator.
pub fn reference_checksums(n: u8) -> Vec<String> {
    InMemorySolution::solve(n, Objective::Points)
        .unwrap()
        .checksums()
}

/// `slices` with the last value of the last slice one ulp off, its digest consistent.
pub fn with_one_value_altered(n: u8, layer: u8, mut slices: Vec<Submitted>) -> Vec<Submitted> {
    let victim = slices.last_mut().unwrap();
    let mut slice = Slice::decode_for(
        n,
        Objective::Points,
        layer,
        victim.prize_rank,
        &victim.bytes.body,
    )
    .unwrap();
    let last = slice.values.len() - 1;
    slice.values[last] = f64::from_bits(slice.values[last].to_bits() + 1);
    victim.bytes.body = slice.encode();
    victim.bytes.digest = digest_bytes(&victim.bytes.body);
    slices
}

pub fn replicated(db: &std::path::Path, n: u8) -> Coordinator {
    with_config(
        db,
        n,
        Objective::Points,
        CoordinatorConfig {
            verify_fraction: 0.0,
            verify_mode: gops_coordinator::config::VerifyMode::Replicate,
            ..CoordinatorConfig::default()
        },
    )
}

/// Workers taking turns, each solving honestly what it leases, until the run is done.
pub fn take_turns(core: &Coordinator, workers: &[Caller], now: Instant) {
    for step in 0..100_000 {
        let w = workers[step % workers.len()];
        match core.lease(w, now).unwrap() {
            LeaseOutcome::Finished => return,
            LeaseOutcome::Wait(_) => {}
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => {
                let slices = solve_shard(core, layer, &prize_ranks);
                core.submit(w, lease_id, slices, now).unwrap();
            }
        }
    }
    panic!("the run did not finish");
}
