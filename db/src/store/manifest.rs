//! The db's manifest (N, objective, format version) and its format history, and the
//! records of stored slices and complete layers.

use gops_common::checksum::Digest;
use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use serde::{Deserialize, Serialize};

use std::path::Path;

use super::records::write_synced;
use super::{Store, StoreError};

/// Bumped whenever the byte layout of any record changes, or the engine's arithmetic does
/// (a resumed layer must be computed exactly as its first part was). New dbs are made in
/// this format.
///
/// 6: `win` slices hold only the score differences that can occur
/// ([`gops_common::reach::Reach`]); `points` dbs are laid out and computed as in format 5.
pub const FORMAT_VERSION: u32 = 6;
/// The kernel starts each simplex on B's minimax column ([`PivotStart::Minimax`]); the
/// bytes are laid out as in format 4. `points` dbs of this format are read and resumed
/// as they are; `win` dbs of it are refused ([`StoreError::WinFormat`]).
pub const FORMAT_5: u32 = 5;
/// The first format whose `win` slices hold only the score differences that can occur.
pub const REACHABLE_WIN_FORMAT: u32 = 6;
/// Slices in data files beside sled, values from the kernel that starts on the leftmost
/// column: read, solved into (resumed) with that kernel, and kept in that format.
pub const FORMAT_4: u32 = 4;
/// The format before slice bytes moved out of sled: read, and upgraded to format 4 (its
/// arithmetic) when solved into.
pub const LEGACY_FORMAT_VERSION: u32 = 3;
pub(super) const MANIFEST_KEY: &[u8] = b"manifest";
/// A copy of the manifest beside sled's files, so commands can validate their input
/// against the game (N, objective) without opening, and so touching, the database.
pub(super) const MANIFEST_FILE: &str = "manifest.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub n: u8,
    pub objective: Objective,
    pub created_by: String,
    /// Set in a book: the layers it keeps and the full db's records of all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub book: Option<BookInfo>,
    /// Set in a rolling solve ([`Store::set_keep_from_layer`]): the layers below this
    /// one lose their data once the layer above them is sealed, and the finished db is
    /// a book of the layers from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_from_layer: Option<u8>,
}

/// What a book's manifest adds ([`crate::book`]): the lowest layer it keeps (the
/// layers below it are solved on demand) and every layer's record as the full db it
/// was made from holds it, so that its status names every layer's checksum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookInfo {
    pub from_layer: u8,
    /// Layers 1..=n, in order.
    pub layers: Vec<LayerRecord>,
}

impl Manifest {
    /// How the kernel started its simplex for this db's values, so that resuming,
    /// checking and querying it compute exactly as its solve did.
    pub fn pivot_start(&self) -> PivotStart {
        if self.format_version >= FORMAT_5 {
            PivotStart::Minimax
        } else {
            PivotStart::Leftmost
        }
    }
}

/// A complete layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerRecord {
    pub k: u8,
    pub slices: usize,
    /// Canonical (pattern, prize set) states of the layer, both orientations.
    pub states: u64,
    /// Values stored (one orientation; for `win`, only the windows between ±1).
    pub stored_values: u64,
    /// Values a dense layout would store (every live score difference).
    pub dense_values: u64,
    /// Hex digest of the layer's values in prize-rank order.
    pub checksum: String,
    /// Largest certificate gap over the layer's matrix games.
    pub max_gap: f64,
    /// Matrix games solved for the layer's slices (summed over their records, so every
    /// run of a resumed solve counts); `None` in a record written before this field.
    #[serde(default)]
    pub matrix_games: Option<u64>,
}

impl LayerRecord {
    /// The record of a complete layer: its size, and the digests of its slices in
    /// prize-rank order folded into the checksum.
    pub fn complete<'a>(
        size: &gops_common::plan::LayerSize,
        digests: impl IntoIterator<Item = &'a Digest>,
        max_gap: f64,
        stored_values: u64,
        matrix_games: u64,
    ) -> LayerRecord {
        let mut checksum = gops_common::checksum::LayerChecksum::new();
        digests.into_iter().for_each(|d| checksum.add(d));
        LayerRecord {
            k: size.k,
            slices: size.slices,
            states: size.states,
            stored_values,
            dense_values: size.dense_values,
            checksum: checksum.finish(),
            max_gap,
            matrix_games: Some(matrix_games),
        }
    }
}

impl Store {
    pub(super) fn decode_manifest(bytes: &[u8]) -> Result<Manifest, StoreError> {
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| StoreError::Corrupt(format!("manifest: {e}")))?;
        if !(LEGACY_FORMAT_VERSION..=FORMAT_VERSION).contains(&manifest.format_version) {
            return Err(StoreError::Version {
                found: manifest.format_version,
            });
        }
        let objective = manifest.objective;
        if !(1..=gops_common::MAX_N).contains(&manifest.n) {
            return Err(StoreError::Corrupt(format!("manifest: n = {}", manifest.n)));
        }
        if objective == Objective::Win && manifest.format_version < REACHABLE_WIN_FORMAT {
            return Err(StoreError::WinFormat {
                n: manifest.n,
                found: manifest.format_version,
            });
        }
        Ok(manifest)
    }

    /// Writes the manifest file, replacing any: durable before it is in place, and its
    /// directory entry durable after, so a power cut leaves the old file or the new one,
    /// never an empty one.
    pub(crate) fn write_manifest_file(path: &Path, manifest: &Manifest) -> Result<(), StoreError> {
        let file = path.join(MANIFEST_FILE);
        let tmp = path.join(format!("{MANIFEST_FILE}.tmp"));
        let bytes = serde_json::to_vec_pretty(manifest).expect("manifest serialises");
        write_synced(&tmp, &bytes)
            .and_then(|()| std::fs::rename(&tmp, &file))
            .and_then(|()| std::fs::File::open(path)?.sync_all())
            .map_err(|e| StoreError::Io(format!("{}: {e}", file.display())))
    }
}
