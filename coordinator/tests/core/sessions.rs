//! Sessions and standing: wrong keys, bans that end every lease, hello floods, a token's
//! share of the registry.

use crate::support::*;

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
        gops_coordinator::cluster::registry::MAX_SESSIONS_PER_CREDENTIAL
    );
    // the newest are kept
    assert!(known(own.last().unwrap()));
    assert!(!known(&own[0]));
}
