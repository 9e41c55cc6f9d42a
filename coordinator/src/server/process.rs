//! A coordinator process from its first call to its exit (`gops coordinator`): the gRPC
//! service on its listener, the metrics and dashboard beside it, and the one place that
//! decides when serving stops: a termination signal, the run complete (with
//! `--exit-when-done`, once the workers have heard it, [`crate::server::exit_rule`]), or a run
//! that cannot go on (its store unwritable, a shard that fails on every worker). The
//! connection limits follow from the process's file limit and the flags.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tonic::transport::ServerTlsConfig;
use tracing::{error, info, warn};

use crate::cluster::{Coordinator, RunFailure};
use crate::report::metrics::serve_metrics;
use crate::server::admission::ConnLimits;
use crate::server::exit_rule::ExitRule;
use crate::server::service::{AccessTokens, serve_with_tls};

/// How long a coordinator with `--exit-when-done` and `--metrics` keeps serving once the
/// run is complete and its workers told, so that the dashboard shows the end.
const DASHBOARD_GRACE: Duration = Duration::from_secs(10);

/// What a coordinator process serves, and when it stops.
pub struct CoordinatorProcess {
    pub core: Arc<Coordinator>,
    pub tokens: AccessTokens,
    pub tls: Option<ServerTlsConfig>,
    pub limits: ConnLimits,
    /// How often the progress line is logged.
    pub progress_every: Duration,
    /// Stop serving once the run is complete and its workers told.
    pub exit_when_done: bool,
    /// Where the metrics and the dashboard are served, if anywhere.
    pub metrics: Option<SocketAddr>,
}

/// How serving ended, when the run did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// The layer still open (`None`: the run is complete).
    pub open_layer: Option<u8>,
    /// Slices stored by this run.
    pub stored: u64,
    /// Whether a termination signal stopped it.
    pub signalled: bool,
}

impl Ending {
    /// The open layer of a run a signal stopped before it was complete: an interruption,
    /// which the next start resumes.
    pub fn interrupted_in(&self) -> Option<u8> {
        self.open_layer.filter(|_| self.signalled)
    }
}

/// Why a coordinator process failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The run cannot go on.
    #[error("{0}")]
    Run(RunFailure),
    #[error("gRPC server failed: {0}")]
    Server(tonic::transport::Error),
}

impl CoordinatorProcess {
    /// Serves on `listener` until `termination` resolves, the run is complete (with
    /// `exit_when_done`) or the run fails.
    pub async fn serve(
        self,
        listener: TcpListener,
        termination: impl Future<Output = ()> + Send,
    ) -> Result<Ending, ProcessError> {
        let core = self.core;
        if let Some(addr) = self.metrics {
            spawn_metrics(addr, Arc::clone(&core), self.tokens.clone()).await;
        }
        let done = run_complete(
            Arc::clone(&core),
            self.exit_when_done,
            self.metrics.is_some(),
        );
        let signalled = Arc::new(AtomicBool::new(false));
        let shutdown = {
            let signalled = Arc::clone(&signalled);
            let core = Arc::clone(&core);
            async move {
                tokio::select! {
                    () = termination => {
                        signalled.store(true, Ordering::SeqCst);
                        info!("signal received; stopping (the db is consistent)");
                    }
                    () = done => info!("run complete; stopping"),
                    failure = run_failure(core) => {
                        error!(error = %failure, "stopping: the run cannot go on");
                    }
                }
            }
        };
        let served = serve_with_tls(
            listener,
            Arc::clone(&core),
            self.tokens,
            self.tls,
            self.limits,
            self.progress_every,
            shutdown,
        )
        .await;
        if let Some(failure) = core.failure() {
            return Err(ProcessError::Run(failure));
        }
        let (open_layer, stored) = core.position();
        info!(
            slices_stored = stored,
            slices_leased = core.leased_this_run(),
            complete = core.is_finished(),
            "coordinator stopped"
        );
        served.map_err(ProcessError::Server)?;
        Ok(Ending {
            open_layer,
            stored,
            signalled: signalled.load(Ordering::SeqCst),
        })
    }
}

/// The metrics and the dashboard on `addr`: a side line, so a port that cannot be bound
/// is reported and the coordinator goes on without them.
async fn spawn_metrics(addr: SocketAddr, core: Arc<Coordinator>, tokens: AccessTokens) {
    match TcpListener::bind(addr).await {
        Ok(listener) => {
            tokio::spawn(async move {
                if let Err(e) = serve_metrics(listener, core, tokens).await {
                    warn!(address = %addr, error = %e, "metrics server stopped");
                }
            });
        }
        Err(e) => {
            error!(address = %addr, error = %e, "cannot serve metrics: cannot listen on --metrics; going on without them");
        }
    }
}

/// Resolves once a run with `exit_when_done` may stop serving: every live worker hears
/// "finished" first (a worker still busy with a shard someone else finished heartbeats,
/// so it stays live and is waited for; a silent one drops out after a lease), and a
/// resumed run also waits for the workers of the run before it. With a `dashboard`,
/// whoever watches sees the final table before it goes. Never resolves without
/// `exit_when_done`.
async fn run_complete(core: Arc<Coordinator>, exit_when_done: bool, dashboard: bool) {
    let mut rule = ExitRule::new(core.config().lease, core.resumed());
    // woken by the run's changes; the rule's clocks (the linger, workers that fall
    // silent) are looked at a few times a lease, at least once a second
    let recheck =
        (core.config().lease / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    let mut changes = core.changes();
    let mut announced = false;
    loop {
        let finished = exit_when_done && core.is_finished();
        let now = Instant::now();
        if rule.should_exit(finished, finished && core.workers_released(now), now) {
            if dashboard {
                info!(
                    grace_secs = DASHBOARD_GRACE.as_secs(),
                    "run complete; the dashboard stays up a little"
                );
                tokio::time::sleep(DASHBOARD_GRACE).await;
            }
            return;
        }
        if finished && !announced && !rule.linger().is_zero() {
            announced = true;
            info!(
                linger_secs = rule.linger().as_secs(),
                "run complete; serving a little longer for the workers of the interrupted run before this one"
            );
        }
        tokio::select! {
            _ = changes.changed() => {}
            () = tokio::time::sleep(recheck) => {}
        }
    }
}

/// Resolves, with the reason, once the coordinator cannot go on: its store can no longer
/// be written, or a shard fails on every worker that takes it.
async fn run_failure(core: Arc<Coordinator>) -> RunFailure {
    let mut changes = core.changes();
    loop {
        if let Some(failure) = core.failure() {
            return failure;
        }
        if changes.changed().await.is_err() {
            // the core is gone: nothing will fail any more
            std::future::pending::<()>().await;
        }
    }
}
