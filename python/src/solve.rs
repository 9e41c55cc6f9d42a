//! `gops.solve`: the command line's solve, run in this process the way `gops solve`
//! runs it (`gops_local::solve_local`: a coordinator and a worker talking gRPC over
//! loopback): the same leases, checks and store, so the same db bit for bit. The solve runs on its own
//! thread without the GIL; the calling thread wakes every 50 ms to check for Ctrl-C and
//! to tell the progress callback. Ctrl-C lets the shard in hand be stored and then
//! raises `KeyboardInterrupt` (a second Ctrl-C raises at once and the solve thread stops
//! by itself after that shard); calling `solve` again resumes.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gops_common::budget::{Role, available_memory, process_caches};
use gops_common::cards::validate_n;
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_common::sync::lock;
use gops_coordinator::report::observer::RunObserver;
use gops_db::disk::DiskPlan;
use gops_db::store::Store;
use gops_local::{LocalRun, SolveOutcome, StopSignal, solve_local};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use crate::db::Db;
use crate::errors::{GopsError, local_error, store_error, value_error};

/// How often the calling thread looks for Ctrl-C.
const POLL: Duration = Duration::from_millis(50);
/// How often the progress callback is told at most.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// The solve's progress in planned matrix games (the command line's bar counts the
/// same): done, in all, and the layer being solved.
#[derive(Default)]
struct Counts {
    per_slice: Mutex<Vec<u64>>,
    done: AtomicU64,
    total: AtomicU64,
    layer: AtomicU64,
}

impl Counts {
    fn read(&self) -> (u64, u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
            self.layer.load(Ordering::Relaxed),
        )
    }
}

impl RunObserver for Counts {
    fn plan(&self, layers: &[(LayerSize, usize)]) {
        let mut per_slice = lock(&self.per_slice);
        *per_slice = layers.iter().map(|(s, _)| s.games_per_slice()).collect();
        let units = |f: &dyn Fn(&(LayerSize, usize)) -> u64| layers.iter().map(f).sum::<u64>();
        self.total.store(
            units(&|(s, _)| s.games_per_slice() * s.slices as u64),
            Ordering::Relaxed,
        );
        self.done.store(
            units(&|(s, stored)| s.games_per_slice() * *stored as u64),
            Ordering::Relaxed,
        );
    }

    fn layer_started(&self, size: &LayerSize, _already_stored: usize) {
        self.layer.store(u64::from(size.k), Ordering::Relaxed);
    }

    fn shard_done(&self, k: u8, slices: usize, _games: u64) {
        let per_slice = lock(&self.per_slice);
        let units = per_slice.get(usize::from(k) - 1).copied().unwrap_or(0) * slices as u64;
        self.done.fetch_add(units, Ordering::Relaxed);
    }
}

/// Solves the `n`-card game into `db` (created, or resumed where it stopped) and
/// returns it opened. `progress(done, total, layer)` is called now and then from the
/// calling thread, in planned matrix games.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, each with its default
#[pyo3(signature = (n, objective = "points", db = PathBuf::from("gops-db"), threads = None, memory_mb = None, progress = None, skip_disk_check = false, keep_from_layer = None))]
pub fn solve(
    n: i64,
    objective: &str,
    db: PathBuf,
    threads: Option<usize>,
    memory_mb: Option<u64>,
    progress: Option<Bound<'_, PyAny>>,
    skip_disk_check: bool,
    keep_from_layer: Option<u8>,
) -> PyResult<Db> {
    // called from Python, so attached already: this only hands over the token
    Python::attach(|py| {
        let n = validate_n(n).map_err(value_error)?;
        let objective: Objective = objective.parse().map_err(value_error)?;
        let threads = match threads {
            Some(0) => return Err(value_error("threads must be at least 1")),
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |t| t.get()),
        };
        let caches = process_caches(
            "memory_mb",
            memory_mb,
            n,
            objective,
            Role::Solve,
            available_memory(),
        )
        .map_err(value_error)?;
        if let Some(want) = keep_from_layer
            && !(1..=n).contains(&want)
        {
            return Err(value_error(format!(
                "keep_from_layer={want} is not a layer of the {n}-card game (1 to {n})"
            )));
        }
        let rolling = keep_from_layer.or_else(|| {
            Store::peek_manifest(&db)
                .ok()
                .flatten()
                .and_then(|m| m.keep_from_layer)
        });
        if let Ok(plan) = DiskPlan::of(&db, n, objective, rolling)
            && let Some(message) = plan.refusal(&db, n, objective, ["db", "skip_disk_check=True"])
            && !skip_disk_check
        {
            return Err(PyOSError::new_err(message));
        }
        let store = py
            .detach(|| {
                let mut store = Store::open_or_create(&db, n, objective)?;
                if let Some(keep) = keep_from_layer {
                    store.set_keep_from_layer(keep)?;
                }
                Ok(store)
            })
            .map_err(store_error)?;
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(StopSignal::default());
        let run = LocalRun {
            store,
            threads,
            // the same process computed them: nothing re-solved (the cheap checks run)
            verify_fraction: 0.0,
            verify_slices: 1.0,
            caches,
            observer: Arc::clone(&counts) as Arc<dyn RunObserver + Send>,
            stop: Arc::clone(&stop),
            hold_after_slices: None,
            stall_after: None,
        };
        let solver = std::thread::Builder::new()
            .name("gops-solve".into())
            .spawn(move || solve_local(run, None))
            .map_err(|e| GopsError::new_err(format!("cannot start the solve thread: {e}")))?;
        let mut interrupted: Option<PyErr> = None;
        let mut last_report: Option<Instant> = None;
        let mut report = |force: bool| -> PyResult<()> {
            if let Some(callback) = &progress
                && (force || last_report.is_none_or(|t| t.elapsed() >= REPORT_EVERY))
            {
                last_report = Some(Instant::now());
                callback.call1(counts.read())?;
            }
            Ok(())
        };
        while !solver.is_finished() {
            py.detach(|| std::thread::sleep(POLL));
            if let Err(signal) = py.check_signals() {
                if interrupted.is_some() {
                    // a second Ctrl-C: at once (the thread stores its shard and ends alone)
                    return Err(signal);
                }
                stop.raise();
                interrupted = Some(signal);
                continue;
            }
            if interrupted.is_none()
                && let Err(e) = report(false)
            {
                // a failing callback stops the solve like Ctrl-C, and its error is raised
                stop.raise();
                interrupted = Some(e);
            }
        }
        let result = solver
            .join()
            .map_err(|_| GopsError::new_err("the solve thread panicked"))?;
        let (store, outcome) = result.map_err(local_error)?;
        if let Some(e) = interrupted {
            return Err(e);
        }
        match outcome {
            SolveOutcome::Complete(_) => {
                report(true)?;
                let options = crate::db::read_options(None, None)?;
                let book = py
                    .detach(|| gops_db::book::Book::after_solve(store, &options))
                    .map_err(store_error)?;
                Ok(Db::from_book(book))
            }
            SolveOutcome::Interrupted {
                layer,
                slices_stored,
            } => Err(GopsError::new_err(format!(
                "the solve stopped in layer {layer} with {slices_stored} of its slices stored; call solve again to resume"
            ))),
        }
    })
}
