//! The coordinator's gRPC face: each handler unwraps its request, calls the
//! [`Coordinator`] off the async runtime ([`crate::server::core_call`], which maps the domain
//! error to a `Status` in one place). Also the token
//! check (one shared token, or one per worker), the bounds on slice streams, TLS and the
//! periodic progress log.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gops_proto::ids::{Caller, LeaseId, SessionKey, WorkerId};
use gops_proto::v1::coordinator_server::{Coordinator as CoordinatorRpc, CoordinatorServer};
use gops_proto::v1::{
    FetchRequest, Finished, HeartbeatReply, HeartbeatRequest, HelloReply, HelloRequest, LeaseReply,
    LeaseRequest, LeaveReply, LeaveRequest, LocateReply, ReleaseReply, ReleaseRequest, Shard,
    SliceData, SlicePlace, StatusReply, StatusRequest, SubmitReply, SubmitRequest, Wait,
    lease_reply,
};
use gops_proto::wire::{self, slice_data, slice_parts};
use tokio::net::TcpListener;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic::{Request, Response, Status};
use tracing::{debug, info, warn};

use crate::cluster::registry::Credential;
use crate::cluster::rules::Submitted;
use crate::cluster::{Admitted, Coordinator, LeaseOutcome};
use crate::server::admission::{self, ConnInfo, ConnLimits};
use crate::server::core_call::blocking;
use crate::server::fetch_slots::{FetchParty, FetchSlots};
use crate::server::submit_gate::SubmitGate;
pub use crate::server::tokens::{AccessTokens, TokenCheck};

fn layer_of(value: u32) -> Result<u8, Status> {
    u8::try_from(value)
        .map_err(|_| Status::invalid_argument(format!("layer {value} is out of range")))
}

/// How far a slice stream may fall behind [`FETCH_MIN_RATE`]: a client that stops
/// reading (or never grants flow-control window) loses its stream, not a thread.
pub const FETCH_GRACE: Duration = Duration::from_secs(10);
/// The slowest a slice stream may be read, bytes per second, after [`FETCH_GRACE`]: a
/// reader that holds a stream open by reading a little now and then loses it.
const FETCH_MIN_RATE: f64 = 256.0 * 1024.0;

pub struct Service {
    core: Arc<Coordinator>,
    fetch_slots: FetchSlots,
}

/// The caller a request names: its worker id and the session key it presents.
fn caller(worker_id: u64, key: &[u8]) -> Result<Caller, Status> {
    let key = SessionKey::from_wire(key).ok_or_else(|| {
        Status::invalid_argument(format!(
            "session key must be {} bytes (protocol version {})",
            SessionKey::LEN,
            gops_proto::PROTOCOL_VERSION
        ))
    })?;
    Ok(Caller {
        worker: WorkerId(worker_id),
        key,
    })
}

type SliceStream = Pin<Box<dyn Stream<Item = Result<SliceData, Status>> + Send>>;

#[tonic::async_trait]
impl CoordinatorRpc for Service {
    async fn hello(&self, request: Request<HelloRequest>) -> Result<Response<HelloReply>, Status> {
        let credential = request.extensions().get::<Credential>().copied();
        let r = request.into_inner();
        let core = Arc::clone(&self.core);
        let hello_core = Arc::clone(&core);
        let caller = blocking(move || {
            hello_core.hello(r.protocol_version, &r.worker_name, r.threads, credential)
        })
        .await?;
        Ok(Response::new(HelloReply {
            worker_id: caller.worker.0,
            n: u32::from(core.n()),
            objective: core.objective().name().to_string(),
            lease_ms: core.config().lease.as_millis() as u64,
            session_key: caller.key.to_wire(),
            pivot_start: wire::pivot_start_to_wire(core.pivot_start()),
        }))
    }

    async fn lease(&self, request: Request<LeaseRequest>) -> Result<Response<LeaseReply>, Status> {
        let r = request.into_inner();
        let caller = caller(r.worker_id, &r.session_key)?;
        let core = Arc::clone(&self.core);
        let reply = match blocking(move || core.lease(caller, Instant::now())).await? {
            LeaseOutcome::Shard {
                lease_id,
                layer,
                prize_ranks,
            } => lease_reply::Reply::Shard(Shard {
                lease_id: lease_id.0,
                layer: u32::from(layer),
                prize_ranks,
            }),
            LeaseOutcome::Wait(after) => lease_reply::Reply::Wait(Wait {
                retry_after_ms: after.as_millis() as u64,
            }),
            LeaseOutcome::Finished => lease_reply::Reply::Finished(Finished {}),
        };
        Ok(Response::new(LeaseReply { reply: Some(reply) }))
    }

    async fn heartbeat(
        &self,
        request: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatReply>, Status> {
        let r = request.into_inner();
        let core = Arc::clone(&self.core);
        let (caller, lease) = (caller(r.worker_id, &r.session_key)?, LeaseId(r.lease_id));
        let valid = blocking(move || core.heartbeat(caller, lease, Instant::now())).await?;
        Ok(Response::new(HeartbeatReply { valid }))
    }

    type FetchSlicesStream = SliceStream;

    async fn fetch_slices(
        &self,
        request: Request<FetchRequest>,
    ) -> Result<Response<SliceStream>, Status> {
        let party = fetch_party(&request);
        let r = request.into_inner();
        let layer = layer_of(r.layer)?;
        let core = Arc::clone(&self.core);
        let (check_core, ranks) = (Arc::clone(&core), r.prize_ranks.clone());
        blocking(move || check_core.check_fetch(layer, &ranks)).await?;
        // a valid request waits its turn for a stream (a bad one is answered at once)
        let slot = self.fetch_slots.acquire(party).await?;
        // one slice in memory at a time per stream, each read off the runtime; a reader
        // slower than FETCH_MIN_RATE (after FETCH_GRACE) loses the stream
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        tokio::spawn(async move {
            let _slot = slot;
            let started = tokio::time::Instant::now();
            let mut sent = 0u64;
            for rank in r.prize_ranks {
                let read_core = Arc::clone(&core);
                let item = blocking(move || read_core.fetch_one(layer, rank))
                    .await
                    .map(|bytes| slice_data(layer, rank, bytes));
                let failed = item.is_err();
                sent += item.as_ref().map_or(0, |s| s.body.len() as u64);
                let due =
                    started + FETCH_GRACE + Duration::from_secs_f64(sent as f64 / FETCH_MIN_RATE);
                match tokio::time::timeout_at(due, tx.send(item)).await {
                    Ok(Ok(())) if !failed => {}
                    Ok(_) => break,
                    Err(_) => {
                        warn!(
                            layer,
                            min_bytes_per_s = FETCH_MIN_RATE,
                            "a slice stream's reader reads too slowly; stream dropped"
                        );
                        break;
                    }
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn locate_slices(
        &self,
        request: Request<FetchRequest>,
    ) -> Result<Response<LocateReply>, Status> {
        let r = request.into_inner();
        let layer = layer_of(r.layer)?;
        let core = Arc::clone(&self.core);
        let ranks = r.prize_ranks;
        let places = blocking(move || {
            core.check_fetch(layer, &ranks)?;
            let located = core.locate(layer, &ranks)?;
            Ok(ranks
                .into_iter()
                .zip(located)
                .map(|(prize_rank, located)| match located {
                    Some(l) => SlicePlace {
                        prize_rank,
                        file: l.file_name,
                        offset: l.place.offset,
                        len: l.place.len,
                        digest: l.digest.to_vec(),
                    },
                    None => SlicePlace {
                        prize_rank,
                        ..SlicePlace::default()
                    },
                })
                .collect())
        })
        .await?;
        Ok(Response::new(LocateReply { places }))
    }

    async fn submit(
        &self,
        request: Request<SubmitRequest>,
    ) -> Result<Response<SubmitReply>, Status> {
        // the sender the gate admitted, which the message must name too
        let admitted = request
            .extensions()
            .get::<Admitted>()
            .copied()
            .ok_or_else(|| Status::internal("a submission that did not pass the gate"))?;
        let (caller, lease) = (admitted.caller(), admitted.lease());
        let r = request.into_inner();
        if caller.worker != WorkerId(r.worker_id)
            || caller.key.0[..] != r.session_key[..]
            || lease != LeaseId(r.lease_id)
        {
            return Err(Status::invalid_argument(
                "the call's metadata names another sender or lease than its message",
            ));
        }
        let slices = r
            .slices
            .into_iter()
            .map(submitted)
            .collect::<Result<Vec<_>, Status>>()?;
        let core = Arc::clone(&self.core);
        let outcome =
            blocking(move || core.submit_admitted(admitted, slices, Instant::now())).await?;
        Ok(Response::new(SubmitReply {
            stored: outcome.stored,
            duplicates: outcome.duplicates,
            held: outcome.held,
        }))
    }

    async fn release(
        &self,
        request: Request<ReleaseRequest>,
    ) -> Result<Response<ReleaseReply>, Status> {
        let r = request.into_inner();
        let core = Arc::clone(&self.core);
        let (caller, lease) = (caller(r.worker_id, &r.session_key)?, LeaseId(r.lease_id));
        match r.failure.filter(|why| !why.is_empty()) {
            None => blocking(move || core.release(caller, lease)).await?,
            Some(why) => {
                blocking(move || core.release_failed(caller, lease, &why, Instant::now())).await?;
            }
        }
        Ok(Response::new(ReleaseReply {}))
    }

    async fn leave(&self, request: Request<LeaveRequest>) -> Result<Response<LeaveReply>, Status> {
        let r = request.into_inner();
        let core = Arc::clone(&self.core);
        let caller = caller(r.worker_id, &r.session_key)?;
        blocking(move || core.leave(caller)).await?;
        Ok(Response::new(LeaveReply {}))
    }

    async fn status(
        &self,
        _request: Request<StatusRequest>,
    ) -> Result<Response<StatusReply>, Status> {
        let core = Arc::clone(&self.core);
        let status = blocking(move || core.status(Instant::now())).await?;
        Ok(Response::new(status.to_proto()))
    }
}

/// A slice off the wire, its fields checked for form (the core checks content).
fn submitted(s: SliceData) -> Result<Submitted, Status> {
    let (layer, prize_rank, bytes) = slice_parts(s).map_err(Status::invalid_argument)?;
    Ok(Submitted {
        layer,
        prize_rank,
        bytes,
    })
}

/// Who a fetch counts against: the per-worker token it presented, or else the peer's
/// address.
fn fetch_party<T>(request: &Request<T>) -> FetchParty {
    if let Some(Credential(c)) = request.extensions().get::<Credential>() {
        return FetchParty::Credential(*c);
    }
    match request.extensions().get::<ConnInfo>() {
        Some(connection) => match connection.tcp.remote_addr {
            Some(address) => FetchParty::Address(address.ip()),
            None => FetchParty::Unknown,
        },
        None => FetchParty::Unknown,
    }
}

/// The service with its limits and token check, ready to add to a server.
pub fn grpc_service(
    core: Arc<Coordinator>,
    tokens: AccessTokens,
) -> InterceptedService<SubmitGate<CoordinatorServer<Service>>, TokenCheck> {
    let service = Service {
        core: Arc::clone(&core),
        fetch_slots: FetchSlots::default(),
    };
    let server = CoordinatorServer::new(service)
        .max_decoding_message_size(gops_proto::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(gops_proto::MAX_MESSAGE_BYTES);
    InterceptedService::new(SubmitGate::new(server, core), TokenCheck::new(tokens))
}

/// HTTP/2 pings on every connection, and how long an answer may take: a connection whose
/// peer stopped answering (its host or its link is down) is closed after twice this,
/// rather than lingering until TCP gives up (about 15 minutes) or forever when idle.
const KEEPALIVE: Duration = Duration::from_secs(20);

/// HTTP/2 streams one connection may have open at once (a worker uses a handful).
const MAX_STREAMS_PER_CONNECTION: u32 = 64;

/// The longest a call may take to be answered (a submission's checks included; a slice
/// stream's own pace is bounded by [`FETCH_MIN_RATE`]).
const CALL_LIMIT: Duration = Duration::from_secs(30 * 60);

/// How long a stopping server waits for the calls in flight. A connection to a worker
/// whose network died never finishes its graceful close, and would hold up the exit.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves the coordinator in plain gRPC on `listener` until `shutdown` resolves, logging
/// progress every `progress_every`.
pub async fn serve(
    listener: TcpListener,
    core: Arc<Coordinator>,
    tokens: AccessTokens,
    progress_every: Duration,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let limits = ConnLimits::default();
    serve_with_tls(
        listener,
        core,
        tokens,
        None,
        limits,
        progress_every,
        shutdown,
    )
    .await
}

/// [`serve`], speaking TLS only when `tls` is given (see [`server_tls`]), keeping the
/// connections `limits` admits ([`crate::server::admission`]).
pub async fn serve_with_tls(
    listener: TcpListener,
    core: Arc<Coordinator>,
    tokens: AccessTokens,
    tls: Option<ServerTlsConfig>,
    limits: ConnLimits,
    progress_every: Duration,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let mut builder = Server::builder()
        .http2_keepalive_interval(Some(KEEPALIVE))
        .http2_keepalive_timeout(Some(KEEPALIVE))
        // one connection cannot open streams without end, nor hold a call for ever
        .max_concurrent_streams(Some(MAX_STREAMS_PER_CONNECTION))
        .timeout(CALL_LIMIT);
    if let Some(tls) = tls {
        // the handshake happens per connection on the accepted streams below, so the
        // custom incoming stream keeps its TCP_NODELAY
        builder = builder.tls_config(tls)?;
    }
    let logger = tokio::spawn(log_progress(Arc::clone(&core), progress_every));
    let stalls = tokio::spawn(crate::server::stall_clock::watch_for_stalls(Arc::clone(
        &core,
    )));
    let (stop_status_file, status_file_stopping) = tokio::sync::oneshot::channel::<()>();
    let status_writer = tokio::spawn(keep_status_file(Arc::clone(&core), status_file_stopping));
    let incoming = admission::admit(listener, limits);
    let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        let _ = stopping.send(());
    };
    let server = builder
        .add_service(grpc_service(core, tokens))
        .serve_with_incoming_shutdown(incoming, signal);
    let grace_over = async move {
        match stopped.await {
            Ok(()) => tokio::time::sleep(SHUTDOWN_GRACE).await,
            Err(_) => std::future::pending().await,
        }
    };
    let result = tokio::select! {
        result = server => result,
        () = grace_over => {
            warn!(
                grace_secs = SHUTDOWN_GRACE.as_secs(),
                "connections still open after the grace period; dropping them"
            );
            Ok(())
        }
    };
    logger.abort();
    stalls.abort();
    // not aborted: its last write, after any under way, is the run's end
    let _ = stop_status_file.send(());
    let _ = status_writer.await;
    result
}

/// The server's TLS settings from a PEM certificate chain and its PEM private key,
/// checked now (parsable, key matching the certificate) rather than at the first
/// connection. The error is one line.
pub fn server_tls(cert_pem: &[u8], key_pem: &[u8]) -> Result<ServerTlsConfig, String> {
    let config = ServerTlsConfig::new()
        .identity(Identity::from_pem(cert_pem, key_pem))
        // a client that opens a connection and never finishes its handshake
        .timeout(Duration::from_secs(10));
    Server::builder().tls_config(config.clone()).map_err(|e| {
        // the top is only "transport error"
        std::error::Error::source(&e).map_or_else(|| e.to_string(), error_chain)
    })?;
    Ok(config)
}

pub use gops_proto::error_text::error_chain;

/// How often the run's status is written beside the db.
const STATUS_FILE_EVERY: Duration = Duration::from_secs(2);

/// Writes the run's status into the db directory's status file every
/// [`STATUS_FILE_EVERY`], so that `gops status --db` in another terminal can show it
/// while this process holds the db ([`gops_db::status::file`]), and once more when
/// `stop` fires (or its sender is gone), so that the file ends with the run's last
/// state rather than one up to a period old. One write at a time: the last one cannot
/// be overtaken by an earlier one. A write that fails is logged at debug and tried
/// again next time: it is a convenience, never the run's business.
async fn keep_status_file(core: Arc<Coordinator>, mut stop: tokio::sync::oneshot::Receiver<()>) {
    let mut ticks = tokio::time::interval(STATUS_FILE_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let stopping = tokio::select! {
            _ = ticks.tick() => false,
            _ = &mut stop => true,
        };
        let c = Arc::clone(&core);
        let written = tokio::task::spawn_blocking(move || {
            let status = gops_db::status::run_status(c.store()).map_err(|e| e.to_string())?;
            let snapshot = gops_db::status::file::StatusSnapshot::now(status);
            gops_db::status::file::write(c.store().path(), &snapshot).map_err(|e| e.to_string())
        })
        .await;
        if let Ok(Err(why)) = written {
            debug!(error = %why, "cannot write the status file");
        }
        if stopping {
            return;
        }
    }
}

async fn log_progress(core: Arc<Coordinator>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    let mut said_complete = false;
    loop {
        ticks.tick().await;
        let c = Arc::clone(&core);
        // the live status: the same estimate of games left, recent rate and time left as
        // `gops status --coordinator` and the dashboard show
        let Ok(Ok(live)) = tokio::task::spawn_blocking(move || c.live_status(Instant::now())).await
        else {
            continue;
        };
        let status = &live.cluster;
        let Some(layer) = status.open_layer else {
            // once: what to do now, rather than the same line every few seconds
            if !said_complete {
                info!(
                    "run complete: the db is done; stop this coordinator (Ctrl-C) to use it with value, strategy or export (--exit-when-done stops by itself)"
                );
                said_complete = true;
            }
            continue;
        };
        let shards = status.shards.unwrap_or_default();
        let total = shards.pending + shards.leased + shards.done;
        let eta = status
            .eta_seconds
            .map_or_else(|| "unknown".into(), |s| format!("{s:.0}s"));
        info!(
            layer,
            shards_done = shards.done,
            shards = total,
            games_per_s = live.recent_games_per_second.unwrap_or(0.0) as u64,
            games_left = live.games_left,
            workers = status.workers.len(),
            eta = %eta,
            "progress"
        );
    }
}
