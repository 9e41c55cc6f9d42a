//! The store: round trips, the manifest's checks, data files, legacy dbs, damage.

use gops_common::engine::SolvedSlice;

use super::*;

fn solved(rank: u32, values: Vec<f64>) -> SolvedSlice {
    SolvedSlice {
        prize_rank: rank,
        slice: Slice::dense(0, values),
        max_gap: 1e-15,
        games: 3,
    }
}

#[test]
fn slices_round_trip_and_manifest_is_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        // layer 2 of the 5-card game has 13 patterns, 7 canonical
        let store = Store::open_or_create(&path, 5, Objective::Points).unwrap();
        let seven: Vec<f64> = (0..7).map(f64::from).collect();
        store
            .put_slices(2, &[solved(7, seven.clone()), solved(3, vec![0.25; 7])])
            .unwrap();
        assert_eq!(store.stored_ranks(2).unwrap(), vec![3, 7]);
        assert_eq!(store.stored_ranks(1).unwrap(), Vec::<u32>::new());
        let record = store.slice(2, 7).unwrap().unwrap();
        assert_eq!(record.slice.values, seven);
        assert_eq!(record.games, 3);
        assert!(store.layer(2).unwrap().is_none());
        // a record of the wrong shape is damage, not data
        store.put_slices(2, &[solved(4, vec![1.0; 6])]).unwrap();
        assert!(matches!(
            store.slice(2, 4),
            Err(StoreError::DamagedSlice { k: 2, rank: 4, .. })
        ));
    }
    let err = Store::open_or_create(&path, 6, Objective::Points)
        .err()
        .unwrap();
    assert!(matches!(err, StoreError::Mismatch { n: 5, .. }), "{err}");
    let err = Store::open_or_create(&path, 5, Objective::Win)
        .err()
        .unwrap();
    assert!(err.is_usage(), "{err}");
    let peeked = Store::peek_manifest(&path).unwrap().unwrap();
    assert_eq!((peeked.n, peeked.objective), (5, Objective::Points));
    let store = Store::open_existing(&path).unwrap();
    assert_eq!((store.n(), store.objective()), (5, Objective::Points));
    assert_eq!(
        store.slice(2, 3).unwrap().unwrap().slice.values,
        vec![0.25; 7]
    );
}

/// A 5-card points db at `path` with slices 3 and 7 of layer 2 stored.
fn two_slices_in_layer_2(path: &Path) -> Store {
    let store = Store::open_or_create(path, 5, Objective::Points).unwrap();
    store
        .put_slices(2, &[solved(3, vec![0.5; 7]), solved(7, vec![1.5; 7])])
        .unwrap();
    store
}

/// Cuts the file at `path` to `len` bytes (a data file that lost its end).
fn cut_to(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[test]
fn slice_bytes_live_in_data_files_and_a_damaged_place_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = two_slices_in_layer_2(&path);
    let file = path.join("slices-02.dat");
    let before = std::fs::metadata(&file).unwrap().len();
    assert!(before > 2 * 7 * 8, "both bodies are in the data file");
    assert_eq!(store.stored_ranks(2).unwrap(), vec![3, 7]);
    // stored again (a repair): appended, and the new copy is the one read
    store.put_slices(2, &[solved(3, vec![2.5; 7])]).unwrap();
    assert!(std::fs::metadata(&file).unwrap().len() > before);
    assert_eq!(
        store.require_slice(2, 3).unwrap().slice.values,
        vec![2.5; 7]
    );
    store.remove_slice(2, 7).unwrap();
    assert_eq!(store.stored_ranks(2).unwrap(), vec![3]);
    drop(store);
    // the data file cut short: the slice is damaged, not gone and not garbage
    cut_to(&file, before);
    let store = Store::open_existing(&path).unwrap();
    assert!(matches!(
        store.slice(2, 3),
        Err(StoreError::DamagedSlice { k: 2, rank: 3, .. })
    ));
    // the data file gone: damage too
    drop(store);
    std::fs::remove_file(&file).unwrap();
    let store = Store::open_existing(&path).unwrap();
    assert!(matches!(
        store.slice_bytes(2, 3),
        Err(StoreError::DamagedSlice { k: 2, rank: 3, .. })
    ));
}

#[test]
fn a_located_record_is_the_slice_and_its_digest_and_a_missing_one_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = two_slices_in_layer_2(&path);
    let located = store.locate(2, 7).unwrap().expect("in a data file");
    assert_eq!(located.file_name, "slices-02.dat");
    let stored = store.require_slice_bytes(2, 7).unwrap();
    assert_eq!(located.digest, stored.digest);
    // what a reader of the directory finds there is the record of that slice
    let bytes = std::fs::read(path.join(&located.file_name)).unwrap();
    let start = located.place.offset as usize;
    let record = &bytes[start..start + located.place.len as usize];
    assert_eq!(SliceBytes::from_record(record).unwrap(), stored);
    assert!(matches!(
        store.locate(2, 4),
        Err(StoreError::DamagedSlice { k: 2, rank: 4, .. })
    ));
    // a data file cut inside the record's header: damage, not a wrong digest
    drop(store);
    cut_to(&path.join("slices-02.dat"), located.place.offset + 10);
    let store = Store::open_existing(&path).unwrap();
    assert!(matches!(
        store.locate(2, 7),
        Err(StoreError::DamagedSlice { k: 2, rank: 7, .. })
    ));
}

/// A db of format 3 (slices inside sled), as that build wrote it.
fn legacy_db(path: &Path) {
    let db = sled::Config::new().path(path).open().unwrap();
    let manifest = Manifest {
        format_version: LEGACY_FORMAT_VERSION,
        n: 5,
        objective: Objective::Points,
        created_by: "gops 0.1.0".into(),
        book: None,
        keep_from_layer: None,
    };
    let meta = db.open_tree("meta").unwrap();
    meta.insert(MANIFEST_KEY, serde_json::to_vec(&manifest).unwrap())
        .unwrap();
    let slices = db.open_tree(LEGACY_SLICES_TREE).unwrap();
    for rank in [1u32, 4] {
        let bytes = solved(rank, vec![f64::from(rank); 7])
            .to_bytes()
            .to_record();
        slices.insert(slice_key(2, rank), bytes).unwrap();
    }
    let unconfirmed = db.open_tree(LEGACY_UNCONFIRMED_TREE).unwrap();
    unconfirmed
        .insert(
            slice_key(2, 5),
            solved(5, vec![0.0; 7]).to_bytes().to_record(),
        )
        .unwrap();
    db.flush().unwrap();
    std::fs::write(
        path.join(MANIFEST_FILE),
        serde_json::to_vec(&manifest).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_format_3_db_is_read_and_upgraded_when_solved_into() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    legacy_db(&path);
    {
        // read as it is, and left as it is
        let store = Store::open_existing(&path).unwrap();
        assert_eq!(store.manifest().format_version, LEGACY_FORMAT_VERSION);
        assert_eq!(store.stored_ranks(2).unwrap(), vec![1, 4]);
        assert_eq!(
            store.require_slice(2, 4).unwrap().slice.values,
            vec![4.0; 7]
        );
    }
    let peeked = Store::peek_manifest(&path).unwrap().unwrap();
    assert_eq!(peeked.format_version, LEGACY_FORMAT_VERSION);
    // opened to solve: marked format 4 (its arithmetic stays), old slices still read
    // beside new ones
    let store = Store::open_or_create(&path, 5, Objective::Points).unwrap();
    assert_eq!(store.manifest().format_version, FORMAT_4);
    assert_eq!(store.pivot_start(), PivotStart::Leftmost);
    let peeked = Store::peek_manifest(&path).unwrap().unwrap();
    assert_eq!(peeked.format_version, FORMAT_4);
    store.put_slices(2, &[solved(2, vec![2.0; 7])]).unwrap();
    assert_eq!(store.stored_ranks(2).unwrap(), vec![1, 2, 4]);
    // an old slice has no place in a data file; a new one has
    assert_eq!(store.locate(2, 1).unwrap(), None);
    assert!(store.locate(2, 2).unwrap().is_some());
    assert_eq!(
        store.require_slice(2, 1).unwrap().slice.values,
        vec![1.0; 7]
    );
    // a repaired old slice: the new copy wins; a removed one is gone from both
    store.put_slices(2, &[solved(1, vec![9.0; 7])]).unwrap();
    assert_eq!(
        store.require_slice(2, 1).unwrap().slice.values,
        vec![9.0; 7]
    );
    store.remove_slice(2, 4).unwrap();
    assert_eq!(store.stored_ranks(2).unwrap(), vec![1, 2]);
    // the old copies awaiting confirmation are cleared with the new ones
    store.clear_unconfirmed().unwrap();
    assert!(store.unconfirmed(2, 5).unwrap().is_none());
    assert!(
        !store
            .live()
            .unwrap()
            .db
            .tree_names()
            .iter()
            .any(|t| t.as_ref() == LEGACY_UNCONFIRMED_TREE)
    );
}

#[test]
fn unconfirmed_copies_round_trip_and_are_cleared_with_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = Store::open_or_create(&path, 5, Objective::Points).unwrap();
    let copy = solved(3, vec![0.75; 7]).to_bytes();
    store.put_unconfirmed(2, 3, &copy).unwrap();
    assert_eq!(store.unconfirmed(2, 3).unwrap(), Some(copy));
    assert!(store.unconfirmed(2, 4).unwrap().is_none());
    assert!(store.stored_ranks(2).unwrap().is_empty(), "not stored");
    store.remove_unconfirmed(2, 3).unwrap();
    assert!(store.unconfirmed(2, 3).unwrap().is_none());
    store
        .put_unconfirmed(2, 4, &solved(4, vec![1.0; 7]).to_bytes())
        .unwrap();
    assert!(path.join("unconfirmed-02.dat").exists());
    store.clear_unconfirmed().unwrap();
    assert!(store.unconfirmed(2, 4).unwrap().is_none());
    assert!(!path.join("unconfirmed-02.dat").exists());
}

#[test]
fn missing_and_foreign_directories_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    assert!(matches!(
        Store::open_existing(&missing),
        Err(StoreError::Missing(_))
    ));
    assert!(!missing.exists(), "a read must not create a db");
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    assert!(matches!(
        Store::open_or_create(&foreign, 4, Objective::Points),
        Err(StoreError::NotADatabase(_))
    ));
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
}

#[test]
fn damaged_record_is_reported_not_returned() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_or_create(&dir.path().join("db"), 3, Objective::Points).unwrap();
    // layer 1 of the 3-card game: 3 patterns, 2 canonical
    let good = solved(0, vec![1.0, 2.0]).to_bytes().to_record();
    assert!(store.decode_record(1, 0, &good).is_ok());
    assert!(store.decode_record(1, 0, &good[..10]).is_err());
    assert!(
        store.decode_record(1, 3, &good).is_err(),
        "rank out of range"
    );
    assert!(
        store.decode_record(4, 0, &good).is_err(),
        "layer out of range"
    );
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    assert_eq!(
        store.decode_record(1, 0, &flipped).unwrap_err(),
        "bytes do not match their digest"
    );
}
