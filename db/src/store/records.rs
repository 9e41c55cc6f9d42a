//! Reading slice records: from an index entry to the bytes in a layer's data file,
//! and from the bytes to a checked [`SliceRecord`]; damage named by slice.

use std::path::Path;

use gops_common::slice::{Slice, SliceBytes};

use super::{SliceRecord, Store, StoreError, file_io, io};
use crate::store::files::{Place, SliceFiles};

/// The record that index `entry` points to in `files`: an entry that cannot be read, or
/// bytes that are not there, are damage to that slice.
pub(super) fn read_indexed(
    files: &SliceFiles,
    k: u8,
    rank: u32,
    entry: &[u8],
) -> Result<Vec<u8>, StoreError> {
    read_place(files, k, rank, indexed_place(k, rank, entry)?)
}

/// The place index `entry` of slice `rank` of layer `k` names; one that does not decode
/// is damage to that slice.
pub(super) fn indexed_place(k: u8, rank: u32, entry: &[u8]) -> Result<Place, StoreError> {
    Place::decode(entry).ok_or_else(|| StoreError::DamagedSlice {
        k,
        rank,
        why: format!("index entry of {} bytes", entry.len()),
    })
}

/// The bytes at `place` of layer `k`'s file in `files`: bytes that are not there are
/// damage to slice `rank`.
pub(super) fn read_place(
    files: &SliceFiles,
    k: u8,
    rank: u32,
    place: Place,
) -> Result<Vec<u8>, StoreError> {
    let damaged = |why: String| StoreError::DamagedSlice { k, rank, why };
    files.read(k, place).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::UnexpectedEof => damaged(format!(
            "{} bytes at {} of {}: {e}",
            place.len,
            place.offset,
            files.path(k).display()
        )),
        _ => file_io(e, &files.path(k)),
    })
}

/// Writes `bytes` to `path` and syncs them to the disk.
pub(super) fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

impl Store {
    /// Decodes a slice record of layer `k`, rank `rank`, its digest checked.
    pub(super) fn decode_record(
        &self,
        k: u8,
        rank: u32,
        bytes: &[u8],
    ) -> Result<SliceRecord, String> {
        let parts = SliceBytes::from_record(bytes)?;
        let slice = Slice::decode_for(self.n(), self.objective(), k, rank, &parts.body)?;
        Ok(SliceRecord {
            slice,
            max_gap: parts.max_gap,
            games: parts.games,
            digest: parts.digest,
        })
    }
}

/// The prize ranks of layer `k` keyed in `tree`, ascending.
pub(super) fn ranks_in(tree: &sled::Tree, k: u8) -> Result<Vec<u32>, StoreError> {
    tree.scan_prefix([k])
        .keys()
        .map(|key| {
            let key = key.map_err(io)?;
            let bytes: [u8; 4] = key[1..]
                .try_into()
                .map_err(|_| StoreError::Corrupt("slice key of wrong length".into()))?;
            Ok(u32::from_be_bytes(bytes))
        })
        .collect()
}
