//! `gops coordinator` and `gops worker`: the cluster's processes.

use std::sync::Arc;
use std::time::Duration;

use gops_common::cards::validate_n;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::observer::Silent;
use gops_coordinator::server::admission::ConnLimits;
use gops_coordinator::server::process::CoordinatorProcess;
use gops_coordinator::server::service::AccessTokens;
use gops_http::token_files::{Exposure, check_exposure, server_tokens};
use gops_worker::backoff::Backoff;
use gops_worker::shared_dir::SharedDir;
use gops_worker::{CacheSize, ClientError, WorkerConfig, connect_with_ca, run_worker};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::args::{CoordinatorArgs, WorkerArgs};
use crate::failure::Failure;
use crate::network::{client_credentials, runtime};
use crate::signals::Termination;

/// A coordinator's gRPC port: anyone who reaches it could join the run.
const COORDINATOR_EXPOSURE: Exposure = Exposure {
    risk: "join the run or waste its work",
    token_use: "the same file for the workers",
    warning: "serving without a token (--insecure): anyone who reaches this address can join the run",
};

pub fn coordinator(args: CoordinatorArgs) -> Result<(), Failure> {
    let n = validate_n(args.n)?;
    let tokens = server_tokens(args.token_file.as_deref())?;
    check_exposure(
        args.listen,
        !tokens.is_empty(),
        args.insecure,
        &COORDINATOR_EXPOSURE,
    )?;
    let tokens = AccessTokens::of(tokens);
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(server_identity(cert, key)?),
        (None, None) => None,
        // clap requires them together
        _ => {
            return Err(Failure::Usage(
                "--tls-cert and --tls-key go together".into(),
            ));
        }
    };
    let tls_on = tls.is_some();
    let limits = ConnLimits::with_flags(
        gops_common::system::raise_file_limit(),
        args.max_connections,
        args.max_connections_per_address,
    );
    let caches = crate::input::memory_split(
        args.memory_mb,
        n,
        args.objective,
        gops_common::budget::Role::Coordinator,
    )?;
    crate::input::check_disk(
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
        let address = listener
            .local_addr()
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        info!(%address, n, objective = %args.objective, tls = tls_on, "coordinator listening");
        let process = CoordinatorProcess {
            core,
            tokens,
            tls,
            limits,
            progress_every: Duration::from_secs(args.progress_secs),
            exit_when_done: args.exit_when_done,
            metrics: args.metrics,
        };
        let ending = process
            .serve(listener, termination.received())
            .await
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        match ending.interrupted_in() {
            // stopped by a signal before the run was complete: an interruption (130)
            Some(layer) => Err(Failure::Interrupted(format!(
                "interrupted in layer {layer} with {} stored this run in {}; start the coordinator again to resume",
                gops_common::human::counted(ending.stored, "slice", "slices"),
                args.db.display()
            ))),
            None => Ok(()),
        }
    })
}

/// The server side of TLS from `--tls-cert` and `--tls-key`.
fn server_identity(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<tonic::transport::ServerTlsConfig, Failure> {
    let (cert_pem, key_pem) = gops_proto::tls_files::read_identity(cert, key)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    gops_coordinator::server::service::server_tls(&cert_pem, &key_pem).map_err(|e| {
        Failure::Usage(format!(
            "--tls-cert {} with --tls-key {}: {e}",
            cert.display(),
            key.display()
        ))
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
        // without --cache-mb the cache comes from the budget, once the game is known
        cache: match args.cache_mb {
            Some(mb) => CacheSize::Bytes((mb as usize).saturating_mul(1 << 20)),
            None => CacheSize::FromBudget(args.memory_mb.map_or_else(
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

#[cfg(test)]
mod tests {
    use gops_coordinator::server::exit_rule::RESUMED_LINGER;

    use super::*;

    #[test]
    fn a_resumed_coordinator_outwaits_a_worker_pausing_between_retries() {
        // a worker pausing its longest between retries when the run ends comes back
        // within the linger, with as long again to spare
        assert!(RESUMED_LINGER >= Backoff::default().max * 2);
    }
}
