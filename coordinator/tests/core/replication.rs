//! Replicated verification: two parties' copies must agree before a slice is stored.

use crate::support::*;

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
fn copies_that_differ_only_in_their_reported_gap_are_a_dispute_the_liar_loses() {
    let dir = tempfile::tempdir().unwrap();
    let core = replicated(&dir.path().join("db"), 5);
    let now = Instant::now();
    let liar = core
        .hello(gops_proto::PROTOCOL_VERSION, "liar", 1, None)
        .unwrap();
    let honest = core
        .hello(gops_proto::PROTOCOL_VERSION, "honest", 1, None)
        .unwrap();
    // the liar's copy comes first: the same values, the gap overstated (within the
    // tolerance, so nothing but a full re-solve can tell)
    let (lease_id, layer, ranks, mut lie) = lease_and_solve(&core, liar, now);
    let honest_copy = lie.clone();
    lie[0].bytes.max_gap += 1e-12;
    assert_eq!(lie[0].bytes.digest, honest_copy[0].bytes.digest);
    let held = core.submit(liar, lease_id, lie, now).unwrap();
    assert_eq!(held.held as usize, ranks.len());
    // the honest copy does not confirm it: both are solved again, the lie replaced
    let (honest_lease, _, same) = lease_shard(&core, honest, now);
    assert_eq!(same, ranks);
    let stored = core
        .submit(honest, honest_lease, honest_copy.clone(), now)
        .unwrap();
    assert_eq!(stored.stored as usize, ranks.len());
    let record = core
        .store()
        .require_slice_bytes(layer, honest_copy[0].prize_rank)
        .unwrap();
    assert_eq!(record.claim(), honest_copy[0].bytes.claim());
    let status = core.status(now).unwrap();
    assert_eq!(status.disagreements, 1);
    let liar_status = status
        .workers
        .iter()
        .find(|w| w.id == liar.worker.0)
        .unwrap();
    assert_eq!(liar_status.rejected, 1, "the liar is blamed");
    // and a second copy that overstates the gap of a stored slice is refused outright
    let other = core
        .hello(gops_proto::PROTOCOL_VERSION, "other", 1, None)
        .unwrap();
    let (lease_id, _, ranks, mut copy) = lease_and_solve(&core, other, now);
    let first = core.submit(other, lease_id, copy.clone(), now).unwrap();
    assert_eq!(first.held as usize, ranks.len());
    let (honest_lease, _, same) = lease_shard(&core, honest, now);
    assert_eq!(same, ranks);
    copy[0].bytes.max_gap += 1e-12;
    let err = core.submit(honest, honest_lease, copy, now).unwrap_err();
    assert!(
        matches!(err, CoreError::Rejected(Rejection::WrongGap { .. })),
        "{err}"
    );
    take_turns(&core, &[other, honest], now);
    assert_eq!(checksums(&core), reference_checksums(5));
}
