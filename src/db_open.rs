//! Opening a db to read it (every command but `solve`, `coordinator` and `seal`): through
//! its sealed layers when it has them, with no lock and nothing written; an unsealed db
//! of an earlier build the old way, with a hint that `gops seal` frees its readers. A
//! book gets its on-demand settings and progress here. And opening one to solve into
//! (`solve`, `coordinator`), with its rolling setting.

use std::path::Path;
use std::sync::Arc;

use gops_db::store::Store;
use tracing::warn;

use crate::args::OnDemandArgs;
use crate::failure::Failure;

/// The db at `path`, opened for reading.
pub fn open_reader(path: &Path, on_demand: &OnDemandArgs) -> Result<Store, Failure> {
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
    if let Some(solver) = store.on_demand() {
        if let Some(mb) = on_demand.memory_mb {
            solver.set_budget_bytes(mb << 20);
        }
        if let Some(games) = on_demand.max_on_demand_games {
            solver.set_max_games(games);
        }
        solver.set_observer(Arc::new(crate::on_demand_progress::OnDemandProgress::new()));
    }
    Ok(store)
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
    db: &std::path::Path,
    on_demand: &crate::args::OnDemandArgs,
    check: impl FnOnce(u8) -> Result<T, Failure>,
) -> Result<(Store, T), Failure> {
    match Store::peek_manifest(db)? {
        Some(manifest) => {
            let checked = check(manifest.n)?;
            Ok((crate::db_open::open_reader(db, on_demand)?, checked))
        }
        None => {
            let store = crate::db_open::open_reader(db, on_demand)?;
            let checked = check(store.n())?;
            Ok((store, checked))
        }
    }
}
