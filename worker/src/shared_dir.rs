//! Dependency slices read straight from the coordinator's db directory, mounted on the
//! worker's machine through a shared file system (`gops worker --slices-dir DIR`), so
//! their bytes do not pass through the coordinator. Where each record lies (file,
//! offset, length and digest) comes from the layer's sealed index in the directory
//! (`layer-KK.idx`, [`gops_common::sealed_index`]) when the layer is sealed there for
//! the run's game, else from the coordinator (`LocateSlices`). A record is accepted only
//! if it names that digest and its body hashes to it, so a directory that is not the
//! run's, a file cut short or a stale mount is never used, only reported; the caller
//! fetches those slices instead.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gops_common::objective::Objective;
use gops_common::prizes::prize_set_count;
use gops_common::sealed_index::{SealedIndex, index_file_name, is_data_file_name};
use gops_common::slice::SliceBytes;
use gops_common::sync::lock;
use gops_proto::v1::SlicePlace;

/// The coordinator's db directory as this worker sees it, and its data files, each
/// opened once.
#[derive(Clone, Debug)]
pub struct SharedDir {
    dir: PathBuf,
    open: Arc<Mutex<HashMap<String, Arc<File>>>>,
    /// Sealed indexes by layer, each looked for once: `None` where the layer is not
    /// sealed in the directory for the run's game (yet: looked for again next time).
    sealed: Arc<Mutex<HashMap<u8, Arc<SealedIndex>>>>,
}

impl SharedDir {
    /// `dir` must be a directory (it is bad input otherwise: said before any work).
    pub fn new(dir: &Path) -> Result<SharedDir, String> {
        if !dir.is_dir() {
            return Err(format!("{} is not a directory", dir.display()));
        }
        Ok(SharedDir {
            dir: dir.to_path_buf(),
            open: Arc::new(Mutex::new(HashMap::new())),
            sealed: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Where the slices `ranks` of layer `k` lie, from the layer's sealed index in the
    /// directory, if it is there and of the `n`-card `objective` game; `None` otherwise
    /// (the coordinator is asked instead). An index found is kept: a sealed layer does
    /// not change.
    pub fn sealed_places(
        &self,
        n: u8,
        objective: Objective,
        k: u8,
        ranks: &[u32],
    ) -> Option<Vec<SlicePlace>> {
        let index = self.sealed_index(n, objective, k)?;
        let file = format!("slices-{k:02}.dat");
        ranks
            .iter()
            .map(|&rank| {
                index.entries.get(rank as usize).map(|e| SlicePlace {
                    prize_rank: rank,
                    file: file.clone(),
                    offset: e.offset,
                    len: e.len,
                    digest: e.digest.to_vec(),
                })
            })
            .collect()
    }

    fn sealed_index(&self, n: u8, objective: Objective, k: u8) -> Option<Arc<SealedIndex>> {
        let mut sealed = lock(&self.sealed);
        if let Some(index) = sealed.get(&k) {
            return Some(Arc::clone(index));
        }
        let bytes = std::fs::read(self.dir.join(index_file_name(k))).ok()?;
        let index = SealedIndex::decode(&bytes).ok()?;
        let h = &index.header;
        let ours = (h.n, h.objective, h.k, index.entries.len())
            == (n, objective, k, prize_set_count(n, k));
        if !ours {
            return None;
        }
        let index = Arc::new(index);
        sealed.insert(k, Arc::clone(&index));
        Some(index)
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The record at `place`, checked: a plain data-file name, a length a message could
    /// carry, the digest the coordinator named, a body that hashes to it.
    pub fn read(&self, place: &SlicePlace) -> Result<SliceBytes, String> {
        if place.file.is_empty() {
            return Err("not in a data file".into());
        }
        if !is_data_file_name(&place.file) {
            return Err(format!("'{}' is not a data file's name", place.file));
        }
        let len = place.len as usize;
        if !(SliceBytes::RECORD_HEADER..=gops_proto::MAX_MESSAGE_BYTES).contains(&len) {
            return Err(format!("a record of {len} bytes"));
        }
        let file = self.file(&place.file)?;
        let mut record = vec![0u8; len];
        file.read_exact_at(&mut record, place.offset).map_err(|e| {
            format!(
                "{} bytes at {} of {}: {e}",
                len,
                place.offset,
                self.dir.join(&place.file).display()
            )
        })?;
        let bytes = SliceBytes::from_record(&record)
            .map_err(|why| format!("{}: {why}", self.dir.join(&place.file).display()))?;
        if bytes.digest.as_slice() != place.digest.as_slice() {
            return Err(format!(
                "{} holds another slice at {} (is it this run's db directory?)",
                self.dir.join(&place.file).display(),
                place.offset
            ));
        }
        Ok(bytes)
    }

    fn file(&self, name: &str) -> Result<Arc<File>, String> {
        let mut open = lock(&self.open);
        if let Some(file) = open.get(name) {
            return Ok(Arc::clone(file));
        }
        let path = self.dir.join(name);
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = Arc::new(file);
        open.insert(name.to_string(), Arc::clone(&file));
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::slice::Slice;

    fn bytes(v: f64) -> SliceBytes {
        SliceBytes::of(&Slice::dense(0, vec![v; 5]), 0.0, 3)
    }

    /// A data file holding the records of `slices`, and their places.
    fn data_file(dir: &Path, slices: &[SliceBytes]) -> Vec<SlicePlace> {
        let mut joined = Vec::new();
        let mut places = Vec::new();
        for (rank, s) in slices.iter().enumerate() {
            let record = s.to_record();
            places.push(SlicePlace {
                prize_rank: rank as u32,
                file: "slices-03.dat".into(),
                offset: joined.len() as u64,
                len: record.len() as u32,
                digest: s.digest.to_vec(),
            });
            joined.extend_from_slice(&record);
        }
        std::fs::write(dir.join("slices-03.dat"), joined).unwrap();
        places
    }

    #[test]
    fn a_located_record_is_read_only_when_it_is_the_slice_named() {
        let dir = tempfile::tempdir().unwrap();
        let slices = [bytes(1.0), bytes(2.0)];
        let places = data_file(dir.path(), &slices);
        let shared = SharedDir::new(dir.path()).unwrap();
        assert_eq!(shared.read(&places[0]).unwrap(), slices[0]);
        assert_eq!(shared.read(&places[1]).unwrap(), slices[1]);
        // another slice's digest: the directory is not what the coordinator has
        let swapped = SlicePlace {
            digest: places[0].digest.clone(),
            ..places[1].clone()
        };
        assert!(shared.read(&swapped).unwrap_err().contains("another slice"));
        // a place past the end, a shifted one, a name outside, none, an absurd length
        let past = SlicePlace {
            offset: 1 << 20,
            ..places[1].clone()
        };
        let shifted = SlicePlace {
            offset: places[1].offset + 1,
            ..places[1].clone()
        };
        let outside = SlicePlace {
            file: "../slices-03.dat".into(),
            ..places[0].clone()
        };
        let nowhere = SlicePlace {
            file: String::new(),
            ..places[0].clone()
        };
        let huge = SlicePlace {
            len: u32::MAX,
            ..places[0].clone()
        };
        for bad in [past, shifted, outside, nowhere, huge] {
            assert!(shared.read(&bad).is_err(), "{bad:?}");
        }
        // a data file that is not there
        let missing = SlicePlace {
            file: "slices-04.dat".into(),
            ..places[0].clone()
        };
        assert!(shared.read(&missing).unwrap_err().contains("slices-04.dat"));
        assert!(SharedDir::new(&dir.path().join("nothing")).is_err());
    }

    #[test]
    fn a_sealed_index_of_the_runs_game_gives_the_places_and_another_none() {
        use gops_common::sealed_index::{IndexEntry, IndexHeader};
        let dir = tempfile::tempdir().unwrap();
        // layer 3 of the 4-card game: 4 prize sets
        let slices = [bytes(1.0), bytes(2.0), bytes(3.0), bytes(4.0)];
        let places = data_file(dir.path(), &slices);
        let index = |objective| SealedIndex {
            header: IndexHeader {
                format_version: 6,
                n: 4,
                objective,
                k: 3,
            },
            entries: places
                .iter()
                .map(|p| IndexEntry {
                    offset: p.offset,
                    len: p.len,
                    digest: p.digest.clone().try_into().unwrap(),
                })
                .collect(),
        };
        let shared = SharedDir::new(dir.path()).unwrap();
        // not sealed (yet): the coordinator is asked
        assert_eq!(shared.sealed_places(4, Objective::Points, 3, &[1]), None);
        std::fs::write(
            dir.path().join("layer-03.idx"),
            index(Objective::Win).encode(),
        )
        .unwrap();
        assert_eq!(shared.sealed_places(4, Objective::Points, 3, &[1]), None);
        assert_eq!(shared.sealed_places(5, Objective::Win, 3, &[1]), None);
        std::fs::write(
            dir.path().join("layer-03.idx"),
            index(Objective::Points).encode(),
        )
        .unwrap();
        let found = shared
            .sealed_places(4, Objective::Points, 3, &[2, 0])
            .unwrap();
        assert_eq!(found, vec![places[2].clone(), places[0].clone()]);
        assert_eq!(shared.read(&found[0]).unwrap(), slices[2]);
        // a rank outside the layer: no places from the index
        assert_eq!(shared.sealed_places(4, Objective::Points, 3, &[4]), None);
        // an index cut short is not used
        let dir2 = tempfile::tempdir().unwrap();
        let bytes_of = index(Objective::Points).encode();
        std::fs::write(
            dir2.path().join("layer-03.idx"),
            &bytes_of[..bytes_of.len() - 1],
        )
        .unwrap();
        let other = SharedDir::new(dir2.path()).unwrap();
        assert_eq!(other.sealed_places(4, Objective::Points, 3, &[0]), None);
    }
}
