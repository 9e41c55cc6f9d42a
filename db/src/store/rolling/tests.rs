//! A rolling solve's releases and its book: as layers complete, after a crash between a
//! record and its release, and the refusals of a K it cannot keep.

use gops_common::objective::Objective;

use super::*;
use crate::store::LayerRecord;
use crate::test_db::solved_store;

fn files_of(store: &Store, k: u8) -> [bool; 3] {
    [
        store.files.path(k).exists(),
        store.path.join(index_file_name(k)).exists(),
        store.path.join(record_file_name(k)).exists(),
    ]
}

#[test]
fn complete_layers_below_k_are_released_once_the_layer_above_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(solved_store(&path, 6, Objective::Win, 3));
    let mut store = Store::open_or_create(&path, 6, Objective::Win).unwrap();
    store.set_keep_from_layer(5).unwrap();
    // 1 and 2 released; 3 is what layer 4 will be solved from
    for k in 1..=2 {
        assert!(store.is_released(k).unwrap());
        assert_eq!(files_of(&store, k), [false; 3]);
        assert!(store.layer(k).unwrap().is_some(), "its record stays");
        assert!(store.stored_ranks(k).unwrap().is_empty());
    }
    assert!(!store.is_released(3).unwrap());
    assert_eq!(files_of(&store, 3), [true; 3]);
    assert!(store.book().is_none());
    assert!(Store::peek_manifest(&path).unwrap().unwrap().book.is_none());
    // a resume knows it without being told
    drop(store);
    let store = Store::open_or_create(&path, 6, Objective::Win).unwrap();
    assert_eq!(store.keep_from_layer(), Some(5));
}

#[test]
fn a_release_cut_short_is_finished_when_the_db_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = solved_store(&path, 6, Objective::Win, 4);
    // as if a rolling run died after layer 4's record, before any release
    store
        .write_manifest(&Manifest {
            keep_from_layer: Some(5),
            ..store.manifest.clone()
        })
        .unwrap();
    assert_eq!(files_of(&store, 1), [true; 3]);
    drop(store);
    let store = Store::open_or_create(&path, 6, Objective::Win).unwrap();
    for k in 1..=3 {
        assert_eq!(files_of(&store, k), [false; 3], "layer {k}");
    }
    assert_eq!(files_of(&store, 4), [true; 3]);
}

#[test]
fn the_finished_db_is_a_book_and_keeps_its_k() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut store = solved_store(&path, 6, Objective::Win, 6);
    let records: Vec<LayerRecord> = (1..=6).map(|k| store.layer(k).unwrap().unwrap()).collect();
    store.set_keep_from_layer(4).unwrap();
    for k in 1..=6 {
        assert_eq!(files_of(&store, k), [k >= 4; 3], "layer {k}");
    }
    // raising K removes more; lowering it below a removed layer is refused
    store.set_keep_from_layer(5).unwrap();
    assert_eq!(files_of(&store, 4), [false; 3]);
    assert!(matches!(
        store.set_keep_from_layer(4),
        Err(StoreError::KeepMismatch {
            found: 5,
            want: 4,
            ..
        })
    ));
    assert!(matches!(
        store.set_keep_from_layer(7),
        Err(StoreError::KeepOutOfRange { n: 6, want: 7 })
    ));
    assert!(store.set_keep_from_layer(0).is_err());
    drop(store);
    let book = Store::open_existing(&path).unwrap();
    let info = book.book().expect("a book");
    assert_eq!(info.from_layer, 5);
    assert_eq!(info.layers, records);
    assert!(book.is_sealed_reader());
    let book = crate::book::Book::of(book, &crate::book::ReadOptions::default());
    assert!(
        book.below().is_some(),
        "read as a book, with its solver below"
    );
    // and its solve's db still: opened to solve, it is complete and stays a book
    drop(book);
    let store = Store::open_or_create(&path, 6, Objective::Win).unwrap();
    assert!((1..=6).all(|k| store.layer(k).unwrap().is_some()));
    drop(store);
    assert!(Store::open_existing(&path).unwrap().book().is_some());
}
