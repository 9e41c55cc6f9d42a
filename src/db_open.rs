//! Opening a db to read it (every command but `solve`, `coordinator` and `seal`): through
//! its sealed layers when it has them, with no lock and nothing written; an unsealed db
//! of an earlier build the old way, with a hint that `gops seal` frees its readers.

use std::path::Path;

use gops_db::store::Store;
use tracing::warn;

use crate::failure::Failure;

/// The db at `path`, opened for reading.
pub fn open_reader(path: &Path) -> Result<Store, Failure> {
    let store = Store::open_existing(path)?;
    let unsealed = store.unsealed_layers()?;
    if !unsealed.is_empty() {
        warn!(
            db = %path.display(),
            layers = unsealed.len(),
            "this db's complete layers are not sealed (an earlier build wrote it): it is read through its lock, one process at a time, and written to by the read; `gops seal --db {}` seals them once, for any number of readers at once, on read-only media too",
            path.display()
        );
    }
    Ok(store)
}
