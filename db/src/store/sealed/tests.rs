//! Sealed layers: written by the writer as layers complete, read back without sled by
//! any number of readers while the writer holds the db, nothing in the directory changed
//! by a read; every kind of damage to the sealed files an error naming file and layer.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use gops_common::objective::Objective;

use super::*;
use crate::store::Store;

/// The db at `path` with layers 1 to `complete` of the `n`-card game stored and complete
/// as a solve stores and completes them, through a writer's handle, which is returned
/// (still holding the db).
fn writer_with_layers(path: &Path, n: u8, objective: Objective, complete: u8) -> Store {
    crate::test_db::solved_store(path, n, objective, complete)
}

/// Every file of the directory: its bytes and modification time.
fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let meta = e.metadata().unwrap();
            (
                name,
                (std::fs::read(e.path()).unwrap(), meta.modified().unwrap()),
            )
        })
        .collect()
}

fn manifest(path: &Path) -> Manifest {
    Store::peek_manifest(path).unwrap().unwrap()
}

#[test]
fn complete_layers_are_read_sealed_while_the_writer_holds_the_db_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer_with_layers(&path, 5, Objective::Win, 3);
    let before = files(&path);
    for k in 1..=3 {
        assert!(before.contains_key(&index_file_name(k)), "{k}");
        assert!(before.contains_key(&record_file_name(k)), "{k}");
    }
    assert!(!before.contains_key(&record_file_name(4)));
    // two readers at once, the writer still holding sled's lock
    let (one, two) = (
        Store::open_existing(&path).unwrap(),
        Store::open_existing(&path).unwrap(),
    );
    for reader in [&one, &two] {
        assert!(reader.is_sealed_reader());
        for k in 1..=3 {
            assert_eq!(reader.layer(k).unwrap(), writer.layer(k).unwrap());
            assert_eq!(
                reader.stored_ranks(k).unwrap(),
                writer.stored_ranks(k).unwrap()
            );
            for rank in writer.stored_ranks(k).unwrap() {
                assert_eq!(
                    reader.require_slice(k, rank).unwrap(),
                    writer.require_slice(k, rank).unwrap()
                );
            }
        }
        // the layer being solved is not there for a reader
        assert_eq!(reader.layer(4).unwrap(), None);
        assert_eq!(reader.stored_count(4).unwrap(), 0);
        assert!(matches!(
            reader.put_slices(4, &[]),
            Err(StoreError::ReadOnly(_))
        ));
    }
    assert!(Store::writer_running(&path));
    drop((one, two));
    assert_eq!(files(&path), before, "a read changed the db");
    drop(writer);
    // once the writer is gone: still read sealed, still nothing written
    let reader = Store::open_existing(&path).unwrap();
    assert!(reader.is_sealed_reader() && !Store::writer_running(&path));
    assert!(reader.require_slice(3, 0).is_ok());
    drop(reader);
    assert_eq!(files(&path), before);
}

#[test]
fn a_db_of_an_earlier_build_is_read_the_old_way_and_sealed_by_its_next_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let checksums: Vec<_> = {
        let writer = writer_with_layers(&path, 4, Objective::Points, 4);
        (1..=4).map(|k| writer.layer(k).unwrap().unwrap()).collect()
    };
    // as an earlier build left it: no sealed files
    for k in 1..=4 {
        std::fs::remove_file(path.join(index_file_name(k))).unwrap();
        std::fs::remove_file(path.join(record_file_name(k))).unwrap();
    }
    let old_way = Store::open_existing(&path).unwrap();
    assert!(!old_way.is_sealed_reader());
    assert_eq!(old_way.unsealed_layers().unwrap(), vec![1, 2, 3, 4]);
    drop(old_way);
    let writer = Store::open_live(&path).unwrap();
    assert_eq!(writer.seal_complete_layers().unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(writer.seal_complete_layers().unwrap(), Vec::<u8>::new());
    drop(writer);
    let reader = Store::open_existing(&path).unwrap();
    assert!(reader.is_sealed_reader());
    let read: Vec<_> = (1..=4).map(|k| reader.layer(k).unwrap().unwrap()).collect();
    assert_eq!(read, checksums);
}

/// A complete 4-card points db, its writer gone.
fn sealed_db(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("db");
    drop(writer_with_layers(&path, 4, Objective::Points, 4));
    path
}

/// The error of opening the db at `path` to read it.
fn open_error(path: &Path) -> String {
    match Store::open_existing(path) {
        Ok(_) => panic!("a damaged db opened"),
        Err(e) => {
            assert!(matches!(e, StoreError::DamagedLayer { .. }), "{e}");
            e.to_string()
        }
    }
}

#[test]
fn damage_to_the_sealed_files_is_an_error_naming_file_and_layer() {
    let dir = tempfile::tempdir().unwrap();
    let path = sealed_db(dir.path());
    let pristine = files(&path);
    let restore = || {
        for (name, (bytes, _)) in &pristine {
            std::fs::write(path.join(name), bytes).unwrap();
        }
    };
    let index = path.join(index_file_name(3));
    let record = path.join(record_file_name(3));
    let bytes = std::fs::read(&index).unwrap();

    // an index cut short
    std::fs::write(&index, &bytes[..bytes.len() - 5]).unwrap();
    let e = open_error(&path);
    assert!(e.contains("layer 3") && e.contains("layer-03.idx"), "{e}");
    restore();

    // one bit of an index altered
    let mut altered = bytes.clone();
    altered[32 + 3] ^= 1; // an entry's offset
    std::fs::write(&index, &altered).unwrap();
    assert!(open_error(&path).contains("layer-03.idx"));
    restore();

    // an index whose own digest holds, but not the record's digest of it: another
    // layer's index in its place
    std::fs::copy(path.join(index_file_name(2)), &index).unwrap();
    assert!(open_error(&path).contains("layer-03.idx"));
    restore();

    // a record whose checksum is not what its slices give, the index consistent
    let json = std::fs::read_to_string(&record).unwrap();
    let mut seal: SealRecord = serde_json::from_str(&json).unwrap();
    seal.record.checksum = "0".repeat(64);
    std::fs::write(&record, serde_json::to_vec(&seal).unwrap()).unwrap();
    let e = open_error(&path);
    assert!(e.contains("checksum") && e.contains("layer 3"), "{e}");
    restore();

    // a record that is not JSON
    std::fs::write(&record, b"{ not json").unwrap();
    assert!(open_error(&path).contains("layer-03.json"));
    restore();

    // a data file shorter than its index says
    let data = path.join("slices-03.dat");
    let len = std::fs::metadata(&data).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&data)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    let e = open_error(&path);
    assert!(e.contains("layer 3") && e.contains("slices-03.dat"), "{e}");
    restore();

    // restored: reads again
    assert!(Store::open_existing(&path).unwrap().is_sealed_reader());
    // a reader never repairs: what it found damaged is left as it was
    std::fs::write(&index, &bytes[..10]).unwrap();
    let before = files(&path);
    open_error(&path);
    assert_eq!(files(&path), before);
}

#[test]
fn an_index_of_another_game_or_layer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = sealed_db(dir.path());
    let layer = SealedLayer::load(&path, &manifest(&path), 2)
        .unwrap()
        .unwrap();
    let other = Manifest {
        objective: gops_common::Objective::Win,
        ..manifest(&path)
    };
    let bytes = layer.index(&other).unwrap().encode();
    let err = decode_index(&bytes, &manifest(&path), 2, 6).unwrap_err();
    assert!(err.contains("win"), "{err}");
    let bytes = layer.index(&manifest(&path)).unwrap().encode();
    assert!(decode_index(&bytes, &manifest(&path), 3, 6).is_err());
    let entries = decode_index(&bytes, &manifest(&path), 2, 6)
        .unwrap()
        .entries;
    assert_eq!(entries.len(), layer.entries().len());
    for (decoded, entry) in entries.iter().zip(layer.entries()) {
        assert_eq!(
            (decoded.offset, decoded.len),
            (entry.place.offset, entry.place.len)
        );
        assert_eq!(decoded.digest, entry.digest);
    }
}

#[test]
fn a_layer_is_sealed_only_with_one_entry_per_slice_its_record_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = sealed_db(dir.path());
    let layer = SealedLayer::load(&path, &manifest(&path), 2)
        .unwrap()
        .unwrap();
    let mut entries = layer.entries().to_vec();
    let whole = SealedLayer::new(
        layer.record.clone(),
        layer.data_file.clone(),
        entries.clone(),
    );
    assert_eq!(whole.unwrap(), layer);
    entries.pop();
    let err = SealedLayer::new(layer.record.clone(), layer.data_file.clone(), entries).unwrap_err();
    assert!(err.to_string().contains("its record counts"), "{err}");
}

#[test]
fn a_re_seal_cut_short_reads_as_the_old_layer_or_the_new() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer_with_layers(&path, 5, Objective::Win, 3);
    let load = || SealedLayer::load(&path, &manifest(&path), 2);
    let old_layer = load().unwrap().unwrap();
    let read = |name: String| std::fs::read(path.join(name)).unwrap();
    let (old_index, old_record) = (read(index_file_name(2)), read(record_file_name(2)));
    // a slice of layer 2 stored again (as a repair stores it): re-sealed, pointing to its
    // new place
    let bytes = writer.require_slice_bytes(2, 1).unwrap();
    writer.put_repaired(2, 1, &bytes).unwrap();
    let new_layer = load().unwrap().unwrap();
    assert_ne!(new_layer, old_layer);
    assert!(!path.join(pending_index_file_name(2)).exists());
    let (new_index, new_record) = (read(index_file_name(2)), read(record_file_name(2)));
    let put = |index: &[u8], record: &[u8], pending: Option<&[u8]>| {
        std::fs::write(path.join(index_file_name(2)), index).unwrap();
        std::fs::write(path.join(record_file_name(2)), record).unwrap();
        match pending {
            Some(p) => std::fs::write(path.join(pending_index_file_name(2)), p).unwrap(),
            None => {
                let _ = std::fs::remove_file(path.join(pending_index_file_name(2)));
            }
        }
    };
    // cut short before the record: the old layer
    put(&old_index, &old_record, Some(&new_index));
    assert_eq!(load().unwrap().unwrap(), old_layer);
    // cut short after it: the new layer, through the index still pending
    put(&old_index, &new_record, Some(&new_index));
    assert_eq!(load().unwrap().unwrap(), new_layer);
    // the writer's next start finishes it
    drop(writer);
    drop(Store::open_or_create(&path, 5, Objective::Win).unwrap());
    assert!(!path.join(pending_index_file_name(2)).exists());
    assert_eq!(load().unwrap().unwrap(), new_layer);
    // a record naming an index that is nowhere is damage
    put(&old_index, &new_record, None);
    assert!(matches!(load(), Err(StoreError::DamagedLayer { k: 2, .. })));
}
