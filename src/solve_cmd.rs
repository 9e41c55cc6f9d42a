//! `gops solve`: solve a game into a db on this machine, with a progress bar (and, with
//! `--dashboard`, the live dashboard), Ctrl-C to stop (a second run resumes), and a
//! summary with the first-move strategies at the end.

use std::sync::Arc;

use gops_common::budget::Role;
use gops_common::cards::validate_n;
use gops_coordinator::cluster::CoreError;
use gops_coordinator::report::observer::RunObserver;
use gops_db::book::Book;
use gops_db::read::opening::Opening;
use gops_local::{DashboardSite, solve_local};
use gops_local::{LocalError, LocalRun, SolveOutcome, StopSignal, solve_direct};
use tracing::warn;

use crate::args::SolveArgs;
use crate::failure::Failure;
use crate::progress::BarObserver;

pub fn run(args: SolveArgs) -> Result<(), Failure> {
    let n = validate_n(args.n)?;
    let threads = crate::args::threads_or_all_cores(args.threads);
    let caches = crate::input::memory_split(args.memory_mb, n, args.objective, Role::Solve)?;
    crate::input::check_disk(
        &args.db,
        n,
        args.objective,
        args.keep_from_layer,
        args.skip_disk_check,
    )?;
    // bound before the store is opened: a busy port must not leave a new db behind
    let dashboard = args.dashboard.map(bind_dashboard).transpose()?;
    let store = crate::db_open::open_to_solve(&args.db, n, args.objective, args.keep_from_layer)?;
    let stop = Arc::new(StopSignal::after(args.stop_after_slices));
    let on_signal = Arc::clone(&stop);
    let installed = ctrlc::set_handler(move || {
        if on_signal.raise() {
            std::process::exit(130); // second Ctrl-C: the store is crash-safe
        }
        warn!("stopping after the current shard; press Ctrl-C again to stop at once");
    });
    if let Err(e) = installed {
        warn!(error = %e, "no Ctrl-C handler; an interrupted solve still resumes");
    }

    let observer = Arc::new(BarObserver::new());
    let run = LocalRun {
        store,
        threads,
        verify_fraction: args.verify_fraction,
        verify_slices: args.verify_slices,
        caches,
        observer: Arc::clone(&observer) as Arc<dyn RunObserver + Send>,
        stop: Arc::clone(&stop),
        hold_after_slices: args.hold_after_slices,
        stall_after: args.stall_secs.map(std::time::Duration::from_secs),
    };
    let (store, outcome) = if args.no_grpc {
        solve_direct(run)
    } else {
        if let Some(site) = &dashboard {
            let url = site.url().map_err(|e| Failure::Runtime(e.to_string()))?;
            crate::progress::eprint_line(&format!("dashboard: {url}"));
        }
        solve_local(run, dashboard)
    }
    .map_err(local_failure)?;
    observer.finish();
    match outcome {
        SolveOutcome::Interrupted {
            layer,
            slices_stored,
        } => Err(Failure::Interrupted(format!(
            "interrupted in layer {layer} with {slices_stored} of its slices stored in {}; run the same command again to resume",
            args.db.display()
        ))),
        SolveOutcome::Complete(summary) => {
            let reading = crate::db_open::read_options(&crate::args::OnDemandArgs::default());
            let book = Book::after_solve(store, &reading)?;
            // what a player wants first: the value and the first moves
            if !args.no_first_moves {
                crate::out!("{}", Opening::of(&book)?);
                crate::out!();
            }
            crate::out!("{}", summary.text(book.store(), threads));
            Ok(())
        }
    }
}

/// Where `--dashboard` serves; an address that cannot be bound is bad input.
fn bind_dashboard(addr: std::net::SocketAddr) -> Result<DashboardSite, Failure> {
    std::net::TcpListener::bind(addr)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map(DashboardSite::new)
        .map_err(|e| Failure::Usage(format!("cannot serve the dashboard on {addr}: {e}")))
}

fn local_failure(e: LocalError) -> Failure {
    match e {
        LocalError::Core(CoreError::Store(e)) => e.into(),
        other => Failure::Runtime(other.to_string()),
    }
}
