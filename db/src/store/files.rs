//! The bytes of stored slices: append-only data files beside sled's, one per layer and
//! kind (`slices-07.dat` for layer 7's slices, `unconfirmed-07.dat` for its copies
//! awaiting a second one). The store's sled index maps (layer, rank) to a [`Place`] in
//! them; sled itself never holds a slice's bytes, so reading a layer costs the process
//! no memory beyond the one record being read (the kernel's page cache holds the rest,
//! and gives it back under pressure).
//!
//! A record is written, then synced, then indexed: a crash between the two leaves bytes
//! nobody points to, never an index entry without its bytes. Records are never
//! overwritten in place; a slice stored again (a repaired one) is appended and indexed
//! anew, and the old bytes are left unreferenced.

use gops_common::sync::lock;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where one record lies in its layer's data file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub offset: u64,
    pub len: u32,
}

impl Place {
    pub const ENCODED: usize = 12;

    pub fn encode(self) -> [u8; Self::ENCODED] {
        let mut bytes = [0u8; Self::ENCODED];
        bytes[..8].copy_from_slice(&self.offset.to_le_bytes());
        bytes[8..].copy_from_slice(&self.len.to_le_bytes());
        bytes
    }

    pub fn decode(bytes: &[u8]) -> Option<Place> {
        let bytes: &[u8; Self::ENCODED] = bytes.try_into().ok()?;
        Some(Place {
            offset: u64::from_le_bytes(bytes[..8].try_into().ok()?),
            len: u32::from_le_bytes(bytes[8..].try_into().ok()?),
        })
    }
}

/// One layer's data file, and where the next record goes.
struct DataFile {
    file: File,
    end: Mutex<u64>,
}

/// The data files of one kind of record (`prefix`) in a db directory.
pub struct SliceFiles {
    dir: PathBuf,
    prefix: &'static str,
    /// Opened for appending too (the writer's), or for reading only (works on a
    /// read-only file system; appends fail).
    writable: bool,
    open: Mutex<HashMap<u8, Arc<DataFile>>>,
}

impl SliceFiles {
    /// The writer's files: read and appended to.
    pub fn new(dir: &Path, prefix: &'static str) -> SliceFiles {
        SliceFiles {
            dir: dir.to_path_buf(),
            prefix,
            writable: true,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// A reader's files: opened for reading only, never created.
    pub fn reading(dir: &Path, prefix: &'static str) -> SliceFiles {
        SliceFiles {
            writable: false,
            ..SliceFiles::new(dir, prefix)
        }
    }

    pub fn path(&self, k: u8) -> PathBuf {
        self.dir.join(self.file_name(k))
    }

    /// The name of layer `k`'s data file within the db directory.
    pub fn file_name(&self, k: u8) -> String {
        format!("{}-{k:02}.dat", self.prefix)
    }

    /// The data file of layer `k`, opened once; `create` makes it if it is missing.
    fn data_file(&self, k: u8, create: bool) -> io::Result<Arc<DataFile>> {
        let mut open = lock(&self.open);
        if let Some(file) = open.get(&k) {
            return Ok(Arc::clone(file));
        }
        if create && !self.writable {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "data files opened for reading only",
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(self.writable)
            .create(create)
            .truncate(false)
            .open(self.path(k))?;
        if create {
            // the new file's directory entry durable before anything points into it
            File::open(&self.dir)?.sync_all()?;
        }
        // bytes past the last indexed record (a write cut short) are left as they are
        let end = file.metadata()?.len();
        let data = Arc::new(DataFile {
            file,
            end: Mutex::new(end),
        });
        open.insert(k, Arc::clone(&data));
        Ok(data)
    }

    /// Appends `records` to layer `k`'s file in one write and syncs it; their places, in
    /// order. On an error nothing is indexed, and the next append reuses the space.
    pub fn append(&self, k: u8, records: &[Vec<u8>]) -> io::Result<Vec<Place>> {
        let data = self.data_file(k, true)?;
        let mut joined = Vec::with_capacity(records.iter().map(Vec::len).sum());
        let mut places = Vec::with_capacity(records.len());
        {
            let mut end = lock(&data.end);
            for record in records {
                let len = u32::try_from(record.len()).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidInput, "slice record over 4 GiB")
                })?;
                places.push(Place {
                    offset: *end + joined.len() as u64,
                    len,
                });
                joined.extend_from_slice(record);
            }
            data.file.write_all_at(&joined, *end)?;
            *end += joined.len() as u64;
        }
        data.file.sync_data()?;
        Ok(places)
    }

    /// The record at `place` of layer `k`'s file. A missing file or a place past its end
    /// is an error of kind `NotFound` / `UnexpectedEof`.
    pub fn read(&self, k: u8, place: Place) -> io::Result<Vec<u8>> {
        let data = self.data_file(k, false)?;
        let mut bytes = vec![0u8; place.len as usize];
        data.file.read_exact_at(&mut bytes, place.offset)?;
        Ok(bytes)
    }

    /// Deletes layer `k`'s data file if it is there (what it held is no longer indexed);
    /// a read in flight finishes on the file it opened.
    pub fn remove(&self, k: u8) -> io::Result<()> {
        lock(&self.open).remove(&k);
        match std::fs::remove_file(self.path(k)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Deletes every data file of this kind (what they held is no longer indexed).
    pub fn remove_all(&self) -> io::Result<()> {
        let mut open = lock(&self.open);
        open.clear();
        for k in 0..=u8::MAX {
            match std::fs::remove_file(self.path(k)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_from_where_they_were_put() {
        let dir = tempfile::tempdir().unwrap();
        let files = SliceFiles::new(dir.path(), "slices");
        let first = files.append(3, &[vec![1, 2, 3], vec![4; 5]]).unwrap();
        let second = files.append(3, &[vec![9; 7]]).unwrap();
        assert_eq!(first[0], Place { offset: 0, len: 3 });
        assert_eq!(first[1], Place { offset: 3, len: 5 });
        assert_eq!(second[0], Place { offset: 8, len: 7 });
        assert_eq!(files.read(3, first[1]).unwrap(), vec![4; 5]);
        assert_eq!(files.read(3, second[0]).unwrap(), vec![9; 7]);
        // a fresh handle (another process) appends after what is there
        let again = SliceFiles::new(dir.path(), "slices");
        assert_eq!(again.read(3, first[0]).unwrap(), vec![1, 2, 3]);
        assert_eq!(again.append(3, &[vec![0]]).unwrap()[0].offset, 15);
        assert_eq!(
            again
                .read(3, Place { offset: 14, len: 9 })
                .unwrap_err()
                .kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert_eq!(
            again.read(4, first[0]).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(!again.path(4).exists(), "a read creates nothing");
        again.remove_all().unwrap();
        assert!(!again.path(3).exists());
    }

    #[test]
    fn places_round_trip_and_wrong_lengths_are_refused() {
        let place = Place {
            offset: 1 << 40,
            len: 123_456,
        };
        assert_eq!(Place::decode(&place.encode()), Some(place));
        assert_eq!(Place::decode(&[0; 11]), None);
    }
}
