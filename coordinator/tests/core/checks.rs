//! What a submission must pass: wrong values, damaged or non-canonical slices,
//! understated gaps, impossible game counts, lies that slipped through a sample.

use gops_coordinator::report::events::EventKind;

use crate::support::*;

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
fn a_full_recheck_refuses_a_wrong_gap_or_game_count() {
    // `win`: its games are bounded by a range (for `points` the cheap check knows the
    // exact count), and its gaps count the engine's probes, which a full re-solve repeats
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator_of(&dir.path().join("db"), 5, Objective::Win, 1.0);
    let now = Instant::now();
    let honest = core
        .hello(gops_proto::PROTOCOL_VERSION, "honest", 1, None)
        .unwrap();
    // a slice with a non-zero gap, and a game count below the most its shape allows
    let room = |layer: u8, s: &Submitted| {
        let slice = Slice::decode_for(5, Objective::Win, layer, s.prize_rank, &s.bytes.body);
        let most = *LayerEngine::new(5, layer, Objective::Win)
            .games_bounds(s.prize_rank, &slice.unwrap())
            .end();
        s.bytes.max_gap > 0.0 && s.bytes.games < most
    };
    for _ in 0..1_000 {
        let (lease_id, layer, _ranks, slices) = lease_and_solve(&core, honest, now);
        let Some(i) = slices.iter().position(|s| room(layer, s)) else {
            core.submit(honest, lease_id, slices, now).unwrap();
            continue;
        };
        core.release(honest, lease_id).unwrap();
        let gap = slices[i].bytes.max_gap;
        let games = slices[i].bytes.games;
        // understated, overstated (within the tolerance), and one game too many
        let lies: [fn(&mut Submitted); 3] = [
            |s| s.bytes.max_gap = 0.0,
            |s| s.bytes.max_gap *= 2.0,
            |s| s.bytes.games += 1,
        ];
        for lie in lies {
            let liar = core
                .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
                .unwrap();
            let (lease_id, _, _, mut copy) = lease_and_solve(&core, liar, now);
            assert_eq!(copy[i].bytes.claim(), slices[i].bytes.claim());
            lie(&mut copy[i]);
            let told = copy[i].bytes.clone();
            let err = core.submit(liar, lease_id, copy, now).unwrap_err();
            match err {
                CoreError::Rejected(Rejection::WrongGap {
                    reported,
                    recomputed,
                    ..
                }) => {
                    assert_eq!((reported, recomputed), (told.max_gap, gap));
                    assert_ne!(reported, gap);
                }
                CoreError::Rejected(Rejection::WrongGames {
                    reported,
                    recomputed,
                    ..
                }) => assert_eq!((reported, recomputed), (games + 1, games)),
                other => panic!("{other}"),
            }
        }
        assert_eq!(core.status(now).unwrap().rejected_submissions, 3);
        run_to_the_end(&core, honest, now);
        let reference = InMemorySolution::solve(5, Objective::Win).unwrap();
        assert_eq!(checksums(&core), reference.checksums());
        return;
    }
    panic!("no slice with a non-zero gap and room for another game in the whole run");
}

#[test]
fn a_sample_refuses_an_understated_certificate_gap() {
    let dir = tempfile::tempdir().unwrap();
    // half of each slice's states re-solved one by one
    let core = coordinator(&dir.path().join("db"), 5, 0.5);
    let now = Instant::now();
    let w = core
        .hello(gops_proto::PROTOCOL_VERSION, "w", 1, None)
        .unwrap();
    // a slice with a non-zero gap reported as 0, until a sampled state shows the gap (a
    // lie that slips through is stored, and the next slice with a gap is tried)
    for _ in 0..1_000 {
        let (lease_id, _layer, _ranks, mut slices) = lease_and_solve(&core, w, now);
        if let Some(i) = slices.iter().position(|s| s.bytes.max_gap > 0.0) {
            slices[i].bytes.max_gap = 0.0;
        }
        match core.submit(w, lease_id, slices, now) {
            Ok(_) => continue,
            Err(CoreError::Rejected(Rejection::UnderstatedGap {
                reported, found, ..
            })) => {
                assert_eq!(reported, 0.0);
                assert!(found > 0.0);
                return;
            }
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no understated gap caught in the whole run");
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
    // and the dashboard tells it: the disagreement, how it was settled, whom it blames
    let events = core.live_status(now).unwrap().events;
    let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
    let at = |kind| kinds.iter().position(|k| *k == kind);
    let (disagreed, settled, blamed) = (
        at(EventKind::Disagreement).expect("disagreement"),
        at(EventKind::DisputeSettled).expect("dispute settled"),
        at(EventKind::CopyBlamed).expect("copy blamed"),
    );
    assert!(disagreed < settled && settled < blamed, "{kinds:?}");
    assert!(
        events[settled].message.contains(&format!(
            "the stored copy of slice {rank} of layer {layer} fails"
        )),
        "{}",
        events[settled].message
    );
    assert!(
        events[blamed].message.contains("\"liar\""),
        "{}",
        events[blamed].message
    );
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
