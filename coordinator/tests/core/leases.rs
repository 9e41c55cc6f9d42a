//! Leases: idempotent and late hand-ins, workers that leave, results only under the
//! submitter's lease, a shard no worker gets past.

use crate::support::*;
use gops_coordinator::report::events::EventKind;

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
        matches!(err, CoreError::Rejected(Rejection::NotYourLease { lease }) if lease == a_lease),
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
    let gops_coordinator::cluster::RunFailure::ShardNoOneGetsPast {
        parties,
        layer: failed_layer,
        ref last,
        ..
    } = failure
    else {
        panic!("not the shard's failure: {failure}");
    };
    assert_eq!((parties, failed_layer), (3, layer));
    assert_eq!(last, "matrix game not certified");
    let text = failure.to_string();
    assert!(
        text.contains(&format!("layer {layer}")) && text.contains("3 parties"),
        "{text}"
    );
    // the status carries it as fields, also as `gops status --coordinator --json`
    // prints it, after the wire
    let status = core.status(now).unwrap();
    let wired =
        gops_coordinator::report::status::ClusterStatus::from_proto(status.to_proto()).unwrap();
    for status in [status, wired] {
        let json = serde_json::to_value(&status).unwrap();
        let detail = &json["failure_detail"];
        assert_eq!(detail["kind"], "shard_no_one_gets_past", "{json}");
        assert_eq!(detail["parties"], 3);
        assert_eq!(detail["layer"], u64::from(layer));
        assert_eq!(detail["last"], "matrix game not certified");
        assert_eq!(json["failure"], text.as_str());
    }
    // and its event is of its own kind, after the failures of the shard
    let kinds: Vec<EventKind> = core
        .live_status(now)
        .unwrap()
        .events
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds.last(), Some(&EventKind::RunStopped), "{kinds:?}");
    assert!(kinds.contains(&EventKind::ShardFailed), "{kinds:?}");
}
