//! Opening a db to read it (every command but `solve`, `coordinator` and `seal`): through
//! its sealed layers when it has them, with no lock and nothing written; an unsealed db
//! of an earlier build the old way, with a hint that `gops seal` frees its readers. A
//! book gets its on-demand limits (named by the command line's flags in a refusal) and
//! progress here, at the door. And opening one to solve into (`solve`, `coordinator`),
//! with its rolling setting.

use std::path::Path;
use std::sync::Arc;

use gops_db::book::on_demand::{LimitNames, OnDemandLimits};
use gops_db::book::{Book, ReadOptions};
use gops_db::store::Store;
use tracing::warn;

use crate::args::OnDemandArgs;
use crate::failure::Failure;

/// The db at `path`, opened for reading with `options` (a book's on-demand limits:
/// [`read_options`]).
pub fn open_reader(path: &Path, options: &ReadOptions) -> Result<Book, Failure> {
    Ok(Book::of(open_store(path)?, options))
}

/// The store of the db at `path`, opened for reading (its status, its export, a book of
/// it: nothing solved on demand).
pub fn open_store(path: &Path) -> Result<Store, Failure> {
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

/// What the flags of `on_demand` let a book solve, with the command line's progress.
pub fn read_options(on_demand: &OnDemandArgs) -> ReadOptions {
    let defaults = OnDemandLimits::default();
    ReadOptions {
        limits: OnDemandLimits {
            max_games: on_demand.max_on_demand_games.unwrap_or(defaults.max_games),
            memory_bytes: on_demand
                .memory_mb
                .map_or(defaults.memory_bytes, |mb| mb << 20),
            names: LimitNames::FLAGS,
        },
        observer: Some(Arc::new(crate::on_demand_progress::OnDemandProgress::new())),
        ..ReadOptions::default()
    }
}

/// Opens (or creates) the db at `path` to solve the `n`-card `objective` game into, a
/// rolling solve from layer `keep_from_layer` where given (`solve` and `coordinator`).
pub fn open_to_solve(
    path: &Path,
    n: u8,
    objective: gops_common::Objective,
    keep_from_layer: Option<u8>,
) -> Result<Store, Failure> {
    let mut store = Store::open_or_create(path, n, objective)?;
    if let Some(keep) = keep_from_layer {
        store.set_keep_from_layer(keep)?;
    }
    Ok(store)
}

/// The db at `db`, opened only once `check` accepted the input against its N (read from
/// the manifest file when there is one, so bad input leaves the db untouched).
pub fn open_checked<T>(
    db: &Path,
    options: &ReadOptions,
    check: impl FnOnce(u8) -> Result<T, Failure>,
) -> Result<(Book, T), Failure> {
    match Store::peek_manifest(db)? {
        Some(manifest) => {
            let checked = check(manifest.n)?;
            Ok((open_reader(db, options)?, checked))
        }
        None => {
            let book = open_reader(db, options)?;
            let checked = check(book.n())?;
            Ok((book, checked))
        }
    }
}
