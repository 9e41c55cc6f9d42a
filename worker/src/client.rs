//! The worker's main loop: hello, then lease a shard, fetch the slices it depends on,
//! solve it on the thread pool while heartbeating, hand it in (while solving the next),
//! and again, until the run is finished or shutdown is asked for (the shard in hand is
//! finished and submitted first, a shard leased ahead is given back). While a shard is
//! solved, the next one is leased and its slices fetched, so the solver threads do not
//! wait on the network. A coordinator that is unreachable is retried with
//! backoff; one that restarted and forgot this worker is greeted again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use gops_common::budget::{CacheSplit, Role, bounded_need};
use gops_common::cache::SliceCache;
use gops_common::cards::CardSet;
use gops_common::engine::{LayerEngine, SolvedSlice};
use gops_common::prizes::{prize_rank, prize_set_count};
use gops_common::shard::ShardSolver;
use gops_common::slice::Slice;
use gops_proto::ids::LeaseId;
use gops_proto::v1::{LeaseRequest, LeaveRequest, ReleaseRequest, lease_reply};
use tokio::sync::watch;
use tracing::{Instrument, debug, error, info, warn};

use crate::backoff::Backoff;
use crate::call::Called;
use crate::connection::connect_with_ca;
use crate::error::ClientError;
use crate::fetch::SliceSources;
use crate::heartbeat::{Phase, keep_lease};
use crate::link::Link;
use crate::session::Session;
use crate::shared_dir::SharedDir;
use crate::submit::{InFlight, send_submission, settle, submission_chunks};
use crate::summary::WorkerSummary;

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// The coordinator's URL, e.g. `http://10.0.0.1:7700` or `https://coord:7700`.
    pub coordinator: String,
    /// PEM of the certificate authority (or self-signed certificate) that an `https://`
    /// coordinator must present a certificate from; `None`: the webpki roots.
    pub tls_ca: Option<Vec<u8>>,
    pub threads: usize,
    pub token: Option<String>,
    /// How large the cache of dependency slices is.
    pub cache: CacheSize,
    pub name: String,
    pub backoff: Backoff,
    /// The coordinator's db directory on a shared file system: dependency slices are
    /// read from it instead of fetched (`--slices-dir`).
    pub slices_dir: Option<SharedDir>,
}

/// How a worker sizes its cache of dependency slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheSize {
    /// This many bytes (`--cache-mb`, or a local run's share of its memory).
    Bytes(usize),
    /// What the game's bounded need leaves of the process's memory budget of this many
    /// bytes (`--memory-mb`, or the default), known after hello from N and the objective.
    FromBudget(u64),
}

/// How long a worker told that the run is complete waits for its last submission.
const FINISHED_GRACE: Duration = Duration::from_secs(10);

/// A shard as leased, checked against the game: a layer of it, prize ranks in range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedShard {
    pub lease_id: LeaseId,
    pub layer: u8,
    pub prize_ranks: Vec<u32>,
}

impl LeasedShard {
    pub fn from_proto(shard: gops_proto::v1::Shard, n: u8) -> Result<LeasedShard, ClientError> {
        let layer = u8::try_from(shard.layer)
            .ok()
            .filter(|&k| k >= 1 && k <= n)
            .ok_or_else(|| ClientError::Protocol(format!("shard of layer {}", shard.layer)))?;
        if shard
            .prize_ranks
            .iter()
            .any(|&r| r as usize >= prize_set_count(n, layer))
        {
            return Err(ClientError::Protocol(
                "shard with a prize rank out of range".into(),
            ));
        }
        Ok(LeasedShard {
            lease_id: LeaseId(shard.lease_id),
            layer,
            prize_ranks: shard.prize_ranks,
        })
    }
}

/// Runs the worker until the run is finished (Ok) or `shutdown` turns true (Ok, after
/// the shard in hand is submitted).
pub async fn run_worker(
    config: WorkerConfig,
    shutdown: watch::Receiver<bool>,
) -> Result<WorkerSummary, ClientError> {
    // every line the worker logs names its coordinator
    let link = connect_with_ca(
        &config.coordinator,
        config.token.as_deref(),
        config.tls_ca.as_deref(),
    )?;
    run_worker_with(config, link, shutdown).await
}

/// [`run_worker`] over `link` (in tests, a coordinator in memory): `config.coordinator`
/// only names it in the log.
pub async fn run_worker_with<L: Link>(
    config: WorkerConfig,
    link: L,
    shutdown: watch::Receiver<bool>,
) -> Result<WorkerSummary, ClientError> {
    let span = tracing::info_span!("worker", coordinator = %config.coordinator);
    work(config, link, shutdown).instrument(span).await
}

async fn work<L: Link>(
    config: WorkerConfig,
    link: L,
    mut shutdown: watch::Receiver<bool>,
) -> Result<WorkerSummary, ClientError> {
    let solver = Arc::new(ShardSolver::new(config.threads)?);
    let mut session = Session::greet(
        link,
        config.backoff.clone(),
        shutdown.clone(),
        &config.name,
        config.threads,
    )
    .await?;
    let cache_bytes = match config.cache {
        CacheSize::Bytes(bytes) => bytes,
        CacheSize::FromBudget(budget) => {
            let need = bounded_need(session.n(), session.objective());
            let split =
                CacheSplit::of(budget, need, Role::Worker).ok_or_else(|| ClientError::Budget {
                    n: session.n(),
                    need_mib: need.div_ceil(1 << 20),
                    budget_mib: budget >> 20,
                })?;
            split.worker_cache as usize
        }
    };
    info!(cache_mib = cache_bytes >> 20, "slice cache");
    let mut sources = SliceSources::new(SliceCache::new(cache_bytes), config.slices_dir.clone());
    let mut engine: Option<Arc<LayerEngine>> = None;
    let mut summary = WorkerSummary::default();
    let mut in_flight: Option<InFlight> = None;
    // the next shard, leased and fetched while the one before was being solved
    let mut ahead: Option<Next> = None;
    loop {
        if *shutdown.borrow() {
            if let Some(Next::Ready(ready)) = ahead.take() {
                release(&session, ready.shard.lease_id).await;
                info!(lease = %ready.shard.lease_id, "gave back the shard leased ahead");
            }
            settle(&mut in_flight, &mut summary).await?;
            leave(&session).await;
            info!("shutting down");
            summary.dependencies = sources.counts;
            return Ok(summary);
        }
        let next = match ahead.take() {
            Some(next) => next,
            None => next_shard(&session, &mut sources, &mut engine).await?,
        };
        let ready = match next {
            Next::Ready(ready) => ready,
            Next::Finished => {
                // the run is complete, so every slice is stored and a submission still in
                // flight adds nothing; the coordinator may exit before it lands (it stops
                // once every live worker has heard "finished"), so wait a little, then go
                let last =
                    tokio::time::timeout(FINISHED_GRACE, settle(&mut in_flight, &mut summary));
                match last.await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        warn!(error = %e, "the run is complete; the last submission did not land (nothing was missing)")
                    }
                    Err(_) => warn!(
                        grace_secs = FINISHED_GRACE.as_secs(),
                        "the run is complete; stopped waiting for the last submission (nothing was missing)"
                    ),
                }
                summary.dependencies = sources.counts;
                info!(
                    shards = summary.shards,
                    slices = summary.slices,
                    slices_cached = sources.counts.cached,
                    slices_read_from_dir = sources.counts.read_from_dir,
                    slices_placed_by_sealed_index = sources.counts.placed_by_sealed_index,
                    slices_fetched = sources.counts.fetched,
                    "run finished"
                );
                return Ok(summary);
            }
            Next::Wait(_) if in_flight.is_some() => {
                settle(&mut in_flight, &mut summary).await?;
                continue;
            }
            Next::Wait(pause) => {
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.changed() => {}
                }
                continue;
            }
            Next::Forgotten => {
                session.greet_again(&config.name, config.threads).await?;
                continue;
            }
        };
        let (layer, lease_id, leased_at) =
            (ready.shard.layer, ready.shard.lease_id, ready.leased_at);
        let (solved, prefetched) =
            solve_leasing_ahead(&session, &solver, &mut sources, &mut engine, ready).await;
        let solved = match solved {
            Ok(slices) => slices,
            Err(error) => {
                error!(layer, error = %error, "shard failed; giving it back");
                release_failed(&session, lease_id, &error.to_string()).await;
                if let Ok(Next::Ready(next)) = prefetched {
                    release(&session, next.shard.lease_id).await;
                }
                return Err(error);
            }
        };
        ahead = match prefetched {
            // a wait answered before this shard was solved is stale: ask again
            Ok(Next::Wait(_)) => None,
            Ok(next) => Some(next),
            // the lease at the top of the loop asks again, with its retries and the
            // shutdown check, once this shard is handed in
            Err(error) => {
                warn!(error = %error, "leasing ahead failed; asking again after this shard");
                None
            }
        };
        let games: u64 = solved.iter().map(|s| s.games).sum();
        let chunks = submission_chunks(layer, &solved, gops_proto::SUBMIT_CHUNK_BYTES);
        let waited = Instant::now();
        settle(&mut in_flight, &mut summary).await?;
        debug!(
            settle_ms = waited.elapsed().as_millis() as u64,
            "previous submission settled"
        );
        in_flight = Some(InFlight {
            task: tokio::spawn(
                send_submission(session.submitter(), lease_id, chunks).in_current_span(),
            ),
            layer,
            lease_id,
            slices: solved.len(),
            games,
            started: leased_at,
        });
    }
}

/// A shard leased and ready to solve: its layer's engine and its dependency slices.
struct ReadyShard {
    shard: LeasedShard,
    engine: Arc<LayerEngine>,
    deps: HashMap<u32, Arc<Slice>>,
    /// When the lease was asked for, and how long leasing, building the engine and
    /// fetching took.
    leased_at: Instant,
    prepared_in: Duration,
}

/// What asking the coordinator for work gave.
enum Next {
    Ready(ReadyShard),
    /// Nothing to lease now: ask again after this long (or once a submission settles).
    Wait(Duration),
    /// Every layer is done.
    Finished,
    /// The coordinator restarted and forgot this worker: say hello again.
    Forgotten,
}

/// Leases a shard and makes it ready: the layer's engine (built when the layer is new,
/// which also tells the cache to keep only that layer's dependencies) and the slices it
/// reads, from the cache, the shared directory or fetched.
async fn next_shard<L: Link>(
    session: &Session<L>,
    sources: &mut SliceSources,
    engine: &mut Option<Arc<LayerEngine>>,
) -> Result<Next, ClientError> {
    let started = Instant::now();
    let request = LeaseRequest {
        worker_id: session.id().0,
        session_key: session.key().to_wire(),
    };
    let reply = match session
        .call("lease", |c| {
            let r = request.clone();
            async move { c.lease(r).await }
        })
        .await?
    {
        Called::Done(reply) => reply,
        Called::Forgotten => return Ok(Next::Forgotten),
    };
    let shard = match reply.reply {
        Some(lease_reply::Reply::Finished(_)) => return Ok(Next::Finished),
        Some(lease_reply::Reply::Wait(wait)) => {
            return Ok(Next::Wait(Duration::from_millis(
                wait.retry_after_ms.clamp(1, 10_000),
            )));
        }
        Some(lease_reply::Reply::Shard(shard)) => shard,
        None => return Err(ClientError::Protocol("empty lease reply".into())),
    };
    let shard = LeasedShard::from_proto(shard, session.n())?;
    let layer = shard.layer;
    // per shard: a detail (`--log debug`); layers are what the default log shows
    debug!(
        layer,
        lease = %shard.lease_id,
        slices = shard.prize_ranks.len(),
        "shard leased"
    );
    let layer_engine = match engine.as_ref().filter(|e| e.k() == layer) {
        Some(e) => Arc::clone(e),
        None => {
            let (n, objective, start) = (session.n(), session.objective(), session.pivot_start());
            let built = tokio::task::spawn_blocking(move || {
                LayerEngine::new(n, layer, objective).with_start(start)
            })
            .await
            .map_err(|e| ClientError::Local(format!("building the layer's engine: {e}")))?;
            sources.cache.keep_layer(layer - 1);
            let built = Arc::new(built);
            *engine = Some(Arc::clone(&built));
            built
        }
    };
    let deps = sources
        .dependencies(session, layer, &shard.prize_ranks)
        .await?;
    Ok(Next::Ready(ReadyShard {
        shard,
        engine: layer_engine,
        deps,
        leased_at: started,
        prepared_in: started.elapsed(),
    }))
}

/// Solves `ready` and, meanwhile, leases and fetches the next shard, so the solver
/// threads do not sit idle while a lease and its slices travel; the next shard's lease
/// is heartbeaten once it is held. Returns the solved slices and what the next lease
/// gave.
async fn solve_leasing_ahead<L: Link>(
    session: &Session<L>,
    solver: &Arc<ShardSolver>,
    sources: &mut SliceSources,
    engine: &mut Option<Arc<LayerEngine>>,
    ready: ReadyShard,
) -> (
    Result<Vec<SolvedSlice>, ClientError>,
    Result<Next, ClientError>,
) {
    let started = Instant::now();
    let ReadyShard {
        shard,
        engine: layer_engine,
        deps,
        prepared_in,
        ..
    } = ready;
    let solving = solve_with_heartbeats(session, solver, layer_engine, deps, &shard);
    let leasing = next_shard(session, sources, engine);
    tokio::pin!(solving, leasing);
    let mut next = None;
    let solved = loop {
        // the next shard's lease, once held, is kept alive while this one is solved
        let held = match &next {
            Some(Ok(Next::Ready(r))) => Some(r.shard.lease_id),
            _ => None,
        };
        let beats = async {
            match held {
                Some(lease_id) => {
                    keep_lease(
                        session.client.clone(),
                        session.caller(),
                        lease_id,
                        session.lease() / 3,
                        Phase::Solving,
                    )
                    .await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = &mut solving => break result,
            result = &mut leasing, if next.is_none() => next = Some(result),
            never = beats => match never {},
        }
    };
    let solved_in = started.elapsed();
    let next = match next {
        Some(next) => next,
        None => leasing.await,
    };
    debug!(
        layer = shard.layer,
        lease_and_fetch_ms = prepared_in.as_millis() as u64,
        solve_ms = solved_in.as_millis() as u64,
        "shard solved"
    );
    (solved, next)
}

/// Gives a lease back unfinished; the coordinator not answering is no reason to stop
/// (the lease expires anyway).
async fn release<L: Link>(session: &Session<L>, lease_id: LeaseId) {
    give_back(session, lease_id, None).await;
}

/// Gives a lease back saying why the shard failed, so the coordinator can stop a run
/// on a shard no worker gets past.
async fn release_failed<L: Link>(session: &Session<L>, lease_id: LeaseId, failure: &str) {
    give_back(session, lease_id, Some(failure.to_string())).await;
}

async fn give_back<L: Link>(session: &Session<L>, lease_id: LeaseId, failure: Option<String>) {
    let request = ReleaseRequest {
        worker_id: session.id().0,
        lease_id: lease_id.0,
        session_key: session.key().to_wire(),
        failure,
    };
    let _ = session.client.release(request).await;
}

/// Ends the session, so the coordinator stops counting this worker as live at once (one
/// attempt, at most 5 s: a coordinator of an earlier build, or one unreachable now,
/// finds out when the session goes silent, as before).
async fn leave<L: Link>(session: &Session<L>) {
    let request = LeaveRequest {
        worker_id: session.id().0,
        session_key: session.key().to_wire(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), session.client.leave(request)).await;
}

/// Solves the shard on the pool, off the runtime, heartbeating its lease meanwhile.
async fn solve_with_heartbeats<L: Link>(
    session: &Session<L>,
    solver: &Arc<ShardSolver>,
    engine: Arc<LayerEngine>,
    deps: HashMap<u32, Arc<Slice>>,
    shard: &LeasedShard,
) -> Result<Vec<SolvedSlice>, ClientError> {
    let solver = Arc::clone(solver);
    let ranks = shard.prize_ranks.clone();
    let task = tokio::task::spawn_blocking(move || {
        let dependency = |prizes: CardSet| &*deps[&prize_rank(prizes)];
        solver.solve_shard(&engine, &ranks, &dependency)
    });
    let beats = keep_lease(
        session.client.clone(),
        session.caller(),
        shard.lease_id,
        session.lease() / 3,
        Phase::Solving,
    );
    tokio::select! {
        result = task => result
            .map_err(|e| ClientError::Local(format!("the solver's thread failed: {e}")))?
            .map_err(ClientError::from),
        never = beats => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_proto::v1::Shard;

    #[test]
    fn a_shard_outside_the_game_is_a_protocol_error() {
        let shard = Shard {
            lease_id: 9,
            layer: 2,
            prize_ranks: vec![0, 5],
        };
        let leased = LeasedShard::from_proto(shard.clone(), 4).unwrap();
        assert_eq!((leased.lease_id, leased.layer), (LeaseId(9), 2));
        for bad in [
            Shard {
                layer: 0,
                ..shard.clone()
            },
            Shard {
                layer: 5,
                ..shard.clone()
            },
            Shard {
                layer: 256 + 2,
                ..shard.clone()
            },
            // C(4, 2) = 6 prize sets in layer 2
            Shard {
                prize_ranks: vec![6],
                ..shard.clone()
            },
        ] {
            assert!(matches!(
                LeasedShard::from_proto(bad, 4),
                Err(ClientError::Protocol(_))
            ));
        }
    }
}
