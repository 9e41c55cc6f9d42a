//! Local mode (`gops solve`): the coordinator and one worker in one process, talking
//! gRPC over loopback, so the path a user runs on one machine is the path the cluster
//! runs. Ctrl-C (or a slice budget, for tests) lets the worker finish and submit its
//! shard, then stops; the next run resumes from the store.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use gops_worker::backoff::Backoff;
use gops_worker::client::{WorkerConfig, run_worker};
use tokio::sync::watch;
use tracing::info;

use crate::cluster::{Coordinator, CoordinatorConfig, CoreError};
use crate::service::serve;
use crate::solve::{SolveError, SolveObserver, SolveOutcome, SolveSummary, StopSignal};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error(transparent)]
    Core(#[from] CoreError),
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error("local cluster: {0}")]
    Runtime(String),
}

impl From<StoreError> for LocalError {
    fn from(e: StoreError) -> Self {
        LocalError::Core(CoreError::Store(e))
    }
}

/// Solves the store's game with an in-process coordinator and a worker of `threads`
/// threads.
pub fn solve_local(
    store: Store,
    threads: usize,
    verify_fraction: f64,
    observer: Arc<dyn SolveObserver + Send>,
    stop: Arc<StopSignal>,
) -> Result<(Store, SolveOutcome), LocalError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| LocalError::Runtime(e.to_string()))?;
    let started = Instant::now();
    let config = CoordinatorConfig {
        // the worker is in this process: a short lease costs nothing
        lease: Duration::from_secs(60),
        // one worker: enough shards to keep its threads busy, no more
        min_shards: 4 * threads,
        verify_fraction,
        ..CoordinatorConfig::default()
    };
    let core = Arc::new(Coordinator::new(store, config, observer)?);
    core.set_slice_budget(stop.after_slices.map(|s| s as u64));
    let outcome = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| LocalError::Runtime(format!("cannot listen on loopback: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| LocalError::Runtime(e.to_string()))?;
        let (stop_server, server_stopped) = watch::channel(false);
        let server = tokio::spawn(serve(
            listener,
            Arc::clone(&core),
            None,
            Duration::from_secs(3600),
            wait_true(server_stopped),
        ));
        let (stop_worker, worker_stop) = watch::channel(false);
        let worker = tokio::spawn(run_worker(
            WorkerConfig {
                coordinator: format!("http://{address}"),
                tls_ca: None,
                threads,
                token: None,
                cache_bytes: 1 << 30,
                name: "local".into(),
                backoff: Backoff {
                    give_up_after: Duration::from_secs(30),
                    ..Backoff::default()
                },
            },
            worker_stop,
        ));
        // watch for Ctrl-C and the slice budget while the worker runs
        let budget = stop.after_slices.map(|s| s as u64);
        while !worker.is_finished() {
            let (_, slices) = core.position();
            if stop.flag.load(Ordering::SeqCst) || budget.is_some_and(|b| slices >= b) {
                let _ = stop_worker.send(true);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let worker_result = worker
            .await
            .map_err(|e| LocalError::Runtime(e.to_string()))?;
        let _ = stop_server.send(true);
        let _ = server.await;
        worker_result.map_err(|e| LocalError::Runtime(format!("worker: {e}")))
    })?;
    // dropping the runtime drops every task that still holds the coordinator
    runtime.shutdown_timeout(Duration::from_secs(30));
    let core = Arc::try_unwrap(core)
        .map_err(|_| LocalError::Runtime("coordinator still in use".into()))?;
    let (position, slices_this_run) = core.position();
    let games = core.games_this_run();
    let store = core.into_store();
    let result = match position {
        Some(layer) => {
            let slices_stored = store.stored_count(layer)?;
            info!(layer, slices_stored, "interrupted");
            SolveOutcome::Interrupted {
                layer,
                slices_stored,
            }
        }
        None => {
            let mut layers = Vec::new();
            for k in 1..=store.n() {
                layers.push(store.layer(k)?.ok_or_else(|| {
                    StoreError::Corrupt(format!("run finished but layer {k} is not complete"))
                })?);
            }
            SolveOutcome::Complete(SolveSummary {
                states: layers.iter().map(|r| r.states).sum(),
                layers,
                games,
                slices: slices_this_run as usize,
                wall: started.elapsed(),
            })
        }
    };
    info!(worker_slices = outcome.slices, "local run ended");
    Ok((store, result))
}

async fn wait_true(mut flag: watch::Receiver<bool>) {
    while !*flag.borrow() {
        if flag.changed().await.is_err() {
            return;
        }
    }
}
