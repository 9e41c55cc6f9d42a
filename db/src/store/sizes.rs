//! How many bytes a stored slice's record takes, from the index alone (no data file is
//! read): what `gops verify` weighs its batches of prize sets by.

use super::error::{io, missing_slice};
use super::records::indexed_place;
use super::{Store, StoreError, slice_key};

impl Store {
    /// The bytes of the record of slice `rank` of layer `k` (header and body), from the
    /// index; a format-3 db's slice kept inside sled is read for it. Missing is damage,
    /// as for [`Store::require_slice`].
    pub fn record_bytes(&self, k: u8, rank: u32) -> Result<u64, StoreError> {
        let key = slice_key(k, rank);
        if let Some(entry) = self.index.get(key).map_err(io)? {
            return Ok(u64::from(indexed_place(k, rank, &entry)?.len));
        }
        match &self.legacy {
            Some(legacy) => match legacy.get(key).map_err(io)? {
                Some(bytes) => Ok(bytes.len() as u64),
                None => Err(missing_slice(k, rank)),
            },
            None => Err(missing_slice(k, rank)),
        }
    }
}
