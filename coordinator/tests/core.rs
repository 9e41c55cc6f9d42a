//! The coordinator's logic driven directly, with virtual workers and a virtual clock:
//! validation, idempotence, expiry and restart, without a network.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gops_common::checksum::digest_bytes;
use gops_common::engine::{LayerEngine, SolvedSlice, terminal_slice};
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::{Slice, UNREACHABLE};
use gops_common::solution::InMemorySolution;
use gops_coordinator::checks::{Rejection, Submitted};
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig, CoreError, LeaseOutcome};
use gops_coordinator::observer::Silent;
use gops_coordinator::registry::Credential;
use gops_db::store::Store;
use gops_proto::ids::{Caller, LeaseId, SessionKey, WorkerId};

const LEASE: Duration = Duration::from_millis(50);

fn coordinator(db: &std::path::Path, n: u8, verify_fraction: f64) -> Coordinator {
    coordinator_of(db, n, Objective::Points, verify_fraction)
}

fn coordinator_of(
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

fn with_config(
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
fn solve_shard(core: &Coordinator, layer: u8, ranks: &[u32]) -> Vec<Submitted> {
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

fn to_submitted(layer: u8, solved: SolvedSlice) -> Submitted {
    Submitted::solved(layer, &solved)
}

/// Leases a shard for `worker`: (lease id, layer, prize ranks); there must be one.
fn lease_shard(core: &Coordinator, worker: Caller, now: Instant) -> (LeaseId, u8, Vec<u32>) {
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
fn lease_and_solve(
    core: &Coordinator,
    worker: Caller,
    now: Instant,
) -> (LeaseId, u8, Vec<u32>, Vec<Submitted>) {
    let (lease_id, layer, prize_ranks) = lease_shard(core, worker, now);
    let slices = solve_shard(core, layer, &prize_ranks);
    (lease_id, layer, prize_ranks, slices)
}

/// An honest worker solves every layer below `layer` (and leases nothing of it).
fn solve_layers_below(core: &Coordinator, layer: u8, now: Instant) {
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
fn run_to_the_end(core: &Coordinator, worker: Caller, now: Instant) {
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

fn checksums(core: &Coordinator) -> Vec<String> {
    (1..=core.n())
        .map(|k| core.store().layer(k).unwrap().unwrap().checksum)
        .collect()
}

/// The checksums of the game solved in memory, without the coordinator.
fn reference_checksums(n: u8) -> Vec<String> {
    InMemorySolution::solve(n, Objective::Points)
        .unwrap()
        .checksums()
}

#[test]
fn virtual_workers_reach_the_single_process_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 6, 0.05);
    let worker = core
        .hello(gops_proto::PROTOCOL_VERSION, "v", 1, None)
        .unwrap();
    run_to_the_end(&core, worker, Instant::now());
    assert!(core.is_finished());
    assert_eq!(checksums(&core), reference_checksums(6));
}

#[test]
fn a_wrong_value_is_rejected_and_the_shard_leased_again() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 1.0);
    let now = Instant::now();
    let cheat = core
        .hello(gops_proto::PROTOCOL_VERSION, "cheat", 1, None)
        .unwrap();
    let honest = core
        .hello(gops_proto::PROTOCOL_VERSION, "honest", 1, None)
        .unwrap();
    // finish layers 1 and 2 honestly, then cheat on a shard of layer 3
    loop {
        let (lease_id, layer, prize_ranks) = lease_shard(&core, honest, now);
        if layer == 3 {
            core.release(honest, lease_id).unwrap();
            break;
        }
        core.submit(
            honest,
            lease_id,
            solve_shard(&core, layer, &prize_ranks),
            now,
        )
        .unwrap();
    }
    let (lease_id, layer, prize_ranks, slices) = lease_and_solve(&core, cheat, now);
    // one value off by one ulp, with a digest that matches the forged bytes
    let slices = with_one_value_altered(5, layer, slices);
    let stored_before = core.store().stored_count(layer).unwrap();
    let err = core.submit(cheat, lease_id, slices, now).unwrap_err();
    assert!(
        matches!(err, CoreError::Rejected(Rejection::ValueMismatch { .. })),
        "{err}"
    );
    assert_eq!(
        core.store().stored_count(layer).unwrap(),
        stored_before,
        "nothing stored"
    );
    let status = core.status(now).unwrap();
    assert_eq!(status.rejected_submissions, 1);
    assert_eq!(
        status
            .workers
            .iter()
            .find(|w| w.id == cheat.worker.0)
            .unwrap()
            .rejected,
        1
    );
    // a worker rejected again and again gets no more shards
    for _ in 1..3 {
        let (lease_id, _, _, mut bad) = lease_and_solve(&core, cheat, now);
        bad[0].bytes.digest[0] ^= 1;
        assert!(core.submit(cheat, lease_id, bad, now).is_err());
    }
    assert!(matches!(
        core.lease(cheat, now),
        Err(CoreError::Banned(_, 3))
    ));
    // the shard is leased again, and redone honestly
    let (lease_id, _, again) = lease_shard(&core, honest, now);
    assert_eq!(again, prize_ranks);
    let outcome = core
        .submit(honest, lease_id, solve_shard(&core, layer, &again), now)
        .unwrap();
    assert_eq!(outcome.stored as usize, again.len());
    run_to_the_end(&core, honest, now);
    assert_eq!(checksums(&core), reference_checksums(5));
}

/// Whether a rejection is the one a damaged submission should get.
type IsExpected = fn(&Rejection) -> bool;

#[test]
fn damaged_submissions_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 4, 0.0);
    let now = Instant::now();
    let w = core
        .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
        .unwrap();
    let (lease_id, layer, prize_ranks) = lease_shard(&core, w, now);
    let good = solve_shard(&core, layer, &prize_ranks);
    let first = good[0].prize_rank;
    let mut cases: Vec<(Vec<Submitted>, IsExpected)> = Vec::new();
    let mut digest = good.clone();
    digest[0].bytes.digest[0] ^= 1;
    cases.push((digest, |r| matches!(r, Rejection::DigestMismatch { .. })));
    let mut short = good.clone();
    let cut = short[0].bytes.body.len() - 8;
    short[0].bytes.body.truncate(cut);
    short[0].bytes.digest = digest_bytes(&short[0].bytes.body);
    cases.push((
        short,
        |r| matches!(r, Rejection::Malformed { why, .. } if why.contains("end early")),
    ));
    let mut gap = good.clone();
    gap[0].bytes.max_gap = 1.0;
    cases.push((
        gap,
        |r| matches!(r, Rejection::GapOverTolerance { gap, .. } if *gap == 1.0),
    ));
    let mut nan = good.clone();
    nan[0].bytes.max_gap = f64::NAN;
    cases.push((
        nan,
        |r| matches!(r, Rejection::GapOverTolerance { gap, .. } if gap.is_nan()),
    ));
    let mut layer_off = good.clone();
    layer_off[0].layer = 3;
    cases.push((layer_off, |r| {
        *r == Rejection::WrongLayer { got: 3, open: 1 }
    }));
    let mut rank_off = good.clone();
    rank_off[0].prize_rank = 99;
    cases.push((rank_off, |r| {
        *r == Rejection::NoSuchSlice { layer: 1, rank: 99 }
    }));
    let mut twice = good.clone();
    twice.push(good[0].clone());
    cases.push((twice, |r| matches!(r, Rejection::Repeated { .. })));
    core.release(w, lease_id).unwrap();
    for (slices, expected) in cases {
        // a fresh session for each: three rejections ban one
        let w = core
            .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
            .unwrap();
        let (lease_id, _, ranks) = lease_shard(&core, w, now);
        assert_eq!(ranks, prize_ranks);
        let err = core.submit(w, lease_id, slices, now).unwrap_err();
        assert!(
            matches!(&err, CoreError::Rejected(why) if expected(why)),
            "{err} (slice {first})"
        );
    }
    assert_eq!(core.store().stored_count(1).unwrap(), 0);
    assert!(matches!(
        core.lease(
            Caller {
                worker: WorkerId(999),
                key: w.key
            },
            now
        ),
        Err(CoreError::UnknownWorker(WorkerId(999)))
    ));
    assert!(matches!(
        core.hello(99, "old", 1, None),
        Err(CoreError::Version { got: 99, .. })
    ));
    assert!(matches!(
        core.check_fetch(2, &[0]),
        Err(CoreError::NotReady(2))
    ));
    assert!(matches!(
        core.check_fetch(9, &[0]),
        Err(CoreError::BadRequest(_))
    ));
}

#[test]
fn repeated_late_and_expired_submissions_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 0.1);
    let t0 = Instant::now();
    let slow = core
        .hello(gops_proto::PROTOCOL_VERSION, "slow", 1, None)
        .unwrap();
    let fast = core
        .hello(gops_proto::PROTOCOL_VERSION, "fast", 1, None)
        .unwrap();
    let (slow_lease, layer, prize_ranks) = lease_shard(&core, slow, t0);
    let slices = solve_shard(&core, layer, &prize_ranks);
    // the slow worker's lease expires and the fast one takes the shard over
    let later = t0 + LEASE * 3;
    let (fast_lease, _, same) = lease_shard(&core, fast, later);
    assert_eq!(same, prize_ranks);
    assert!(
        !core.heartbeat(slow, slow_lease, later).unwrap(),
        "the slow lease is gone"
    );
    let first = core
        .submit(fast, fast_lease, slices.clone(), later)
        .unwrap();
    assert_eq!(first.stored as usize, slices.len());
    // what the run records, without the size of the db's files (sled writes its log
    // in the background)
    let recorded = |core: &Coordinator| {
        let mut run = core.status(later).unwrap().run;
        run.db_bytes = 0;
        (core.store().stored_count(layer).unwrap(), run)
    };
    let snapshot = recorded(&core);
    // the late submission of the expired lease, then a plain repeat: duplicates only
    let late = core
        .submit(slow, slow_lease, slices.clone(), later)
        .unwrap();
    assert_eq!((late.stored, late.duplicates as usize), (0, slices.len()));
    let again = core
        .submit(fast, fast_lease, slices.clone(), later)
        .unwrap();
    assert_eq!((again.stored, again.duplicates as usize), (0, slices.len()));
    assert_eq!(recorded(&core), snapshot);
    // after the run is complete, a submission is late too
    run_to_the_end(&core, fast, later);
    let sums = checksums(&core);
    let after = core.submit(slow, slow_lease, slices, later).unwrap();
    assert_eq!(after.stored, 0);
    assert_eq!(checksums(&core), sums);
}

#[test]
fn a_restarted_coordinator_resumes_without_redoing_stored_slices() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let now = Instant::now();
    let stored_before;
    {
        let core = coordinator(&db, 6, 0.05);
        let w = core
            .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
            .unwrap();
        // solve until layer 4 is part done, then "crash" (drop without finishing)
        loop {
            let (lease_id, layer, prize_ranks) = lease_shard(&core, w, now);
            core.submit(w, lease_id, solve_shard(&core, layer, &prize_ranks), now)
                .unwrap();
            if layer == 4 {
                break;
            }
        }
        stored_before = core.store().stored_ranks(4).unwrap();
        assert!(!stored_before.is_empty() && stored_before.len() < 15);
    }
    let core = coordinator(&db, 6, 0.05);
    let w = core
        .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
        .unwrap();
    let mut leased_layer4 = Vec::new();
    loop {
        match core.lease(w, now).unwrap() {
            LeaseOutcome::Finished => break,
            LeaseOutcome::Wait(_) => panic!(),
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => {
                if layer == 4 {
                    leased_layer4.extend_from_slice(&prize_ranks);
                }
                core.submit(w, lease_id, solve_shard(&core, layer, &prize_ranks), now)
                    .unwrap();
            }
        }
    }
    assert!(
        leased_layer4.iter().all(|r| !stored_before.contains(r)),
        "a stored slice was leased again"
    );
    assert_eq!(leased_layer4.len() + stored_before.len(), 15);
    assert_eq!(checksums(&core), reference_checksums(6));
}

#[test]
fn an_understated_certificate_gap_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 1.0);
    let now = Instant::now();
    let w = core
        .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
        .unwrap();
    // honest shards until one of a layer with mixed equilibria has a slice whose games
    // have a non-zero gap
    for _ in 0..1_000 {
        let (lease_id, _layer, _ranks, mut slices) = lease_and_solve(&core, w, now);
        let Some(i) = slices.iter().position(|s| s.bytes.max_gap > 0.0) else {
            core.submit(w, lease_id, slices, now).unwrap();
            continue;
        };
        let honest = slices[i].bytes.max_gap;
        slices[i].bytes.max_gap = 0.0;
        let err = core.submit(w, lease_id, slices, now).unwrap_err();
        assert!(
            matches!(
                err,
                CoreError::Rejected(Rejection::UnderstatedGap { reported, .. }) if reported == 0.0
            ),
            "{err} (honest gap {honest:e})"
        );
        return;
    }
    panic!("no slice with a non-zero gap in the whole run");
}

#[test]
fn a_call_with_a_wrong_session_key_is_refused_and_harms_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 1.0);
    let now = Instant::now();
    let victim = core
        .hello(gops_proto::PROTOCOL_VERSION, "victim", 1, None)
        .unwrap();
    let (lease_id, layer, ranks, slices) = lease_and_solve(&core, victim, now);
    let forged = Caller {
        worker: victim.worker,
        key: SessionKey([0xAA; 32]),
    };
    let mut garbage = slices.clone();
    garbage[0].bytes.digest[0] ^= 1;
    for _ in 0..5 {
        let err = core
            .submit(forged, lease_id, garbage.clone(), now)
            .unwrap_err();
        assert!(
            matches!(err, CoreError::WrongSession(w) if w == victim.worker),
            "{err}"
        );
    }
    assert!(matches!(
        core.release(forged, lease_id),
        Err(CoreError::WrongSession(_))
    ));
    assert!(matches!(
        core.lease(forged, now),
        Err(CoreError::WrongSession(_))
    ));
    assert!(matches!(
        core.heartbeat(forged, lease_id, now),
        Err(CoreError::WrongSession(_))
    ));
    let status = core.status(now).unwrap();
    assert_eq!(status.refused_calls, 8);
    assert_eq!(
        status.rejected_submissions, 0,
        "nothing counted against the victim"
    );
    // the victim's lease is still its own, and its work is stored
    assert!(core.heartbeat(victim, lease_id, now).unwrap());
    let outcome = core.submit(victim, lease_id, slices, now).unwrap();
    assert_eq!(outcome.stored as usize, ranks.len());
    assert!(core.store().stored_count(layer).unwrap() >= ranks.len());
}

#[test]
fn a_worker_that_leaves_gives_back_its_leases_and_is_no_longer_live() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 1.0);
    let now = Instant::now();
    let leaving = core
        .hello(gops_proto::PROTOCOL_VERSION, "leaving", 1, None)
        .unwrap();
    let staying = core
        .hello(gops_proto::PROTOCOL_VERSION, "staying", 1, None)
        .unwrap();
    lease_shard(&core, leaving, now);
    lease_shard(&core, staying, now);
    let status = core.status(now).unwrap();
    assert_eq!(status.workers_registered, 2);
    // another session's key cannot make it leave
    let forged = Caller {
        worker: leaving.worker,
        key: SessionKey([0xAA; 32]),
    };
    assert!(matches!(
        core.leave(forged),
        Err(CoreError::WrongSession(_))
    ));
    core.leave(leaving).unwrap();
    let status = core.status(now).unwrap();
    assert_eq!(status.workers_registered, 1);
    let shards = status.shards.expect("a layer is open");
    assert_eq!(shards.leased, 1, "only the staying worker's shard is out");
    assert_eq!(status.workers.len(), 1);
    // the session is gone: its next call is from an unknown worker
    assert!(matches!(
        core.lease(leaving, now),
        Err(CoreError::UnknownWorker(_))
    ));
}

#[test]
fn slices_fetched_and_located_are_counted_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 4, 0.0);
    let now = Instant::now();
    solve_layers_below(&core, 3, now);
    let fetched = core.fetch_one(2, 1).unwrap();
    let located = core.locate(2, &[0, 1, 2]).unwrap();
    assert!(located.iter().all(Option::is_some));
    let load = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    let traffic = core.slice_traffic();
    assert_eq!(load(&traffic.fetched), 1);
    assert_eq!(load(&traffic.fetched_bytes), fetched.body.len() as u64);
    assert_eq!(load(&traffic.located), 3);
    let metrics = gops_coordinator::metrics::render(&core);
    assert!(metrics.contains("gops_slices_fetched 1"), "{metrics}");
    assert!(metrics.contains("gops_slices_located 3"), "{metrics}");
}

#[test]
fn results_are_accepted_only_under_a_lease_of_the_submitter() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 0.0);
    let now = Instant::now();
    let a = core
        .hello(gops_proto::PROTOCOL_VERSION, "a", 1, None)
        .unwrap();
    let b = core
        .hello(gops_proto::PROTOCOL_VERSION, "b", 1, None)
        .unwrap();
    let (a_lease, _, _, a_slices) = lease_and_solve(&core, a, now);
    let (b_lease, _, _, b_slices) = lease_and_solve(&core, b, now);
    // b hands in a's shard under a's lease, then under its own
    let err = core.submit(b, a_lease, a_slices.clone(), now).unwrap_err();
    assert!(
        matches!(err, CoreError::Rejected(Rejection::NotYourLease { lease }) if lease == a_lease.0),
        "{err}"
    );
    let err = core.submit(b, b_lease, a_slices.clone(), now).unwrap_err();
    assert!(
        matches!(err, CoreError::Rejected(Rejection::OutsideLease { .. })),
        "{err}"
    );
    let err = core.submit(b, LeaseId(12345), b_slices, now).unwrap_err();
    assert!(
        matches!(err, CoreError::Rejected(Rejection::NotYourLease { .. })),
        "{err}"
    );
    // a's lease was not disturbed by any of it
    assert!(core.heartbeat(a, a_lease, now).unwrap());
    assert_eq!(
        core.submit(a, a_lease, a_slices.clone(), now)
            .unwrap()
            .stored as usize,
        a_slices.len()
    );
    // and b, at three rejections, is banned
    assert!(matches!(core.lease(b, now), Err(CoreError::Banned(_, 3))));
}

/// `slices` with the last value of the last slice one ulp off, its digest consistent.
fn with_one_value_altered(n: u8, layer: u8, mut slices: Vec<Submitted>) -> Vec<Submitted> {
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

#[test]
fn a_wrong_slice_that_slipped_through_is_replaced_when_a_copy_disagrees() {
    let dir = tempfile::tempdir().unwrap();
    // no state re-solved: an altered value slips through the cheap checks
    let core = coordinator(&dir.path().join("db"), 6, 0.0);
    let mut now = Instant::now();
    solve_layers_below(&core, 5, now);
    // a liar leases a shard, its lease expires, an honest worker takes the shard over,
    // and the liar hands in its altered copy first (tried again while the sample catches it)
    let mut slipped = None;
    for _ in 0..20 {
        let liar = core
            .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
            .unwrap();
        let (liar_lease, layer, ranks, honest_slices) = lease_and_solve(&core, liar, now);
        now += LEASE * 3;
        let honest = core
            .hello(gops_proto::PROTOCOL_VERSION, "honest", 1, None)
            .unwrap();
        let (honest_lease, _, same) = lease_shard(&core, honest, now);
        assert_eq!(same, ranks);
        let lie = with_one_value_altered(6, layer, honest_slices.clone());
        match core.submit(liar, liar_lease, lie.clone(), now) {
            Ok(outcome) => {
                assert_eq!(outcome.stored as usize, ranks.len());
                slipped = Some((liar, honest, honest_lease, layer, lie, honest_slices));
                break;
            }
            Err(CoreError::Rejected(Rejection::ValueMismatch { .. })) => {
                core.release(honest, honest_lease).unwrap();
            }
            Err(e) => panic!("{e}"),
        }
    }
    let (liar, honest, honest_lease, layer, lie, honest_slices) =
        slipped.expect("one altered value of hundreds was caught 20 times in a row");
    let rank = lie.last().unwrap().prize_rank;
    assert_eq!(
        core.store()
            .require_slice_bytes(layer, rank)
            .unwrap()
            .digest,
        lie.last().unwrap().bytes.digest,
        "the lie is stored"
    );
    // the honest copy disagrees: both are re-solved in full, and the lie replaced
    let outcome = core
        .submit(honest, honest_lease, honest_slices.clone(), now)
        .unwrap();
    assert_eq!(outcome.stored, 1, "the replaced slice");
    let status = core.status(now).unwrap();
    assert_eq!(status.disagreements, 1);
    assert_eq!(
        core.store()
            .require_slice_bytes(layer, rank)
            .unwrap()
            .digest,
        honest_slices.last().unwrap().bytes.digest
    );
    let liar_status = status
        .workers
        .iter()
        .find(|w| w.id == liar.worker.0)
        .unwrap();
    assert_eq!(liar_status.rejected, 1, "the liar is blamed");
    run_to_the_end(&core, honest, now);
    assert_eq!(checksums(&core), reference_checksums(6));
}

#[test]
fn with_a_share_of_the_slices_checked_a_lie_is_caught_in_that_share() {
    let dir = tempfile::tempdir().unwrap();
    // every state of a chosen slice re-solved, half the slices chosen; one slice a shard,
    // so the layer's 35 shards outlast any run of lies that slip through
    let core = with_config(
        &dir.path().join("db"),
        7,
        Objective::Points,
        CoordinatorConfig {
            verify_fraction: 1.0,
            verify_slices: 0.5,
            target_games_per_shard: 1,
            ..CoordinatorConfig::default()
        },
    );
    let now = Instant::now();
    solve_layers_below(&core, 4, now);
    let (mut caught, mut slipped) = (0, 0);
    // both outcomes within 30 tries, but for a chance of 2 in a billion
    for _ in 0..30 {
        if caught > 0 && slipped > 0 {
            break;
        }
        let liar = core
            .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
            .unwrap();
        let (lease, layer, ranks, slices) = lease_and_solve(&core, liar, now);
        assert_eq!((layer, ranks.len()), (4, 1));
        // the cheap checks still see every slice
        let mut damaged = slices.clone();
        damaged[0].bytes.digest[0] ^= 1;
        let err = core.submit(liar, lease, damaged, now).unwrap_err();
        assert!(
            matches!(err, CoreError::Rejected(Rejection::DigestMismatch { .. })),
            "{err}"
        );
        let liar = core
            .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
            .unwrap();
        let (lease, layer, ranks) = lease_shard(&core, liar, now);
        let lie = with_one_value_altered(7, layer, solve_shard(&core, layer, &ranks));
        match core.submit(liar, lease, lie, now) {
            Ok(outcome) => {
                assert_eq!(outcome.stored as usize, ranks.len());
                slipped += 1;
            }
            Err(CoreError::Rejected(Rejection::ValueMismatch { .. })) => caught += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        caught > 0 && slipped > 0,
        "caught {caught}, slipped {slipped}"
    );
}

#[test]
fn copies_handed_in_at_the_same_moment_are_stored_once_and_a_racing_lie_loses() {
    let dir = tempfile::tempdir().unwrap();
    // no state re-solved, so only the full re-check of a dispute catches the lie
    let core = coordinator(&dir.path().join("db"), 6, 0.0);
    let mut now = Instant::now();
    solve_layers_below(&core, 4, now);
    let mut shards = 0;
    while core.position().0 == Some(4) && shards < 12 {
        shards += 1;
        let first = core
            .hello(gops_proto::PROTOCOL_VERSION, "first", 1, None)
            .unwrap();
        let Ok(LeaseOutcome::Shard {
            lease_id: first_lease,
            layer: 4,
            prize_ranks: ranks,
        }) = core.lease(first, now)
        else {
            break;
        };
        let honest = solve_shard(&core, 4, &ranks);
        now += LEASE * 3;
        let second = core
            .hello(gops_proto::PROTOCOL_VERSION, "second", 1, None)
            .unwrap();
        let (second_lease, _, same) = lease_shard(&core, second, now);
        assert_eq!(same, ranks);
        // odd shards: two honest copies and a repeat at once; even: a lie against the truth
        let lie = with_one_value_altered(6, 4, honest.clone());
        let second_copy = if shards % 2 == 1 { honest.clone() } else { lie };
        let barrier = std::sync::Barrier::new(3);
        let (a, b, c) = std::thread::scope(|scope| {
            let a = scope.spawn(|| {
                barrier.wait();
                core.submit(first, first_lease, honest.clone(), now)
            });
            let b = scope.spawn(|| {
                barrier.wait();
                core.submit(second, second_lease, second_copy.clone(), now)
            });
            let c = scope.spawn(|| {
                barrier.wait();
                core.submit(first, first_lease, honest.clone(), now)
            });
            (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
        });
        let (a, c) = (a.unwrap(), c.unwrap());
        if shards % 2 == 1 {
            let b = b.unwrap();
            // every slice stored by exactly one of the three
            assert_eq!(
                (a.stored + b.stored + c.stored) as usize,
                ranks.len(),
                "{a:?} {b:?} {c:?}"
            );
        } else if let Err(e) = &b {
            assert!(matches!(e, CoreError::Rejected(_)), "{e}");
        }
        for (slice, rank) in honest.iter().zip(&ranks) {
            assert_eq!(
                core.store().require_slice_bytes(4, *rank).unwrap().digest,
                slice.bytes.digest,
                "shard {shards}: the true copy of slice {rank} is stored"
            );
        }
    }
    assert!(shards >= 4, "{shards} shards raced");
    let last = core
        .hello(gops_proto::PROTOCOL_VERSION, "last", 1, None)
        .unwrap();
    run_to_the_end(&core, last, now + LEASE * 3);
    assert_eq!(checksums(&core), reference_checksums(6));
}

#[test]
fn a_wider_window_than_needed_is_not_canonical() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator_of(&dir.path().join("db"), 6, Objective::Win, 0.0);
    let now = Instant::now();
    let w = core
        .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
        .unwrap();
    for _ in 0..1_000 {
        let (lease_id, layer, _, mut slices) = lease_and_solve(&core, w, now);
        // a slice with a pattern that has a reachable -1 to its left can be widened
        let widenable = |slice: &Slice, w: &gops_common::slice::Window| {
            let reach = slice.reach.expect("a win slice knows its reach");
            w.len > 0 && (0..usize::from(w.lo)).any(|p| reach.contains(p))
        };
        let found = slices.iter().position(|s| {
            let slice =
                Slice::decode_for(6, Objective::Win, layer, s.prize_rank, &s.bytes.body).unwrap();
            let windows = slice.windows.as_ref().unwrap();
            windows.iter().any(|w| widenable(&slice, w))
        });
        let Some(i) = found else {
            core.submit(w, lease_id, slices, now).unwrap();
            continue;
        };
        let s = &mut slices[i];
        let slice =
            Slice::decode_for(6, Objective::Win, layer, s.prize_rank, &s.bytes.body).unwrap();
        let mut windows = slice.windows.clone().unwrap();
        let mut values = Vec::new();
        let mut widened = false;
        let reach = slice.reach.expect("a win slice knows its reach");
        for w in windows.iter_mut() {
            let old = &slice.values[w.start as usize..w.start as usize + usize::from(w.len)];
            w.start = values.len() as u32;
            if !widened && widenable(&slice, w) {
                // down to the next position that can occur, which holds a -1
                let lo = (0..usize::from(w.lo)).rev().find(|&p| reach.contains(p));
                let extra = usize::from(w.lo) - lo.expect("widenable");
                w.lo -= extra as u16;
                w.len += extra as u16;
                values.push(-1.0);
                values.extend(std::iter::repeat_n(UNREACHABLE, extra - 1));
                widened = true;
            }
            values.extend_from_slice(old);
        }
        let wide = Slice {
            diff_range: slice.diff_range,
            values,
            windows: Some(windows),
            reach: Some(reach),
        };
        s.bytes.body = wide.encode();
        s.bytes.digest = digest_bytes(&s.bytes.body);
        let err = core.submit(w, lease_id, slices, now).unwrap_err();
        assert!(
            matches!(err, CoreError::Rejected(Rejection::NonCanonical { .. })),
            "{err}"
        );
        return;
    }
    panic!("no windowed pattern to widen in the whole run");
}

fn replicated(db: &std::path::Path, n: u8) -> Coordinator {
    with_config(
        db,
        n,
        Objective::Points,
        CoordinatorConfig {
            verify_fraction: 0.0,
            replicate: true,
            ..CoordinatorConfig::default()
        },
    )
}

/// Workers taking turns, each solving honestly what it leases, until the run is done.
fn take_turns(core: &Coordinator, workers: &[Caller], now: Instant) {
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

#[test]
fn replicated_slices_are_stored_only_once_two_copies_agree() {
    let dir = tempfile::tempdir().unwrap();
    let core = replicated(&dir.path().join("db"), 5);
    let now = Instant::now();
    let a = core
        .hello(gops_proto::PROTOCOL_VERSION, "a", 1, None)
        .unwrap();
    let b = core
        .hello(gops_proto::PROTOCOL_VERSION, "b", 1, None)
        .unwrap();
    let (lease_id, layer, ranks, slices) = lease_and_solve(&core, a, now);
    let first = core.submit(a, lease_id, slices.clone(), now).unwrap();
    assert_eq!((first.stored, first.held as usize), (0, ranks.len()));
    assert_eq!(
        core.store().stored_count(layer).unwrap(),
        0,
        "one copy is not enough"
    );
    // a never gets its own shard back; b does, and its copy confirms a's
    let (a_next, _, a_ranks) = lease_shard(&core, a, now);
    assert_ne!(a_ranks, ranks);
    core.release(a, a_next).unwrap();
    let (b_lease, _, b_ranks) = lease_shard(&core, b, now);
    assert_eq!(b_ranks, ranks);
    let second = core.submit(b, b_lease, slices, now).unwrap();
    assert_eq!(second.stored as usize, ranks.len());
    assert_eq!(core.store().stored_count(layer).unwrap(), ranks.len());
    take_turns(&core, &[a, b], now);
    assert_eq!(checksums(&core), reference_checksums(5));
    assert_eq!(core.status(now).unwrap().disagreements, 0);
}

#[test]
fn under_replication_one_altered_value_is_caught_and_its_author_blamed() {
    let dir = tempfile::tempdir().unwrap();
    let core = replicated(&dir.path().join("db"), 6);
    let now = Instant::now();
    let a = core
        .hello(gops_proto::PROTOCOL_VERSION, "a", 1, None)
        .unwrap();
    let honest = core
        .hello(gops_proto::PROTOCOL_VERSION, "honest", 1, None)
        .unwrap();
    // layers 1 to 4 honestly, by two workers in turns
    let mut step = 0;
    while core.position().0 != Some(5) {
        let w = [a, honest][step % 2];
        step += 1;
        if let LeaseOutcome::Shard {
            lease_id,
            layer,
            prize_ranks,
        } = core.lease(w, now).unwrap()
        {
            let slices = solve_shard(&core, layer, &prize_ranks);
            core.submit(w, lease_id, slices, now).unwrap();
        }
    }
    // a liar's altered copy of a layer 5 shard comes first (a fresh liar while the one
    // sampled state happens to catch it)
    let mut lie = None;
    for _ in 0..20 {
        let liar = core
            .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
            .unwrap();
        let (lease_id, layer, ranks) = lease_shard(&core, liar, now);
        let altered = with_one_value_altered(6, layer, solve_shard(&core, layer, &ranks));
        match core.submit(liar, lease_id, altered, now) {
            Ok(held) => {
                assert_eq!(held.held as usize, ranks.len());
                lie = Some((liar, layer, ranks));
                break;
            }
            Err(CoreError::Rejected(Rejection::ValueMismatch { .. })) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let (liar, layer, ranks) = lie.expect("one altered value of hundreds was caught 20 times");
    let (honest_lease, _, same) = lease_shard(&core, honest, now);
    assert_eq!(same, ranks);
    let confirmed = core
        .submit(honest, honest_lease, solve_shard(&core, layer, &ranks), now)
        .unwrap();
    assert_eq!(confirmed.stored as usize, ranks.len());
    let status = core.status(now).unwrap();
    assert_eq!(status.disagreements, 1);
    let liar_status = status
        .workers
        .iter()
        .find(|w| w.id == liar.worker.0)
        .unwrap();
    assert_eq!(liar_status.rejected, 1);
    take_turns(&core, &[a, honest], now);
    assert_eq!(checksums(&core), reference_checksums(6));
}

#[test]
fn two_sessions_of_one_token_cannot_confirm_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let core = replicated(&dir.path().join("db"), 4);
    let now = Instant::now();
    let mine = Some(Credential(1));
    let first = core
        .hello(gops_proto::PROTOCOL_VERSION, "m1", 1, mine)
        .unwrap();
    let second = core
        .hello(gops_proto::PROTOCOL_VERSION, "m2", 1, mine)
        .unwrap();
    let other = core
        .hello(gops_proto::PROTOCOL_VERSION, "o", 1, Some(Credential(2)))
        .unwrap();
    let (lease_id, _, ranks, slices) = lease_and_solve(&core, first, now);
    core.submit(first, lease_id, slices, now).unwrap();
    let (l2, _, r2) = lease_shard(&core, second, now);
    assert_ne!(
        r2, ranks,
        "the same token's other session gets another shard"
    );
    core.release(second, l2).unwrap();
    let (_, _, r3) = lease_shard(&core, other, now);
    assert_eq!(r3, ranks);
}

#[test]
fn the_live_status_tells_what_each_worker_did_and_what_happened() {
    use gops_coordinator::events::EventKind;
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 0.05);
    let t0 = Instant::now();
    let before = core.live_status(t0).unwrap();
    assert!(before.events.is_empty() && before.cluster.workers.is_empty());
    assert_eq!(before.layer_games.len(), 5);
    assert_eq!(before.games_left, before.layer_games.iter().sum::<u64>());
    // nothing solved yet: no rate, so no estimate
    assert_eq!(before.cluster.eta_seconds, None);

    let lost = core
        .hello(gops_proto::PROTOCOL_VERSION, "lost", 1, None)
        .unwrap();
    let busy = core
        .hello(gops_proto::PROTOCOL_VERSION, "busy", 2, None)
        .unwrap();
    // `lost` takes a shard and is never heard from again; `busy` hands in a damaged copy
    // of one, then does the whole run
    let (_, _, lost_ranks) = lease_shard(&core, lost, t0);
    let later = t0 + LEASE * 3;
    let (lease_id, _, _, mut bad) = lease_and_solve(&core, busy, later);
    bad[0].bytes.digest[0] ^= 1;
    assert!(core.submit(busy, lease_id, bad, later).is_err());
    // the whole run, without the last lease call that would tell `busy` it is finished
    // (a worker told so exits and is no longer listed)
    while !core.is_finished() {
        let (lease_id, layer, ranks) = lease_shard(&core, busy, later);
        core.submit(busy, lease_id, solve_shard(&core, layer, &ranks), later)
            .unwrap();
    }

    let live = core.live_status(later).unwrap();
    let kinds: Vec<EventKind> = live.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::WorkerJoined,
            EventKind::WorkerJoined,
            EventKind::LeaseExpired,
            EventKind::SubmissionRejected,
            EventKind::LayerComplete,
            EventKind::LayerComplete,
            EventKind::LayerComplete,
            EventKind::LayerComplete,
            EventKind::LayerComplete,
            EventKind::RunComplete,
        ],
        "{:#?}",
        live.events
    );
    assert!(live.events[0].message.contains("\"lost\""));
    assert!(live.events[1].message.contains("2 threads"));
    assert!(live.events[2].message.contains("\"lost\""));
    assert!(live.events[3].message.contains("\"busy\""));
    assert!(live.events[4].message.contains("layer 1 complete"));
    assert!(live.events.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(live.events.iter().all(|e| e.unix_ms <= live.now_unix_ms));

    // `lost` fell silent (not listed); `busy` did everything
    assert_eq!(live.cluster.workers.len(), 1);
    let worker = &live.cluster.workers[0];
    assert_eq!((worker.name.as_str(), worker.rejected), ("busy", 1));
    let activity = worker.activity.as_ref().unwrap();
    let all_slices: usize = live.cluster.run.layers.iter().map(|l| l.slices).sum();
    assert_eq!(worker.slices as usize, all_slices);
    assert_eq!(activity.games, live.games_this_run);
    assert_eq!(live.games_this_run, live.layer_games.iter().sum::<u64>());
    assert!(activity.shards > 0 && activity.shards as usize <= all_slices);
    assert!(!lost_ranks.is_empty());
    assert_eq!(activity.seconds_since_heard, 0.0);
    assert!(activity.games_per_second > 0.0);
    // a complete run: nothing left
    assert_eq!((live.games_left, live.cluster.eta_seconds), (0, Some(0.0)));
    let json = serde_json::to_value(&live).unwrap();
    assert_eq!(json["workers"][0]["shards"], activity.shards);
    assert_eq!(json["events"][9]["kind"], "run_complete");
}

#[test]
fn a_ban_ends_every_lease_of_the_session_and_its_token() {
    let dir = tempfile::tempdir().unwrap();
    // a shard per prize set, so that a session may hold a second lease
    let store = Store::open_or_create(&dir.path().join("db"), 5, Objective::Points).unwrap();
    let config = CoordinatorConfig {
        lease: LEASE,
        min_shards: 10,
        min_games_per_shard: 1,
        verify_fraction: 1.0,
        ..CoordinatorConfig::default()
    };
    let core = Coordinator::new(store, config, Arc::new(Silent)).unwrap();
    let now = Instant::now();
    solve_layers_below(&core, 3, now);
    let v = gops_proto::PROTOCOL_VERSION;
    let cheat = core.hello(v, "cheat", 1, Some(Credential(3))).unwrap();
    let sibling = core.hello(v, "sibling", 1, Some(Credential(3))).unwrap();
    // the cheat's session holds a lease it keeps aside, its sibling session another
    let (kept, _, kept_ranks) = lease_shard(&core, cheat, now);
    let (held, _, held_ranks) = lease_shard(&core, sibling, now);
    for _ in 0..3 {
        let (lease_id, layer, _, slices) = lease_and_solve(&core, cheat, now);
        let slices = with_one_value_altered(5, layer, slices);
        assert!(core.submit(cheat, lease_id, slices, now).is_err());
    }
    // neither lease can be kept alive any more
    assert!(matches!(
        core.heartbeat(cheat, kept, now),
        Err(CoreError::Banned(..))
    ));
    assert!(matches!(
        core.heartbeat(sibling, held, now),
        Err(CoreError::Banned(..))
    ));
    // and both shards go to an honest worker at once, long before they would expire
    let honest = core.hello(v, "honest", 1, Some(Credential(4))).unwrap();
    let mut leased = Vec::new();
    for _ in 0..8 {
        match core.lease(honest, now).unwrap() {
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => {
                let slices = solve_shard(&core, layer, &prize_ranks);
                core.submit(honest, lease_id, slices, now).unwrap();
                leased.push(prize_ranks);
            }
            other => panic!("the honest worker waits: {other:?}"),
        }
        if leased.contains(&kept_ranks) && leased.contains(&held_ranks) {
            break;
        }
    }
    assert!(leased.contains(&kept_ranks), "{leased:?}");
    assert!(leased.contains(&held_ranks), "{leased:?}");
    run_to_the_end(&core, honest, now);
    assert_eq!(checksums(&core), reference_checksums(5));
}

#[test]
fn a_hello_flood_does_not_lock_out_a_new_worker() {
    let dir = tempfile::tempdir().unwrap();
    let config = CoordinatorConfig {
        max_sessions: 50,
        ..CoordinatorConfig::default()
    };
    let core = with_config(&dir.path().join("db"), 5, Objective::Points, config);
    let now = Instant::now();
    let v = gops_proto::PROTOCOL_VERSION;
    // a worker at work before the flood
    let busy = core.hello(v, "busy", 1, None).unwrap();
    let (busy_lease, _, _) = lease_shard(&core, busy, now);
    // 200 sessions that never lease, each kept "seen" by calls that make no progress
    let flood: Vec<Caller> = (0..200)
        .map(|i| core.hello(v, &format!("flood{i}"), 1, None).unwrap())
        .collect();
    for &session in &flood {
        let _ = core.heartbeat(session, LeaseId(0), now);
    }
    // the busy worker kept its session, and a newcomer gets in and gets work
    assert!(core.heartbeat(busy, busy_lease, now).unwrap());
    let newcomer = core.hello(v, "newcomer", 1, None).unwrap();
    let (lease_id, layer, ranks) = lease_shard(&core, newcomer, now);
    let slices = solve_shard(&core, layer, &ranks);
    assert!(core.submit(newcomer, lease_id, slices, now).unwrap().stored > 0);
}

#[test]
fn one_token_holds_at_most_its_share_of_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 0.0);
    let now = Instant::now();
    let v = gops_proto::PROTOCOL_VERSION;
    let mine = Some(Credential(7));
    let own: Vec<Caller> = (0..100)
        .map(|i| core.hello(v, &format!("own{i}"), 1, mine).unwrap())
        .collect();
    let known = |s: &Caller| {
        !matches!(
            core.heartbeat(*s, LeaseId(0), now),
            Err(CoreError::UnknownWorker(..))
        )
    };
    let alive = own.iter().filter(|s| known(s)).count();
    assert_eq!(
        alive,
        gops_coordinator::registry::MAX_SESSIONS_PER_CREDENTIAL
    );
    // the newest are kept
    assert!(known(own.last().unwrap()));
    assert!(!known(&own[0]));
}

#[test]
fn impossible_game_counts_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 0.0);
    let now = Instant::now();
    let liar = core
        .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
        .unwrap();
    for games in [u64::MAX, 0] {
        let (lease_id, _, _, mut slices) = lease_and_solve(&core, liar, now);
        slices[0].bytes.games = games;
        let err = core.submit(liar, lease_id, slices, now).unwrap_err();
        assert!(
            matches!(err, CoreError::Rejected(Rejection::ImpossibleGames { games: g, .. }) if g == games),
            "{err}"
        );
    }
    let status = core.status(now).unwrap();
    assert_eq!(status.rejected_submissions, 2);
    assert_eq!(status.games_per_second, 0.0);
}

#[test]
fn a_shard_that_fails_on_three_workers_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 5, 0.0);
    let now = Instant::now();
    let v = gops_proto::PROTOCOL_VERSION;
    let workers: Vec<Caller> = (0..3)
        .map(|i| core.hello(v, &format!("w{i}"), 1, None).unwrap())
        .collect();
    // each stores a shard first: only workers that did real work count
    for &w in &workers {
        let (lease_id, _, _, slices) = lease_and_solve(&core, w, now);
        core.submit(w, lease_id, slices, now).unwrap();
    }
    let newcomer = core.hello(v, "new", 1, None).unwrap();
    let (lease_id, layer, ranks) = lease_shard(&core, newcomer, now);
    core.release_failed(newcomer, lease_id, "matrix game not certified", now)
        .unwrap();
    for (i, &w) in workers.iter().enumerate() {
        assert_eq!(core.failure(), None, "after {i} counted failures");
        // the shard given back goes first
        let (lease_id, k, again) = lease_shard(&core, w, now);
        assert_eq!((k, &again), (layer, &ranks));
        core.release_failed(w, lease_id, "matrix game not certified", now)
            .unwrap();
    }
    let failure = core.failure().expect("the run stops");
    assert!(
        failure.contains(&format!("layer {layer}"))
            && failure.contains("3 parties")
            && failure.contains("matrix game not certified"),
        "{failure}"
    );
}

#[test]
fn a_finished_run_keeps_its_final_worker_table() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 4, 0.0);
    let now = Instant::now();
    let v = gops_proto::PROTOCOL_VERSION;
    let worker = core.hello(v, "finisher", 1, None).unwrap();
    let idle = core.hello(v, "idle", 1, None).unwrap();
    run_to_the_end(&core, worker, now);
    // both have been told the run is finished; long after, the table still lists the
    // one that did the work, with its totals
    assert!(matches!(core.lease(idle, now), Ok(LeaseOutcome::Finished)));
    let status = core.status(now + LEASE * 100).unwrap();
    let names: Vec<&str> = status.workers.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, vec!["finisher"]);
    let stored: u64 = status.workers.iter().map(|w| w.slices).sum();
    let all: usize = (1..=4)
        .map(|k| gops_common::prizes::prize_set_count(4, k))
        .sum();
    assert_eq!(stored, all as u64);
}
