//! Sealed layers (DESIGN §5): a complete layer's immutable files, which a reader needs
//! instead of sled. When a layer is complete the writer writes, beside its data file
//! `slices-07.dat`:
//!
//! * `layer-07.idx`: the place and digest of every slice, one fixed-size entry per
//!   prize-set rank (the rank is the position), after a header naming the game, and
//!   ending in the digest of everything before it ([`gops_common::sealed_index`]);
//! * `layer-07.json`: the layer's record (checksum, largest gap, counts) and the size
//!   and digest of the index file and of the part of the data file it points into.
//!
//! Each is written to a temporary file, synced and renamed, the index first, then the
//! record, then the directory synced, all before sled's layer record: a `layer-07.json`
//! present means the layer is sealed. A reader checks the files against each other when
//! it loads them (the index's own digest, the record's digest of the index, the slices'
//! digests folded into the record's checksum, the data file at least as long as the index
//! says); any disagreement is an error naming the file and layer, never a wrong value.
//! Nothing here writes unless asked to seal.

use std::path::{Path, PathBuf};

use gops_common::checksum::{Digest, LayerChecksum, digest_bytes, digest_hex};
use gops_common::prizes::prize_set_count;
pub use gops_common::sealed_index::{INDEX_VERSION, index_file_name, is_data_file_name};
use gops_common::sealed_index::{IndexEntry, IndexHeader, SealedIndex};
use serde::{Deserialize, Serialize};

use super::{LayerRecord, Manifest, StoreError};
use crate::store::files::Place;

/// The record file of layer `k`.
pub fn record_file_name(k: u8) -> String {
    format!("layer-{k:02}.json")
}

/// The sealed layers of one db, by k from 1 to N: each sealed, or not (yet).
pub struct SealedLayers {
    /// Layer k at k - 1.
    layers: Vec<Option<SealedLayer>>,
}

impl SealedLayers {
    /// No layer of the `n`-card game sealed.
    pub fn none(n: u8) -> SealedLayers {
        SealedLayers {
            layers: vec![None; usize::from(n)],
        }
    }

    /// The sealed layers of the db at `path`, each checked as [`SealedLayer::load`] does.
    pub fn load(path: &Path, manifest: &Manifest) -> Result<SealedLayers, StoreError> {
        let layers = (1..=manifest.n)
            .map(|k| SealedLayer::load(path, manifest, k))
            .collect::<Result<_, _>>()?;
        Ok(SealedLayers { layers })
    }

    /// Layer `k`, if sealed.
    pub fn get(&self, k: u8) -> Option<&SealedLayer> {
        let at = usize::from(k.checked_sub(1)?);
        self.layers.get(at)?.as_ref()
    }

    /// Records layer `k` (1 to N) as sealed.
    pub fn set(&mut self, k: u8, layer: SealedLayer) {
        self.layers[usize::from(k) - 1] = Some(layer);
    }

    /// Whether any layer is sealed.
    pub fn any(&self) -> bool {
        self.layers.iter().any(Option::is_some)
    }
}

/// Where one sealed slice lies and what its record's digest is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealedEntry {
    pub place: Place,
    pub digest: Digest,
}

/// A named file of a sealed layer: its size and digest (hex).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub file: String,
    pub bytes: u64,
    /// The blake3 digest of the whole file, where one is kept (the index's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blake3: Option<String>,
}

/// The contents of `layer-KK.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SealRecord {
    pub index_version: u32,
    pub record: LayerRecord,
    pub index: FileStamp,
    /// The data file and how many of its first bytes the index points into (later bytes,
    /// if any, are not this layer's sealed slices).
    pub data: FileStamp,
}

/// One sealed layer, checked: its record and the place of every slice.
#[derive(Clone, Debug, PartialEq)]
pub struct SealedLayer {
    pub record: LayerRecord,
    /// The data file's name within the db directory.
    pub data_file: String,
    entries: Vec<SealedEntry>,
}

impl SealedLayer {
    /// A layer sealed from `record` and the entries of its slices in rank order: one
    /// entry per slice the record counts, or the error that says how many.
    pub fn new(
        record: LayerRecord,
        data_file: String,
        entries: Vec<SealedEntry>,
    ) -> Result<SealedLayer, StoreError> {
        if entries.len() != record.slices {
            return Err(StoreError::Corrupt(format!(
                "layer {}: {} slices to seal, its record counts {}",
                record.k,
                entries.len(),
                record.slices
            )));
        }
        Ok(SealedLayer {
            record,
            data_file,
            entries,
        })
    }

    /// The entry of prize rank `rank`, if the layer has one.
    pub fn entry(&self, rank: u32) -> Option<&SealedEntry> {
        self.entries.get(rank as usize)
    }

    pub fn entries(&self) -> &[SealedEntry] {
        &self.entries
    }

    /// The index of this layer of the game `manifest` names.
    fn index(&self, manifest: &Manifest) -> Result<SealedIndex, StoreError> {
        Ok(SealedIndex {
            header: IndexHeader {
                format_version: manifest.format_version,
                n: manifest.n,
                objective: manifest.objective,
                k: self.record.k,
            },
            entries: self
                .entries
                .iter()
                .map(|e| IndexEntry {
                    offset: e.place.offset,
                    len: e.place.len,
                    digest: e.digest,
                })
                .collect(),
        })
    }

    /// Writes the layer's two files into `dir`, committed through one file, the record:
    /// the new index goes beside the old one ([`pending_index_file_name`]), then the
    /// record that names the new index's digest replaces the old record, then the new
    /// index replaces the old, each synced. A reader at any moment finds the index its
    /// record names (the pending one between the last two steps), so a re-seal cut short
    /// leaves the old layer or the new, never a mismatch. Once this returns, the layer
    /// reads as sealed after any crash.
    pub fn write(&self, dir: &Path, manifest: &Manifest) -> Result<(), StoreError> {
        let k = self.record.k;
        let index = self.index(manifest)?;
        let data_len = index.data_len();
        let index = index.encode();
        let seal = SealRecord {
            index_version: INDEX_VERSION,
            record: self.record.clone(),
            index: FileStamp {
                file: index_file_name(k),
                bytes: index.len() as u64,
                blake3: Some(digest_hex(&digest_bytes(&index))),
            },
            data: FileStamp {
                file: self.data_file.clone(),
                bytes: data_len,
                blake3: None,
            },
        };
        let json = serde_json::to_vec_pretty(&seal).expect("a seal record serialises");
        let pending = pending_index_file_name(k);
        replace_synced(dir, &pending, &index)?;
        replace_synced(dir, &record_file_name(k), &json)?;
        std::fs::rename(dir.join(&pending), dir.join(index_file_name(k)))
            .map_err(|e| super::file_io(e, &dir.join(index_file_name(k))))?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StoreError::Io(format!("{}: {e}", dir.display())))
    }

    /// Layer `k` of the db in `dir` if it is sealed (its record file is there), checked
    /// against `manifest` and against itself: its index file's digest, its slices'
    /// digests against the layer's checksum, and the data file's length.
    pub fn load(dir: &Path, manifest: &Manifest, k: u8) -> Result<Option<SealedLayer>, StoreError> {
        let record_path = dir.join(record_file_name(k));
        let json = match std::fs::read(&record_path) {
            Ok(json) => json,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::Io(format!("{}: {e}", record_path.display()))),
        };
        let damaged = |path: &Path, why: String| StoreError::DamagedLayer {
            k,
            file: path.to_path_buf(),
            why,
        };
        let seal: SealRecord = serde_json::from_slice(&json)
            .map_err(|e| damaged(&record_path, format!("not a layer record: {e}")))?;
        if seal.index_version != INDEX_VERSION
            || seal.record.k != k
            || seal.index.file != index_file_name(k)
        {
            return Err(damaged(
                &record_path,
                format!(
                    "it names index version {}, layer {}, index file {} (this build reads version {INDEX_VERSION})",
                    seal.index_version, seal.record.k, seal.index.file
                ),
            ));
        }
        let index_path = dir.join(&seal.index.file);
        let named = |bytes: &[u8]| {
            bytes.len() as u64 == seal.index.bytes
                && seal.index.blake3.as_deref() == Some(digest_hex(&digest_bytes(bytes)).as_str())
        };
        let mut bytes =
            std::fs::read(&index_path).map_err(|e| damaged(&index_path, e.to_string()))?;
        if !named(&bytes) {
            // a re-seal cut short after its record: the index it names is still pending
            if let Ok(pending) = std::fs::read(dir.join(pending_index_file_name(k)))
                && named(&pending)
            {
                bytes = pending;
            }
        }
        if !named(&bytes) {
            return Err(damaged(
                &index_path,
                format!(
                    "{} bytes whose digest is not the one {} gives ({} bytes)",
                    bytes.len(),
                    record_file_name(k),
                    seal.index.bytes
                ),
            ));
        }
        let slices = prize_set_count(manifest.n, k);
        let index =
            decode_index(&bytes, manifest, k, slices).map_err(|why| damaged(&index_path, why))?;
        if seal.record.slices != slices {
            return Err(damaged(
                &record_path,
                format!(
                    "{} slices recorded, the layer has {slices}",
                    seal.record.slices
                ),
            ));
        }
        let mut checksum = LayerChecksum::new();
        index.entries.iter().for_each(|e| checksum.add(&e.digest));
        if checksum.finish() != seal.record.checksum {
            return Err(damaged(
                &index_path,
                format!(
                    "its slices' digests do not give the layer's checksum {}",
                    seal.record.checksum
                ),
            ));
        }
        let data_len = index.data_len();
        if !is_data_file_name(&seal.data.file) || data_len != seal.data.bytes {
            return Err(damaged(
                &record_path,
                format!(
                    "data file {} of {} bytes named, the index points into {data_len} bytes",
                    seal.data.file, seal.data.bytes
                ),
            ));
        }
        let data_path = dir.join(&seal.data.file);
        let on_disk = std::fs::metadata(&data_path)
            .map_err(|e| damaged(&data_path, e.to_string()))?
            .len();
        if on_disk < data_len {
            return Err(damaged(
                &data_path,
                format!("{on_disk} bytes, shorter than the {data_len} its index points into"),
            ));
        }
        Ok(Some(SealedLayer {
            record: seal.record,
            data_file: seal.data.file,
            entries: index
                .entries
                .iter()
                .map(|e| SealedEntry {
                    place: Place {
                        offset: e.offset,
                        len: e.len,
                    },
                    digest: e.digest,
                })
                .collect(),
        }))
    }
}

/// The index in `bytes`, checked against the game `manifest` names, layer `k` and its
/// number of `slices`.
fn decode_index(
    bytes: &[u8],
    manifest: &Manifest,
    k: u8,
    slices: usize,
) -> Result<SealedIndex, String> {
    let index = SealedIndex::decode(bytes).map_err(|e| e.to_string())?;
    let h = &index.header;
    let objective = manifest.objective;
    if (h.format_version, h.n, h.objective, h.k, index.entries.len())
        != (manifest.format_version, manifest.n, objective, k, slices)
    {
        return Err(format!(
            "it is of format {}, the {}-card {} game, layer {}, {} slices; the db is of format {}, the {}-card {objective} game, layer {k}, {slices} slices",
            h.format_version,
            h.n,
            h.objective,
            h.k,
            index.entries.len(),
            manifest.format_version,
            manifest.n
        ));
    }
    Ok(index)
}

/// Where a re-seal puts layer `k`'s new index until its record names it
/// ([`SealedLayer::write`]).
pub fn pending_index_file_name(k: u8) -> String {
    format!("{}.next", index_file_name(k))
}

/// Writes `bytes` to `dir/name` through a synced temporary file renamed over it.
fn replace_synced(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write;
    let path: PathBuf = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| super::file_io(e, &path))
}

#[cfg(test)]
mod tests;
