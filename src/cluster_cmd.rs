//! `gops coordinator` and `gops worker`: the cluster's processes.

use std::sync::Arc;
use std::time::Duration;

use gops_common::cards::validate_n;
use gops_coordinator::admission::ConnLimits;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig, RunFailure};
use gops_coordinator::exit_rule::ExitRule;
use gops_coordinator::metrics::serve_metrics;
use gops_coordinator::observer::Silent;
use gops_coordinator::service::serve_with_tls;
use gops_worker::backoff::Backoff;
use gops_worker::shared_dir::SharedDir;
use gops_worker::{ClientError, WorkerConfig, connect_with_ca, run_worker};
use tokio::sync::watch;
use tracing::{error, info, warn};

use crate::args::{CoordinatorArgs, WorkerArgs};
use crate::failure::Failure;
use crate::network::{
    COORDINATOR_EXPOSURE, check_exposure, client_credentials, read_tokens, runtime,
};
use crate::signals::Termination;

/// How long a coordinator with `--exit-when-done` and `--metrics` keeps serving once the
/// run is complete and its workers told, so that the dashboard shows the end.
const DASHBOARD_GRACE: Duration = Duration::from_secs(10);

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

pub fn coordinator(args: CoordinatorArgs) -> Result<(), Failure> {
    let n = validate_n(args.n)?;
    let tokens = read_tokens(args.token_file.as_deref())?;
    check_exposure(args.listen, &tokens, args.insecure, &COORDINATOR_EXPOSURE)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(crate::tls::read_identity(cert, key)?),
        (None, None) => None,
        // clap requires them together
        _ => {
            return Err(Failure::Usage(
                "--tls-cert and --tls-key go together".into(),
            ));
        }
    };
    let tls_on = tls.is_some();
    let limits = connection_limits(&args);
    let caches = crate::input::memory_split(
        args.memory_mb,
        n,
        args.objective,
        gops_common::budget::Role::Coordinator,
    )?;
    crate::disk_check::check(
        &args.db,
        n,
        args.objective,
        args.keep_from_layer,
        args.skip_disk_check,
    )?;
    // bind before the store is opened: a busy port must not leave a new db behind
    let listener = std::net::TcpListener::bind(args.listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| Failure::Usage(format!("cannot listen on {}: {e}", args.listen)))?;
    let store = crate::db_open::open_to_solve(&args.db, n, args.objective, args.keep_from_layer)?;
    let config = CoordinatorConfig {
        lease: Duration::from_millis(args.lease_ms),
        verify_fraction: args.verify_fraction,
        verify_slices: args.verify_slices,
        verify_mode: args.verify_mode,
        target_games_per_shard: args.shard_games,
        verify_cache_bytes: caches.verify_cache as usize,
        ..CoordinatorConfig::default()
    };
    let core = Arc::new(
        Coordinator::new(store, config, Arc::new(Silent))
            .map_err(|e| Failure::Runtime(e.to_string()))?,
    );
    core.set_slice_budget(args.hold_after_slices);
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| Failure::Runtime(format!("cannot listen on {}: {e}", args.listen)))?;
        // before the listening line: a signal right after it must be caught
        let termination = Termination::listen()?;
        info!(address = %listener.local_addr().map_err(|e| Failure::Runtime(e.to_string()))?, n, objective = %args.objective, tls = tls_on, "coordinator listening");
        // metrics are a side line: a port that cannot be bound is reported, and the
        // coordinator goes on without them
        if let Some(addr) = args.metrics {
            match tokio::net::TcpListener::bind(addr).await {
                Ok(metrics_listener) => {
                    let core = Arc::clone(&core);
                    let tokens = tokens.clone();
                    tokio::spawn(async move {
                        if let Err(e) = serve_metrics(metrics_listener, core, tokens).await {
                            warn!(address = %addr, error = %e, "metrics server stopped");
                        }
                    });
                }
                Err(e) => {
                    error!(address = %addr, error = %e, "cannot serve metrics: cannot listen on --metrics; going on without them");
                }
            }
        }
        let done = {
            let core = Arc::clone(&core);
            let exit_when_done = args.exit_when_done;
            let dashboard = args.metrics.is_some();
            // every live worker hears "finished" first: a worker still busy with a shard
            // someone else finished heartbeats, so it stays live and is waited for (a
            // silent one drops out after a lease); a resumed run also waits for the
            // workers of the run before it
            let mut rule = ExitRule::new(core.config().lease, core.resumed());
            // woken by the run's changes; the rule's clocks (the linger, workers that
            // fall silent) are looked at a few times a lease, at least once a second
            let recheck = (core.config().lease / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
            let mut changes = core.changes();
            async move {
                let mut announced = false;
                loop {
                    let finished = exit_when_done && core.is_finished();
                    let now = std::time::Instant::now();
                    if rule.should_exit(finished, finished && core.workers_released(now), now) {
                        if dashboard {
                            // whoever watches sees the final table before it goes
                            info!(grace_secs = DASHBOARD_GRACE.as_secs(), "run complete; the dashboard stays up a little");
                            tokio::time::sleep(DASHBOARD_GRACE).await;
                        }
                        return;
                    }
                    if finished && !announced && !rule.linger().is_zero() {
                        announced = true;
                        info!(linger_secs = rule.linger().as_secs(), "run complete; serving a little longer for the workers of the interrupted run before this one");
                    }
                    tokio::select! {
                        _ = changes.changed() => {}
                        () = tokio::time::sleep(recheck) => {}
                    }
                }
            }
        };
        let signalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let shutdown = {
            let signalled = Arc::clone(&signalled);
            let core = Arc::clone(&core);
            async move {
                tokio::select! {
                    _ = termination.received() => {
                        signalled.store(true, std::sync::atomic::Ordering::SeqCst);
                        info!("signal received; stopping (the db is consistent)");
                    }
                    _ = done => info!("run complete; stopping"),
                    failure = run_failure(Arc::clone(&core)) => {
                        error!(error = %failure, "stopping: the run cannot go on");
                    }
                }
            }
        };
        let served = serve_with_tls(listener, Arc::clone(&core), tokens, tls, limits, Duration::from_secs(args.progress_secs), shutdown)
            .await
            .map_err(|e| Failure::Runtime(format!("gRPC server failed: {e}")));
        if let Some(failure) = core.failure() {
            return Err(Failure::Runtime(failure.to_string()));
        }
        let (open_layer, stored) = core.position();
        info!(slices_stored = stored, slices_leased = core.leased_this_run(), complete = core.is_finished(), "coordinator stopped");
        served?;
        match open_layer {
            // stopped by a signal before the run was complete: an interruption (130)
            Some(layer) if signalled.load(std::sync::atomic::Ordering::SeqCst) => {
                Err(Failure::Interrupted(format!(
                    "interrupted in layer {layer} with {} stored this run in {}; start the coordinator again to resume",
                    gops_common::human::counted(stored, "slice", "slices"),
                    args.db.display()
                )))
            }
            _ => Ok(()),
        }
    })
}

pub fn worker(args: WorkerArgs) -> Result<(), Failure> {
    let (token, tls_ca) = client_credentials(args.token_file.as_deref(), args.tls_ca.as_deref())?;
    let threads = crate::args::threads_or_all_cores(args.threads);
    let name = args.name.unwrap_or_else(|| {
        std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "worker".into())
    });
    let slices_dir = args
        .slices_dir
        .as_deref()
        .map(SharedDir::new)
        .transpose()
        .map_err(|why| Failure::Usage(format!("--slices-dir: {why}")))?;
    let config = WorkerConfig {
        slices_dir,
        coordinator: args.coordinator,
        tls_ca,
        threads,
        token,
        cache_bytes: (args.cache_mb.unwrap_or(0) as usize).saturating_mul(1 << 20),
        // without --cache-mb the cache comes from the budget, once the game is known
        memory_budget: match args.cache_mb {
            Some(_) => None,
            None => Some(args.memory_mb.map_or_else(
                || gops_common::budget::default_budget(gops_common::budget::available_memory(), 0),
                |mb| mb.saturating_mul(1 << 20),
            )),
        },
        name,
        backoff: Backoff {
            give_up_after: Duration::from_secs(args.give_up_secs),
            ..Backoff::default()
        },
    };
    let rt = runtime()?;
    rt.block_on(async {
        // a bad address is bad input, found before any work
        connect_with_ca(
            &config.coordinator,
            config.token.as_deref(),
            config.tls_ca.as_deref(),
        )
        .map_err(|e| Failure::Usage(e.to_string()))?;
        let termination = Termination::listen()?;
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(async move {
            termination.received().await;
            info!("signal received; finishing the current shard, then exiting");
            let _ = stop.send(true);
        });
        let summary = match run_worker(config, stopped).await {
            Ok(summary) => summary,
            // a requested stop is a clean exit, even when the last shard could not be
            // handed in (the coordinator leases it again)
            Err(ClientError::Stopped(why)) => {
                warn!(error = %why, "stopped while the coordinator was unreachable");
                return Ok(());
            }
            Err(e) => return Err(Failure::Runtime(e.to_string())),
        };
        info!(
            shards = summary.shards,
            slices_stored = summary.slices,
            slices_already_stored = summary.duplicates,
            slices_held = summary.held,
            games = summary.games,
            rejected = summary.rejected,
            slices_cached = summary.dependencies.cached,
            slices_read_from_dir = summary.dependencies.read_from_dir,
            slices_placed_by_sealed_index = summary.dependencies.placed_by_sealed_index,
            slices_fetched = summary.dependencies.fetched,
            "worker done"
        );
        Ok(())
    })
}

/// The connection limits: the file limit raised to its hard maximum, the total cap left
/// below it with room for the store's own files, and the flags over both.
fn connection_limits(args: &CoordinatorArgs) -> ConnLimits {
    let file_limit = gops_common::system::raise_file_limit();
    let mut limits = ConnLimits::for_file_limit(file_limit);
    if let Some(max) = args.max_connections {
        // more connections than descriptors would starve the store's own files
        let room = ConnLimits::room(file_limit);
        if max as usize > room {
            warn!(
                asked = max,
                allowed = room,
                "--max-connections is above what the file limit leaves beside the store's files; using the lower"
            );
        }
        limits.max_connections = (max as usize).min(room);
    }
    if let Some(per_address) = args.max_connections_per_address {
        limits.per_address = per_address as usize;
    }
    info!(
        file_limit = file_limit.map_or_else(|| "unknown".to_string(), |l| l.to_string()),
        max_connections = limits.max_connections,
        per_address = limits.per_address,
        "connection limits"
    );
    limits
}

#[cfg(test)]
mod tests {
    use gops_coordinator::exit_rule::RESUMED_LINGER;

    use super::*;

    #[test]
    fn a_resumed_coordinator_outwaits_a_worker_pausing_between_retries() {
        // a worker pausing its longest between retries when the run ends comes back
        // within the linger, with as long again to spare
        assert!(RESUMED_LINGER >= Backoff::default().max * 2);
    }
}
