//! `gops status`: the layers of a run, from its db (`--db`) or from its running
//! coordinator (`--coordinator`, which adds the open layer, the workers and the rate).
//! Both are typed values printed by one table.

use gops_coordinator::status::ClusterStatus;
use gops_db::disk::human_bytes;
use gops_db::status::{RunStatus, run_status};
use gops_db::status_file;
use gops_db::store::{Store, StoreError};
use gops_proto::v1::StatusRequest;
use gops_worker::backoff::tls_refusal;
use gops_worker::connect_with_ca;
use tonic::Code;

use crate::args::StatusArgs;
use crate::failure::Failure;
use crate::network::{client_credentials, runtime};

pub fn status(args: StatusArgs) -> Result<(), Failure> {
    let Some(db) = &args.db else {
        return remote_status(&args);
    };
    // the complete layers from the db (sealed, read without a lock), whoever holds it
    let store = crate::db_open::open_reader(db, &crate::args::OnDemandArgs::default())?;
    let status = run_status(&store)?;
    if status.complete || !store.is_sealed_reader() {
        print(&args, &status, None);
        return Ok(());
    }
    drop(store);
    if !Store::writer_running(db) {
        // a stopped run: its open layer's slices counted in sled
        match Store::open_live(db) {
            Ok(live) => {
                print(&args, &run_status(&live)?, None);
                return Ok(());
            }
            Err(StoreError::Locked(_)) => {} // a writer started meanwhile
            Err(e) => return Err(e.into()),
        }
    }
    // a running writer: the live progress of its open layers as it last wrote it
    let snapshot = status_file::read(db);
    let live = match &snapshot {
        Some(snapshot) => with_live_progress(status, &snapshot.status),
        None => status,
    };
    print(
        &args,
        &live,
        Some(
            snapshot
                .as_ref()
                .map(|s| (s.written_unix_ms, s.age_seconds())),
        ),
    );
    Ok(())
}

/// `status` (complete layers from the db) with the layers it lacks taken from what the
/// running writer wrote.
fn with_live_progress(mut status: RunStatus, written: &RunStatus) -> RunStatus {
    for layer in status.layers.iter_mut().filter(|l| !l.complete) {
        if let Some(live) = written.layers.iter().find(|w| w.k == layer.k) {
            *layer = live.clone();
        }
    }
    status.complete = status.layers.iter().all(|l| l.complete);
    status
}

/// Prints a db's status; `in_use`: a writer holds the db, with when its live progress
/// was written (milliseconds since the epoch) and how old it is, if it wrote any. JSON
/// then carries `"in_use": true` and `"as_of_unix_ms"`.
fn print(args: &StatusArgs, status: &RunStatus, in_use: Option<Option<(u64, u64)>>) {
    if args.json {
        let mut object = serde_json::to_value(status).expect("a status serialises");
        if let Some(written) = in_use {
            object["in_use"] = serde_json::json!(true);
            if let Some((unix_ms, _)) = written {
                object["as_of_unix_ms"] = serde_json::json!(unix_ms);
            }
        }
        crate::out!("{object}");
        return;
    }
    match in_use {
        Some(Some((_, age))) => crate::out!(
            "(in use by a running solve or coordinator: complete layers from the db, the others as it wrote them {age} s ago)"
        ),
        Some(None) => crate::out!(
            "(in use by a running solve or coordinator, which has not written its progress yet: complete layers from the db)"
        ),
        None => {}
    }
    print_status(status);
}

/// The status as JSON, its keys in alphabetical order as they always were.
fn to_json(status: &impl serde::Serialize) -> String {
    serde_json::to_value(status)
        .expect("a status serialises")
        .to_string()
}

/// The status table of a run.
fn print_status(status: &RunStatus) {
    crate::out!(
        "{}-card {} game in {}: {}",
        status.n,
        status.objective,
        status.db,
        if status.complete {
            "complete"
        } else {
            "incomplete"
        }
    );
    if let Some(from) = status.book_from_layer {
        crate::out!(
            "a book: layers {from} to {} kept ({}), layers below {from} solved on demand (checksums of the full db)",
            status.n,
            human_bytes(status.db_bytes)
        );
    } else if status.complete {
        crate::out!("db size: {}", human_bytes(status.db_bytes));
    } else {
        crate::out!(
            "db size: {} (an estimated {} when complete)",
            human_bytes(status.db_bytes),
            human_bytes(status.estimated_db_bytes)
        );
    }
    crate::out!(
        "{:>3} {:>7} {:>7} {:>14} {:>9}  checksum",
        "k",
        "slices",
        "done",
        "states",
        "max_gap"
    );
    for l in &status.layers {
        crate::out!(
            "{:>3} {:>7} {:>7} {:>14} {:>9}  {}",
            l.k,
            l.slices,
            if l.on_demand {
                "demand".to_string()
            } else {
                l.done.to_string()
            },
            l.states,
            l.max_gap.map_or("-".to_string(), |g| format!("{g:.1e}")),
            l.checksum.as_deref().unwrap_or("-")
        );
    }
    if let Some(games) = total_matrix_games(status) {
        crate::out!("{games} matrix games solved in all (every run of the solve)");
    }
}

/// The matrix games of a complete run, every run of it, where every layer's record
/// counts them (layers completed by an older build do not).
fn total_matrix_games(status: &RunStatus) -> Option<u64> {
    if !status.complete {
        return None;
    }
    status.layers.iter().map(|l| l.matrix_games).sum()
}

fn remote_status(args: &StatusArgs) -> Result<(), Failure> {
    let url = args
        .coordinator
        .clone()
        .expect("clap requires --db or --coordinator");
    let (token, tls_ca) = client_credentials(args.token_file.as_deref(), args.tls_ca.as_deref())?;
    let rt = runtime()?;
    let reply = rt.block_on(async move {
        let mut client = connect_with_ca(&url, token.as_deref(), tls_ca.as_deref())
            .map_err(|e| Failure::Usage(e.to_string()))?;
        client
            .status(StatusRequest {})
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| {
                let why = match tls_refusal(&s) {
                    Some(tls) => format!("TLS with the coordinator failed: {tls}"),
                    // what a plain client makes of a TLS server's answer
                    None if url.starts_with("http://")
                        && matches!(s.code(), Code::Cancelled | Code::Unknown) =>
                    {
                        format!(
                            "{} (if the coordinator serves TLS, use https:// and --tls-ca)",
                            s.message()
                        )
                    }
                    None => s.message().to_string(),
                };
                Failure::Runtime(format!("status from {url}: {why}"))
            })
    })?;
    let status = ClusterStatus::from_proto(reply)
        .map_err(|e| Failure::Runtime(format!("bad status from the coordinator: {e}")))?;
    if args.json {
        crate::out!("{}", to_json(&status));
        return Ok(());
    }
    print_status(&status.run);
    print_cluster(&status);
    Ok(())
}

/// What a coordinator adds to the table: the open layer's shards, the workers, the rate
/// and whatever went wrong.
fn print_cluster(status: &ClusterStatus) {
    let shards = status.shards.unwrap_or_default();
    crate::out!(
        "open layer: {}; shards {} pending, {} leased, {} done",
        status.open_layer.map_or("-".to_string(), |k| k.to_string()),
        shards.pending,
        shards.leased,
        shards.done
    );
    crate::out!(
        "{} live workers ({} sessions held); {} games/s this run",
        status.workers.len(),
        status.workers_registered,
        status.games_per_second as u64
    );
    // the coordinator's one estimate, as its log and dashboard show it
    match status.eta_seconds {
        Some(_) if status.run.complete => {}
        Some(seconds) => crate::out!(
            "time left: about {} at the last minute's speed",
            gops_common::human::duration(seconds)
        ),
        None => crate::out!("time left: unknown (nothing stored in the last minute)"),
    }
    for w in &status.workers {
        crate::out!(
            "  worker {} {:<20} {:>3} threads {:>8} slices {:>3} rejected",
            w.id,
            w.name,
            w.threads,
            w.slices,
            w.rejected
        );
    }
    crate::out!(
        "rejected submissions {}, calls with a wrong session key {}, disagreeing copies {}, damaged slices solved again {}",
        status.rejected_submissions,
        status.refused_calls,
        status.disagreements,
        status.repaired_slices
    );
    if let Some(stall) = &status.stall {
        crate::out!("not moving: {stall}");
    }
    if let Some(failure) = &status.failure {
        crate::out!("stopping: {failure}");
    }
}
