//! The ledger's rules one by one, and random operation sequences against its invariants.

use super::*;
use proptest::prelude::*;

const W: fn(u64) -> WorkerId = WorkerId;

const LEASE: Duration = Duration::from_millis(100);

#[test]
fn a_second_lease_waits_while_another_live_worker_could_use_the_shard() {
    let now = Instant::now();
    let shards = vec![vec![0], vec![1], vec![2]];
    let mut ledger = LeaseLedger::new(shards, LEASE, LeaseId(1)).with_max_per_worker(3);
    let (a, b) = (WorkerId(1), WorkerId(2));
    let party = Party::Session;
    let leased = |x: &Assignment| matches!(x, Assignment::Shard { .. });
    assert!(leased(&ledger.assign_among(a, party(a), now, 2)));
    // two pending for two live workers: a may lease ahead
    assert!(leased(&ledger.assign_among(a, party(a), now, 2)));
    // one pending for two: it goes to a worker holding nothing
    assert_eq!(ledger.assign_among(a, party(a), now, 2), Assignment::Wait);
    assert!(leased(&ledger.assign_among(b, party(b), now, 2)));
    // alone, a worker leases ahead whatever is left
    let mut alone = LeaseLedger::new(vec![vec![0], vec![1]], LEASE, LeaseId(1));
    assert!(leased(&alone.assign_among(a, party(a), now, 1)));
    assert!(leased(&alone.assign_among(a, party(a), now, 1)));
}

fn ledger() -> (LeaseLedger, Instant) {
    (
        LeaseLedger::new(vec![vec![0, 1], vec![2], vec![3, 4]], LEASE, LeaseId(1)),
        Instant::now(),
    )
}

#[test]
fn workers_walk_through_separate_regions_and_handed_back_work_goes_first() {
    let shards: Vec<Vec<u32>> = (0..10).map(|r| vec![r]).collect();
    let mut l = LeaseLedger::new(shards, LEASE, LeaseId(1));
    let t0 = Instant::now();
    let next = |l: &mut LeaseLedger, w: u64| match l.assign(W(w), t0) {
        Assignment::Shard {
            lease_id,
            prize_ranks,
        } => (lease_id, prize_ranks[0]),
        other => panic!("{other:?}"),
    };
    // the first worker starts at the beginning, the second halves what is left
    assert_eq!(next(&mut l, 1).1, 0);
    assert_eq!(next(&mut l, 2).1, 5);
    // each goes on with its neighbour
    assert_eq!(next(&mut l, 1).1, 1);
    l.slice_stored(0, t0);
    assert_eq!(l.counts().done, 1);
    // a third halves the longest stretch left (6..10, walked into from 5)
    assert_eq!(next(&mut l, 3).1, 8);
    assert_eq!(next(&mut l, 2).1, 6);
    // work handed back is taken first, by whoever asks
    let one = l
        .leases
        .iter()
        .find(|(_, lease)| l.shards[lease.shard].prize_ranks == [1])
        .map(|(&id, _)| id)
        .unwrap();
    l.release(W(1), one);
    assert_eq!(next(&mut l, 3).1, 1);
    l.assert_consistent();
}

#[test]
fn leases_expire_and_are_reassigned() {
    let (mut l, t0) = ledger();
    let Assignment::Shard {
        lease_id,
        prize_ranks,
    } = l.assign(W(7), t0)
    else {
        panic!()
    };
    assert_eq!(prize_ranks, vec![0, 1]);
    assert!(l.heartbeat(W(7), lease_id, t0 + LEASE / 2));
    assert!(
        !l.heartbeat(W(8), lease_id, t0 + LEASE / 2),
        "another worker's lease"
    );
    // extended by the heartbeat: still alive at t0 + LEASE
    assert!(l.heartbeat(W(7), lease_id, t0 + LEASE));
    let late = t0 + LEASE * 3;
    assert_eq!(l.expire(late), vec![(lease_id, W(7))]);
    assert!(!l.heartbeat(W(7), lease_id, late));
    let Assignment::Shard { prize_ranks, .. } = l.assign(W(9), late) else {
        panic!()
    };
    assert_eq!(
        prize_ranks,
        vec![0, 1],
        "the expired shard is leased again first"
    );
    l.assert_consistent();
}

#[test]
fn speculative_copies_only_of_overdue_shards_when_nothing_is_pending() {
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    let mut l = LeaseLedger::new(
        vec![vec![0, 1], vec![2], vec![3, 4], vec![5]],
        LEASE,
        LeaseId(1),
    );
    for worker in 1..=4 {
        assert!(matches!(l.assign(W(worker), t0), Assignment::Shard { .. }));
    }
    assert_eq!(l.assign(W(5), t0), Assignment::Wait, "none overdue");
    // the last shard took 10 ms: a copy of another waits until it is out for 20 ms
    assert!(l.slice_stored(5, t0 + ms(10)));
    assert_eq!(l.assign(W(5), t0 + ms(15)), Assignment::Wait, "not overdue");
    let later = t0 + ms(25);
    // worker 5 gets a copy of the first shard; worker 1 never a copy of its own
    let Assignment::Shard { prize_ranks, .. } = l.assign(W(5), later) else {
        panic!()
    };
    assert_eq!(prize_ranks, vec![0, 1]);
    let Assignment::Shard { prize_ranks, .. } = l.assign(W(1), later) else {
        panic!()
    };
    assert_eq!(prize_ranks, vec![2]);
    let Assignment::Shard { prize_ranks, .. } = l.assign(W(6), later) else {
        panic!()
    };
    assert_eq!(prize_ranks, vec![3, 4]);
    assert_eq!(
        l.assign(W(7), later),
        Assignment::Wait,
        "two copies at most"
    );
    // the first result wins: completing shard 0 ends both of its leases
    assert!(!l.slice_stored(0, later));
    assert!(l.slice_stored(1, later));
    l.assert_consistent();
    assert_eq!(l.counts().done, 2);
}

#[test]
fn repeated_and_late_completions_change_nothing() {
    let (mut l, t0) = ledger();
    let Assignment::Shard { lease_id, .. } = l.assign(W(1), t0) else {
        panic!()
    };
    assert!(
        l.slice_stored(2, t0),
        "a slice may arrive from an expired or foreign lease"
    );
    let before = format!("{:?}", l.counts());
    assert!(!l.slice_stored(2, t0));
    assert!(!l.slice_stored(99, t0), "not of this layer");
    assert_eq!(format!("{:?}", l.counts()), before);
    l.release(W(2), lease_id); // not the holder: ignored
    assert_eq!(l.lease_ranks(W(1), lease_id), Some(&[0u32, 1][..]));
    l.release(W(1), lease_id);
    assert_eq!(l.lease_ranks(W(1), lease_id), None);
    assert_eq!(l.counts().pending, 2);
    l.assert_consistent();
}

#[test]
fn a_worker_holds_two_leases_at_most_and_submits_only_under_its_own() {
    let (mut l, t0) = ledger();
    let Assignment::Shard {
        lease_id: first, ..
    } = l.assign(W(1), t0)
    else {
        panic!()
    };
    assert!(matches!(l.assign(W(1), t0), Assignment::Shard { .. }));
    assert_eq!(l.assign(W(1), t0), Assignment::Wait, "at its cap");
    assert!(matches!(l.assign(W(2), t0), Assignment::Shard { .. }));
    assert_eq!(l.granted_ranks(W(1), first), Some(&[0u32, 1][..]));
    assert_eq!(l.granted_ranks(W(2), first), None, "not its lease");
    assert_eq!(l.granted_ranks(W(1), LeaseId(99)), None, "never granted");
    // an expired lease frees a place and may still be submitted under
    let later = t0 + LEASE * 2;
    l.expire(later);
    assert_eq!(l.granted_ranks(W(1), first), Some(&[0u32, 1][..]));
    assert!(matches!(l.assign(W(1), later), Assignment::Shard { .. }));
    let capped = LeaseLedger::new(vec![vec![0], vec![1]], LEASE, LeaseId(1)).with_max_per_worker(1);
    let mut capped = capped;
    assert!(matches!(capped.assign(W(1), t0), Assignment::Shard { .. }));
    assert_eq!(capped.assign(W(1), t0), Assignment::Wait);
    l.assert_consistent();
}

#[test]
fn a_shard_copied_by_a_party_goes_to_another() {
    let (mut l, t0) = ledger();
    let Assignment::Shard {
        prize_ranks: first, ..
    } = l.assign_to(W(1), Party::Session(W(10)), t0)
    else {
        panic!()
    };
    assert_eq!(first, vec![0, 1]);
    l.copy_handed_in(0, Party::Session(W(10)), W(1));
    assert_eq!(l.counts().leased, 0, "the copier's lease ended");
    // the same party (another session of the same token) gets another shard
    let Assignment::Shard { prize_ranks, .. } = l.assign_to(W(2), Party::Session(W(10)), t0) else {
        panic!()
    };
    assert_eq!(prize_ranks, vec![2]);
    let Assignment::Shard { prize_ranks, .. } = l.assign_to(W(3), Party::Session(W(11)), t0) else {
        panic!()
    };
    assert_eq!(
        prize_ranks,
        vec![0, 1],
        "another party confirms the copied shard"
    );
    l.copies_discarded(0);
    assert_eq!(l.shard_ranks(1), Some(&[0u32, 1][..]));
    l.assert_consistent();
}

#[test]
fn layer_done_once_every_rank_is_stored() {
    let (mut l, t0) = ledger();
    for r in 0..5 {
        assert!(!l.is_done());
        l.slice_stored(r, t0);
    }
    assert!(l.is_done());
    assert_eq!(l.assign(W(1), t0), Assignment::LayerDone);
    let empty = LeaseLedger::new(vec![], LEASE, LeaseId(1));
    assert!(empty.is_done());
}

#[derive(Clone, Debug)]
enum Op {
    Assign(u64),
    Heartbeat(u64, u64),
    Release(u64, u64),
    Store(u32),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..4u64).prop_map(Op::Assign),
        (0..4u64, 1..12u64).prop_map(|(w, l)| Op::Heartbeat(w, l)),
        (0..4u64, 1..12u64).prop_map(|(w, l)| Op::Release(w, l)),
        (0..12u32).prop_map(Op::Store),
        (0..150u64).prop_map(Op::Advance),
    ]
}

proptest! {
    /// Whatever happens, every shard is in exactly one consistent state, storing a
    /// rank twice changes nothing, and the layer is done exactly when every rank is
    /// stored.
    #[test]
    fn ledger_invariants_hold(ops in proptest::collection::vec(op(), 0..80)) {
        let mut l = LeaseLedger::new(vec![vec![0, 1, 2], vec![3], vec![4, 5], vec![6, 7, 8, 9]], LEASE, LeaseId(1));
        let mut now = Instant::now();
        let mut stored = std::collections::HashSet::new();
        for op in ops {
            match op {
                Op::Assign(w) => { l.assign(W(w), now); }
                Op::Heartbeat(w, id) => { l.heartbeat(W(w), LeaseId(id), now); }
                Op::Release(w, id) => l.release(W(w), LeaseId(id)),
                Op::Store(r) => {
                    let snapshot = format!("{:?}", l.counts());
                    let first = r < 10 && stored.insert(r);
                    let completed = l.slice_stored(r, now);
                    if !first {
                        prop_assert!(!completed);
                        prop_assert_eq!(format!("{:?}", l.counts()), snapshot);
                    }
                }
                Op::Advance(ms) => now += Duration::from_millis(ms),
            }
            l.assert_consistent();
            let c = l.counts();
            prop_assert_eq!(c.pending + c.leased + c.done, 4);
            prop_assert_eq!(l.is_done(), stored.len() == 10);
        }
    }
}

#[test]
fn a_party_that_holds_every_shard_cannot_keep_another_idle() {
    let t0 = Instant::now();
    let mut l = LeaseLedger::new(vec![vec![0], vec![1], vec![2]], LEASE, LeaseId(1));
    let hoarder = Party::Session(W(1));
    let mut held = Vec::new();
    for worker in 1..=3 {
        let Assignment::Shard { lease_id, .. } = l.assign_to(W(worker), hoarder, t0) else {
            panic!()
        };
        held.push((W(worker), lease_id));
    }
    let honest = (W(9), Party::Session(W(9)));
    assert_eq!(l.assign_to(honest.0, honest.1, t0), Assignment::Wait);
    // the hoarder keeps every lease alive
    let mut t = t0;
    for _ in 0..4 {
        t += LEASE / 2;
        for &(worker, lease_id) in &held {
            assert!(l.heartbeat(worker, lease_id, t));
        }
    }
    // no shard of the layer is finished, yet past twice the lease the honest party
    // gets a copy; another session of the hoarding party never does
    assert!(t >= t0 + LEASE * 2);
    assert_eq!(l.assign_to(W(4), hoarder, t), Assignment::Wait);
    let Assignment::Shard { prize_ranks, .. } = l.assign_to(honest.0, honest.1, t) else {
        panic!("the honest party waits")
    };
    assert!(l.slice_stored(prize_ranks[0], t));
    l.assert_consistent();
}
