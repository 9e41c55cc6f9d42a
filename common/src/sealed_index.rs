//! The bytes of a sealed layer's index, `layer-KK.idx` (DESIGN §5): where each slice's
//! record lies in the layer's data file, and its digest, one fixed-size entry per prize
//! rank (the rank is the position), after a header naming the game and before the digest
//! of everything before it. The db writes and reads it; a worker reading a shared db
//! directory reads it too.
//!
//! Layout, little-endian: magic `GOPSIDX\0` (8 bytes), index version (u32), db format
//! (u32), N (u8), objective (u8: 0 points, 1 win), k (u8), 0 (u8), slices (u32), bytes of
//! the data file the entries lie within (u64); then per slice its offset (u64), length
//! (u32) and blake3 digest (32 bytes); then the blake3 digest of all of the above.

use crate::checksum::{Digest, digest_bytes};
use crate::objective::Objective;

const MAGIC: &[u8; 8] = b"GOPSIDX\0";
/// The index file's own layout; bumped if it ever changes.
pub const INDEX_VERSION: u32 = 1;
const HEADER_BYTES: usize = 32;
/// Offset (8), length (4) and digest (32) of one slice's record.
pub const ENTRY_BYTES: usize = 8 + 4 + 32;
const TRAILER_BYTES: usize = 32;

/// The index file of layer `k` in a db directory.
pub fn index_file_name(k: u8) -> String {
    format!("layer-{k:02}.idx")
}

/// Whether `name` is a data file's name as a db gives it (`slices-07.dat`): nothing that
/// leaves the directory, so a name read from a sealed record or sent by a coordinator
/// can be joined to the db's path.
pub fn is_data_file_name(name: &str) -> bool {
    name.ends_with(".dat")
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Which layer of which game an index is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexHeader {
    pub format_version: u32,
    pub n: u8,
    pub objective: Objective,
    pub k: u8,
}

/// Where one slice's record lies and the digest its header carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub offset: u64,
    pub len: u32,
    pub digest: Digest,
}

impl IndexEntry {
    /// The end of the record in its data file.
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.len)
    }
}

/// A layer's index: its header and one entry per prize rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedIndex {
    pub header: IndexHeader,
    pub entries: Vec<IndexEntry>,
}

impl SealedIndex {
    /// The bytes of the data file the entries lie within.
    pub fn data_len(&self) -> u64 {
        self.entries.iter().map(IndexEntry::end).max().unwrap_or(0)
    }

    pub fn encode(&self) -> Vec<u8> {
        let h = &self.header;
        let mut bytes =
            Vec::with_capacity(HEADER_BYTES + self.entries.len() * ENTRY_BYTES + TRAILER_BYTES);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&INDEX_VERSION.to_le_bytes());
        bytes.extend_from_slice(&h.format_version.to_le_bytes());
        bytes.extend_from_slice(&[h.n, objective_code(h.objective), h.k, 0]);
        bytes.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&self.data_len().to_le_bytes());
        for entry in &self.entries {
            bytes.extend_from_slice(&entry.offset.to_le_bytes());
            bytes.extend_from_slice(&entry.len.to_le_bytes());
            bytes.extend_from_slice(&entry.digest);
        }
        let digest = digest_bytes(&bytes);
        bytes.extend_from_slice(&digest);
        bytes
    }

    /// An index from its bytes, checked: magic, version, length, the trailing digest,
    /// entries that lie within the data file length the header gives.
    pub fn decode(bytes: &[u8]) -> Result<SealedIndex, IndexError> {
        if bytes.len() < HEADER_BYTES + TRAILER_BYTES {
            return Err(IndexError::TooShort { bytes: bytes.len() });
        }
        let (body, trailer) = bytes.split_at(bytes.len() - TRAILER_BYTES);
        if digest_bytes(body).as_slice() != trailer {
            return Err(IndexError::Digest);
        }
        let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().expect("4"));
        let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8"));
        if &body[..8] != MAGIC || u32_at(8) != INDEX_VERSION {
            return Err(IndexError::NotAnIndex);
        }
        let objective = match body[17] {
            0 => Objective::Points,
            1 => Objective::Win,
            code => return Err(IndexError::Objective { code }),
        };
        let header = IndexHeader {
            format_version: u32_at(12),
            n: body[16],
            objective,
            k: body[18],
        };
        let slices = u32_at(20) as usize;
        let data_len = u64_at(24);
        if body.len() != HEADER_BYTES + slices * ENTRY_BYTES {
            return Err(IndexError::Length {
                bytes: bytes.len(),
                slices,
                want: HEADER_BYTES + slices * ENTRY_BYTES + TRAILER_BYTES,
            });
        }
        let entries: Vec<IndexEntry> = body[HEADER_BYTES..]
            .chunks_exact(ENTRY_BYTES)
            .map(|e| IndexEntry {
                offset: u64::from_le_bytes(e[..8].try_into().expect("8")),
                len: u32::from_le_bytes(e[8..12].try_into().expect("4")),
                digest: e[12..].try_into().expect("32"),
            })
            .collect();
        let index = SealedIndex { header, entries };
        if index.data_len() != data_len {
            return Err(IndexError::DataLength {
                entries: index.data_len(),
                header: data_len,
            });
        }
        Ok(index)
    }
}

/// Why bytes are not a sealed index.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error("{bytes} bytes, too short for an index")]
    TooShort { bytes: usize },
    #[error("its bytes do not match their digest")]
    Digest,
    #[error("not an index of version {INDEX_VERSION} (this build's)")]
    NotAnIndex,
    #[error("objective code {code}")]
    Objective { code: u8 },
    #[error("{bytes} bytes, an index of {slices} slices has {want}")]
    Length {
        bytes: usize,
        slices: usize,
        want: usize,
    },
    #[error("its entries lie within {entries} bytes of the data file, its header says {header}")]
    DataLength { entries: u64, header: u64 },
}

fn objective_code(objective: Objective) -> u8 {
    match objective {
        Objective::Points => 0,
        Objective::Win => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> SealedIndex {
        SealedIndex {
            header: IndexHeader {
                format_version: 6,
                n: 7,
                objective: Objective::Win,
                k: 3,
            },
            entries: (0..5u8)
                .map(|i| IndexEntry {
                    offset: 100 * u64::from(i),
                    len: 90,
                    digest: [i; 32],
                })
                .collect(),
        }
    }

    #[test]
    fn an_index_round_trips_and_any_changed_byte_is_refused() {
        let bytes = index().encode();
        assert_eq!(bytes.len(), 32 + 5 * ENTRY_BYTES + 32);
        assert_eq!(SealedIndex::decode(&bytes).unwrap(), index());
        assert_eq!(index().data_len(), 490);
        for at in [0, 9, 17, 20, 24, 40, bytes.len() - 1] {
            let mut altered = bytes.clone();
            altered[at] ^= 0x40;
            assert!(SealedIndex::decode(&altered).is_err(), "byte {at}");
        }
        for len in [0, 10, 63, bytes.len() - 1] {
            assert!(SealedIndex::decode(&bytes[..len]).is_err(), "{len} bytes");
        }
        assert_eq!(
            SealedIndex::decode(&bytes[..10]),
            Err(IndexError::TooShort { bytes: 10 })
        );
        let mut altered = bytes.clone();
        altered[0] ^= 1;
        assert_eq!(SealedIndex::decode(&altered), Err(IndexError::Digest));
    }
}
