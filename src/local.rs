//! `gops solve` on one machine: a coordinator and one worker in one process. By default
//! they talk gRPC over loopback, so the path a user runs on one machine is the path the
//! cluster runs; `--no-grpc` (hidden, to measure what the protocol costs) has the same
//! coordinator lease, check and store the shards that an in-process loop solves. Either
//! way the coordinator keeps the one record of the run's progress. Ctrl-C (or a slice
//! budget, for tests) lets the shard in hand finish and be stored, then stops; the next
//! run resumes from the store. The gRPC path can also serve the coordinator's dashboard,
//! behind the run's fresh token.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gops_common::budget::CacheSplit;
use gops_common::cache::SliceCache;
use gops_common::engine::LayerEngine;
use gops_common::prizes::prize_rank;
use gops_common::shard::{ShardError, ShardSolver};
use gops_coordinator::checks::Submitted;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig, CoreError, LeaseOutcome};
use gops_coordinator::metrics::serve_metrics;
use gops_coordinator::observer::RunObserver;
use gops_coordinator::service::{AccessTokens, serve};
use gops_db::store::{LayerRecord, Store, StoreError};
use gops_worker::backoff::Backoff;
use gops_worker::shared_dir::SharedDir;
use gops_worker::{WorkerConfig, run_worker};
use tokio::sync::watch;
use tracing::info;

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error(transparent)]
    Core(#[from] CoreError),
    #[error(transparent)]
    Solver(#[from] ShardError),
    #[error("local cluster: {0}")]
    Runtime(String),
}

impl From<StoreError> for LocalError {
    fn from(e: StoreError) -> Self {
        LocalError::Core(CoreError::Store(e))
    }
}

/// How a solve ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveOutcome {
    Complete(SolveSummary),
    /// Stopped on request; what was stored stays, and a new solve resumes from it.
    Interrupted {
        layer: u8,
        slices_stored: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct SolveSummary {
    pub layers: Vec<LayerRecord>,
    /// States of the whole game (both orientations, all layers).
    pub states: u64,
    /// Matrix games solved by this run (not those of a run it resumed).
    pub games: u64,
    /// Slices solved by this run.
    pub slices: usize,
    pub wall: Duration,
}

/// Stop conditions: a flag (Ctrl-C) and, for tests, a budget of slices after which the
/// run stops as if interrupted.
#[derive(Default)]
pub struct StopSignal {
    pub flag: AtomicBool,
    pub after_slices: Option<usize>,
}

/// What both drivers are given.
pub struct LocalRun {
    pub store: Store,
    pub threads: usize,
    pub verify_fraction: f64,
    /// Share of the slices whose states are re-solved (`CoordinatorConfig::verify_slices`).
    pub verify_slices: f64,
    /// The worker's and the coordinator's caches of slices.
    pub caches: CacheSplit,
    pub observer: Arc<dyn RunObserver + Send>,
    pub stop: Arc<StopSignal>,
    /// Where to serve the dashboard (gRPC path only), bound already.
    pub dashboard: Option<std::net::TcpListener>,
}

impl LocalRun {
    /// The in-process coordinator over the store.
    fn coordinator(self) -> Result<(Coordinator, WorkerSettings, Arc<StopSignal>), LocalError> {
        let config = CoordinatorConfig {
            // one worker: enough shards to keep its threads busy, no more
            min_shards: 4 * self.threads,
            verify_fraction: self.verify_fraction,
            verify_slices: self.verify_slices,
            verify_cache_bytes: self.caches.verify_cache as usize,
            ..CoordinatorConfig::default()
        };
        let db_dir = self.store.path().to_path_buf();
        let core = Coordinator::new(self.store, config, self.observer)?;
        core.set_slice_budget(self.stop.after_slices.map(|s| s as u64));
        let settings = WorkerSettings {
            threads: self.threads,
            cache_bytes: self.caches.worker_cache as usize,
            db_dir,
        };
        Ok((core, settings, self.stop))
    }
}

/// The in-process worker's settings.
struct WorkerSettings {
    threads: usize,
    cache_bytes: usize,
    /// The store's directory: the worker reads dependency slices from its data files
    /// rather than through the loopback connection.
    db_dir: std::path::PathBuf,
}

/// Solves the store's game with an in-process coordinator and a worker of `threads`
/// threads talking gRPC over loopback.
pub fn solve_local(mut run: LocalRun) -> Result<(Store, SolveOutcome), LocalError> {
    let started = Instant::now();
    let dashboard = run.dashboard.take();
    let (core, settings, stop) = run.coordinator()?;
    let core = Arc::new(core);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| LocalError::Runtime(e.to_string()))?;
    let worker_slices = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| LocalError::Runtime(format!("cannot listen on loopback: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| LocalError::Runtime(e.to_string()))?;
        let (stop_server, server_stopped) = watch::channel(false);
        // loopback is shared with every user of the host: a fresh token keeps them out
        let token = fresh_token();
        if let Some(listener) = dashboard {
            // the same token guards the dashboard, wherever it is served: its URL carries it
            let listener = tokio::net::TcpListener::from_std(listener)
                .map_err(|e| LocalError::Runtime(format!("cannot serve the dashboard: {e}")))?;
            let at = listener
                .local_addr()
                .map_err(|e| LocalError::Runtime(e.to_string()))?;
            crate::progress::eprint_line(&format!("dashboard: {}", dashboard_url(at, &token)));
            tokio::spawn(serve_metrics(
                listener,
                Arc::clone(&core),
                AccessTokens::shared(token.clone()),
            ));
        }
        let server = tokio::spawn(serve(
            listener,
            Arc::clone(&core),
            AccessTokens::shared(token.clone()),
            Duration::from_secs(3600),
            wait_true(server_stopped),
        ));
        let (stop_worker, worker_stop) = watch::channel(false);
        let worker = tokio::spawn(run_worker(
            WorkerConfig {
                coordinator: format!("http://{address}"),
                tls_ca: None,
                threads: settings.threads,
                token: Some(token),
                cache_bytes: settings.cache_bytes,
                memory_budget: None,
                name: "local".into(),
                slices_dir: SharedDir::new(&settings.db_dir).ok(),
                backoff: Backoff {
                    give_up_after: Duration::from_secs(30),
                    ..Backoff::default()
                },
            },
            worker_stop,
        ));
        // watch for Ctrl-C and the slice budget while the worker runs
        while !worker.is_finished() {
            if should_stop(&core, &stop) {
                let _ = stop_worker.send(true);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let worker_result = worker
            .await
            .map_err(|e| LocalError::Runtime(e.to_string()))?;
        let _ = stop_server.send(true);
        let _ = server.await;
        worker_result
            .map(|summary| summary.slices)
            .map_err(|e| LocalError::Runtime(format!("worker: {e}")))
    })?;
    // dropping the runtime drops every task that still holds the coordinator
    runtime.shutdown_timeout(Duration::from_secs(30));
    let core = Arc::try_unwrap(core)
        .map_err(|_| LocalError::Runtime("coordinator still in use".into()))?;
    info!(worker_slices, "local run ended");
    outcome(core, started)
}

/// Solves the store's game with the in-process coordinator leasing shards directly to a
/// solver loop: the same leases, checks and store as [`solve_local`], without the
/// protocol.
pub fn solve_direct(run: LocalRun) -> Result<(Store, SolveOutcome), LocalError> {
    let started = Instant::now();
    let (core, settings, stop) = run.coordinator()?;
    let solver = ShardSolver::new(settings.threads)?;
    let worker = core.hello(
        gops_proto::PROTOCOL_VERSION,
        "direct",
        settings.threads as u32,
        None,
    )?;
    let mut cache = SliceCache::new(settings.cache_bytes);
    let mut layer_engine: Option<LayerEngine> = None;
    while !should_stop(&core, &stop) {
        let (lease_id, layer, prize_ranks) = match core.lease(worker, Instant::now())? {
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => (lease_id, layer, prize_ranks),
            LeaseOutcome::Finished => break,
            // one worker, one shard at a time: only a reached slice budget waits
            LeaseOutcome::Wait(_) => break,
        };
        let engine = match layer_engine.take().filter(|e| e.k() == layer) {
            Some(e) => layer_engine.insert(e),
            None => {
                cache.keep_layer(layer - 1);
                layer_engine.insert(
                    LayerEngine::new(core.n(), layer, core.objective())
                        .with_start(core.pivot_start()),
                )
            }
        };
        let below = core.slices_below(&mut cache, layer, &prize_ranks)?;
        let dependency = |prizes| &*below[&prize_rank(prizes)];
        let solved = solver.solve_shard(engine, &prize_ranks, &dependency)?;
        let submitted = solved.iter().map(|s| Submitted::solved(layer, s)).collect();
        core.submit(worker, lease_id, submitted, Instant::now())?;
    }
    outcome(core, started)
}

/// The dashboard's URL for a server bound to `at`, with `token`: an unspecified address
/// (0.0.0.0, ::) is shown as this machine's loopback address, which it includes.
pub fn dashboard_url(at: std::net::SocketAddr, token: &str) -> String {
    let mut at = at;
    if at.ip().is_unspecified() {
        at.set_ip(match at.ip() {
            std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{at}/?token={token}")
}

/// A token nobody can guess: 32 bytes of the operating system's randomness, in hex.
pub fn fresh_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn should_stop(core: &Coordinator, stop: &StopSignal) -> bool {
    if core.failure().is_some() {
        return true;
    }
    let (_, slices) = core.position();
    stop.flag.load(Ordering::SeqCst) || stop.after_slices.is_some_and(|b| slices >= b as u64)
}

/// How the run ended, from the coordinator's record of it.
fn outcome(core: Coordinator, started: Instant) -> Result<(Store, SolveOutcome), LocalError> {
    if let Some(failure) = core.failure() {
        return Err(LocalError::Runtime(failure));
    }
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
    Ok((store, result))
}

async fn wait_true(mut flag: watch::Receiver<bool>) {
    while !*flag.borrow() {
        if flag.changed().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_url_carries_the_token_and_a_reachable_address() {
        let token = fresh_token();
        assert_eq!(token.len(), 64);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        let url = |at: &str| dashboard_url(at.parse().unwrap(), "ab12");
        assert_eq!(url("127.0.0.1:8080"), "http://127.0.0.1:8080/?token=ab12");
        assert_eq!(url("0.0.0.0:81"), "http://127.0.0.1:81/?token=ab12");
        assert_eq!(url("[::]:81"), "http://[::1]:81/?token=ab12");
        assert_eq!(url("10.1.2.3:9"), "http://10.1.2.3:9/?token=ab12");
    }
}
