//! `gops solve`'s default path, and Python's `gops.solve`: a coordinator and one worker
//! in one process talking gRPC over loopback, behind a fresh token, serving the
//! coordinator's dashboard too when asked ([`DashboardSite`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use gops_coordinator::report::metrics::serve_metrics;
use gops_coordinator::server::service::{AccessTokens, serve};
use gops_db::store::Store;
use gops_worker::backoff::Backoff;
use gops_worker::shared_dir::SharedDir;
use gops_worker::{CacheSize, WorkerConfig, run_worker};
use tokio::sync::watch;
use tracing::info;

use crate::run::{LocalError, LocalRun, SolveOutcome, outcome, should_stop};

/// Where a local solve serves its dashboard: a bound listener and the fresh token that
/// guards both the dashboard and the loopback gRPC port.
pub struct DashboardSite {
    listener: std::net::TcpListener,
    token: String,
}

impl DashboardSite {
    /// The dashboard on `listener` (bound already, non-blocking), behind a fresh token.
    pub fn new(listener: std::net::TcpListener) -> DashboardSite {
        DashboardSite {
            listener,
            token: fresh_token(),
        }
    }

    /// The address to open, token included.
    pub fn url(&self) -> std::io::Result<String> {
        Ok(dashboard_url(self.listener.local_addr()?, &self.token))
    }
}

/// Solves the store's game with an in-process coordinator and a worker of `threads`
/// threads talking gRPC over loopback, serving the dashboard at `dashboard` if given.
pub fn solve_local(
    run: LocalRun,
    dashboard: Option<DashboardSite>,
) -> Result<(Store, SolveOutcome), LocalError> {
    let started = Instant::now();
    let (core, settings, stop) = run.into_parts()?;
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
        // loopback is shared with every user of the host: a fresh token keeps them out;
        // the same token guards the dashboard, wherever it is served (its URL carries it)
        let token = dashboard
            .as_ref()
            .map_or_else(fresh_token, |site| site.token.clone());
        if let Some(site) = dashboard {
            let listener = tokio::net::TcpListener::from_std(site.listener)
                .map_err(|e| LocalError::Runtime(format!("cannot serve the dashboard: {e}")))?;
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
                cache: CacheSize::Bytes(settings.cache_bytes),
                name: "local".into(),
                slices_dir: SharedDir::new(&settings.db_dir).ok(),
                backoff: Backoff {
                    give_up_after: Duration::from_secs(30),
                    ..Backoff::default()
                },
            },
            worker_stop,
        ));
        // Ctrl-C, the slice budget or a failure stops the worker: woken by the stop
        // signal or the coordinator's changes, not by polling
        let mut changes = core.changes();
        let mut worker = worker;
        let worker_result = loop {
            if should_stop(&core, &stop) {
                let _ = stop_worker.send(true);
            }
            tokio::select! {
                result = &mut worker => break result,
                _ = changes.changed() => {}
                () = stop.raised(), if !stop.flag.load(Ordering::SeqCst) => {}
            }
        };
        let worker_result = worker_result.map_err(|e| LocalError::Runtime(e.to_string()))?;
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
