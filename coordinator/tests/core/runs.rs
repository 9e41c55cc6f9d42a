//! Whole runs: virtual workers reach the single-process checksums, a restart resumes,
//! and the status tells what happened, during and after.

use crate::support::*;

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
    let metrics = gops_coordinator::report::metrics::render(&core);
    assert!(metrics.contains("gops_slices_fetched 1"), "{metrics}");
    assert!(metrics.contains("gops_slices_located 3"), "{metrics}");
}

#[test]
fn the_live_status_tells_what_each_worker_did_and_what_happened() {
    use gops_coordinator::report::events::EventKind;
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

#[test]
fn settings_out_of_range_are_refused_for_every_caller_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for (fraction, share, what) in [
        (
            1.5,
            1.0,
            "the verify fraction must be between 0 and 1, got 1.5",
        ),
        (
            -0.1,
            1.0,
            "the verify fraction must be between 0 and 1, got -0.1",
        ),
        (
            f64::NAN,
            1.0,
            "the verify fraction must be between 0 and 1, got NaN",
        ),
        (
            0.01,
            0.0,
            "the verify share must be above 0 and at most 1, got 0",
        ),
    ] {
        let store = Store::open_or_create(&db, 3, Objective::Points).unwrap();
        let config = CoordinatorConfig {
            verify_fraction: fraction,
            verify_slices: share,
            ..CoordinatorConfig::default()
        };
        let Err(e) = Coordinator::new(store, config, Arc::new(Silent)) else {
            panic!("{fraction} / {share} accepted");
        };
        assert!(matches!(e, CoreError::Config(_)), "{e}");
        assert_eq!(e.to_string(), format!("bad settings: {what}"));
    }
    // the store was left as it was: a good config opens it at layer 1, nothing stored
    let store = Store::open_or_create(&db, 3, Objective::Points).unwrap();
    let core = Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap();
    assert_eq!(core.position(), (Some(1), 0));
}
