//! Damaged slices: a bit flipped in a stored slice (its digest no longer matches) is
//! found when the slice is read, reported, solved again from the layer below and stored,
//! and the run completes with the reference checksums.

use gops_common::engine::LayerEngine;
use gops_db::store::Store;

use crate::support::{checksums, gops, reference, solve, stderr, temp_db};

/// Flips one bit of the body of a stored slice, leaving its digest as it was.
fn flip_a_bit(store: &Store, k: u8, rank: u32) {
    let mut bytes = store.require_slice_bytes(k, rank).unwrap();
    let last = bytes.body.len() - 1;
    bytes.body[last] ^= 0x10;
    store.put_slice_bytes(k, &[(rank, &bytes)]).unwrap();
}

#[test]
fn damaged_slices_are_solved_again_and_the_run_completes() {
    let (_dir, db) = temp_db();
    // layers 1 to 4 of the 9-card game (255 slices) complete, part of layer 5
    let out = gops(&[
        "solve",
        "--n",
        "9",
        "--db",
        db.to_str().unwrap(),
        "--no-grpc",
        "--stop-after-slices",
        "300",
    ]);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let (below, open) = {
        // the writer's view (sled, the open layer's slices too), as a solve has it
        let store = Store::open_live(&db).unwrap();
        assert!(store.layer(4).unwrap().is_some() && store.layer(5).unwrap().is_none());
        let stored = store.stored_ranks(5).unwrap();
        assert!(!stored.is_empty());
        // a slice of layer 4 that a missing slice of layer 5 reads, so it is read again
        let missing = (0..126u32).find(|r| !stored.contains(r)).unwrap();
        let below = LayerEngine::dependency_ranks(missing, 5).next().unwrap();
        flip_a_bit(&store, 4, below);
        flip_a_bit(&store, 5, stored[0]);
        store.flush().unwrap();
        (below, stored[0])
    };
    let out = gops(&[
        "solve",
        "--n",
        "9",
        "--db",
        db.to_str().unwrap(),
        "--no-first-moves",
    ]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("damaged"), "{log}");
    assert_eq!(checksums(&db), reference(9, "points"));
    // both slices read back whole, equal to a clean solve's
    let (_clean_dir, clean) = temp_db();
    solve(&clean, 9, &[]);
    let store = Store::open_existing(&db).unwrap();
    let clean = Store::open_existing(&clean).unwrap();
    for (k, rank) in [(4, below), (5, open)] {
        assert_eq!(
            store.require_slice_bytes(k, rank).unwrap(),
            clean.require_slice_bytes(k, rank).unwrap(),
            "slice {rank} of layer {k}"
        );
    }
}
