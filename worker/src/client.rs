//! The worker loop: hello, then lease a shard, fetch the slices it depends on, solve it
//! on the thread pool while heartbeating, submit, and again, until the run is finished or
//! shutdown is asked for (the shard in hand is finished and submitted first). A
//! coordinator that is unreachable is retried with backoff; one that restarted and
//! forgot this worker is greeted again.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gops_common::cards::CardSet;
use gops_common::checksum::digest_bytes;
use gops_common::engine::{LayerEngine, SolvedSlice, terminal_slice};
use gops_common::objective::Objective;
use gops_common::prizes::{prize_rank, prize_set_count, prize_unrank};
use gops_common::slice::Slice;
use gops_proto::v1::coordinator_client::CoordinatorClient;
use gops_proto::v1::{
    FetchRequest, HeartbeatRequest, HelloRequest, LeaseRequest, ReleaseRequest, SliceData,
    SubmitRequest, lease_reply,
};
use tokio::sync::watch;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Request, Status};
use tracing::{debug, error, info, warn};

use crate::backoff::{Backoff, is_transient, tls_refusal};
use crate::cache::SliceCache;
use crate::{ShardSolver, WorkerError};

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// The coordinator's URL, e.g. `http://10.0.0.1:7700` or `https://coord:7700`.
    pub coordinator: String,
    /// PEM of the certificate authority (or self-signed certificate) that an `https://`
    /// coordinator must present a certificate from; `None`: the webpki roots.
    pub tls_ca: Option<Vec<u8>>,
    pub threads: usize,
    pub token: Option<String>,
    pub cache_bytes: usize,
    pub name: String,
    pub backoff: Backoff,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    pub shards: u64,
    pub slices: u64,
    pub games: u64,
    pub rejected: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad coordinator address '{0}': {1}")]
    Address(String, String),
    #[error("the coordinator refused: {0}")]
    Refused(String),
    #[error("gave up after the coordinator was unreachable for {0:?}: {1}")]
    GaveUp(Duration, String),
    /// Asked to stop while the coordinator could not be reached: the shard in hand, if
    /// any, is leased again once its lease runs out.
    #[error("stopped while the coordinator was unreachable: {0}")]
    Stopped(String),
    #[error("the coordinator sent something unusable: {0}")]
    Protocol(String),
    #[error(transparent)]
    Worker(#[from] WorkerError),
}

/// Adds the run's token to every call.
#[derive(Clone)]
pub struct AddToken(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for AddToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

pub type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// A client for `url` with `token`; connects lazily, reconnects as needed. An
/// `https://` URL is verified against the webpki roots.
pub fn connect(url: &str, token: Option<&str>) -> Result<Client, ClientError> {
    connect_with_ca(url, token, None)
}

/// [`connect`], trusting only `ca_pem` (PEM certificates) for an `https://` URL when it
/// is given; `ca_pem` with a URL that is not `https://` is refused.
pub fn connect_with_ca(
    url: &str,
    token: Option<&str>,
    ca_pem: Option<&[u8]>,
) -> Result<Client, ClientError> {
    let bad = |why: String| ClientError::Address(url.to_string(), why);
    let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| bad(e.to_string()))?;
    let uri = endpoint.uri().clone();
    let https = uri.scheme_str() == Some("https");
    let endpoint = match (https, ca_pem) {
        (false, Some(_)) => {
            return Err(bad("a TLS CA is given but the URL is not https://".into()));
        }
        (false, None) => endpoint,
        (true, ca) => {
            // an IPv6 host comes bracketed in the URL, not in the certificate
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let tls = ClientTlsConfig::new()
                .domain_name(host)
                .timeout(Duration::from_secs(10));
            let tls = match ca {
                Some(pem) => tls.ca_certificate(Certificate::from_pem(pem)),
                None => tls.with_webpki_roots(),
            };
            endpoint
                .tls_config(tls)
                .map_err(|e| bad(format!("TLS set-up failed: {e}")))?
        }
    };
    let endpoint = endpoint
        .connect_timeout(Duration::from_secs(5))
        // a coordinator host that vanishes must surface as an error, not a hang
        .timeout(Duration::from_secs(600))
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true)
        .tcp_keepalive(Some(Duration::from_secs(30)))
        .tcp_nodelay(true);
    let token = token
        .map(|t| {
            format!("Bearer {t}")
                .parse()
                .map_err(|_| bad("token has characters not allowed in a header".into()))
        })
        .transpose()?;
    Ok(
        CoordinatorClient::with_interceptor(endpoint.connect_lazy(), AddToken(token))
            .max_decoding_message_size(gops_proto::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(gops_proto::MAX_MESSAGE_BYTES),
    )
}

/// How a call ended, once transient failures were retried.
enum Called<T> {
    Done(T),
    /// The coordinator does not know this worker (it restarted): say hello again.
    Forgotten,
}

/// How long a worker asked to stop keeps retrying an unreachable coordinator (to hand in
/// its last shard) before it exits anyway.
const STOP_GRACE: Duration = Duration::from_secs(10);

struct Session {
    client: Client,
    backoff: Backoff,
    /// Turns true when the worker is asked to stop.
    stop: watch::Receiver<bool>,
    worker_id: u64,
    n: u8,
    objective: Objective,
    lease: Duration,
}

/// Calls `f` until it succeeds, is refused for good, the coordinator has been
/// unreachable for longer than `backoff` allows, or the worker was asked to `stop` more
/// than [`STOP_GRACE`] ago.
async fn call_with<T, F, Fut>(
    client: &Client,
    backoff: &Backoff,
    stop: &watch::Receiver<bool>,
    what: &str,
    mut f: F,
) -> Result<Called<T>, ClientError>
where
    F: FnMut(Client) -> Fut,
    Fut: Future<Output = Result<tonic::Response<T>, Status>>,
{
    let started = Instant::now();
    let mut attempt = 0;
    let mut stop = stop.clone();
    let mut stop_seen: Option<Instant> = None;
    loop {
        match f(client.clone()).await {
            Ok(response) => return Ok(Called::Done(response.into_inner())),
            Err(status) if status.code() == Code::NotFound => return Ok(Called::Forgotten),
            Err(status) if tls_refusal(&status).is_some() => {
                let why = tls_refusal(&status).unwrap_or_default();
                return Err(ClientError::Refused(format!(
                    "{what}: TLS with the coordinator failed: {why}"
                )));
            }
            Err(status) if is_transient(status.code()) => {
                if started.elapsed() > backoff.give_up_after {
                    return Err(ClientError::GaveUp(
                        started.elapsed(),
                        status.message().to_string(),
                    ));
                }
                let stopping = *stop.borrow_and_update();
                if stopping {
                    let since = *stop_seen.get_or_insert_with(Instant::now);
                    if since.elapsed() > STOP_GRACE {
                        return Err(ClientError::Stopped(status.message().to_string()));
                    }
                }
                if attempt == 0 {
                    warn!(call = what, error = %status.message(), "coordinator unreachable, retrying");
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff.delay(attempt)) => {}
                    // a stop request cuts the pause short and starts the grace period
                    _ = stop.changed(), if !stopping => {}
                }
                attempt += 1;
            }
            Err(status) => {
                return Err(ClientError::Refused(format!(
                    "{what}: {}",
                    status.message()
                )));
            }
        }
    }
}

impl Session {
    async fn call<T, F, Fut>(&self, what: &str, f: F) -> Result<Called<T>, ClientError>
    where
        F: FnMut(Client) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, Status>>,
    {
        call_with(&self.client, &self.backoff, &self.stop, what, f).await
    }

    async fn hello(&mut self, name: &str, threads: usize) -> Result<(), ClientError> {
        let request = HelloRequest {
            protocol_version: gops_proto::PROTOCOL_VERSION,
            worker_name: name.to_string(),
            threads: threads as u32,
        };
        let reply = match self
            .call("hello", |mut c| {
                let r = request.clone();
                async move { c.hello(r).await }
            })
            .await?
        {
            Called::Done(reply) => reply,
            Called::Forgotten => {
                return Err(ClientError::Protocol(
                    "hello answered 'unknown worker'".into(),
                ));
            }
        };
        let n = u8::try_from(reply.n)
            .ok()
            .filter(|n| (1..=gops_common::MAX_N).contains(n))
            .ok_or_else(|| ClientError::Protocol(format!("n = {}", reply.n)))?;
        let objective: Objective = reply.objective.parse().map_err(ClientError::Protocol)?;
        if self.worker_id != 0 && (n != self.n || objective != self.objective) {
            return Err(ClientError::Protocol(
                "the coordinator now runs another game".into(),
            ));
        }
        (self.worker_id, self.n, self.objective) = (reply.worker_id, n, objective);
        self.lease = Duration::from_millis(reply.lease_ms.max(1));
        info!(worker = self.worker_id, n, %objective, "joined the coordinator");
        Ok(())
    }
}

/// Runs the worker until the run is finished (Ok) or `shutdown` turns true (Ok, after
/// the shard in hand is submitted).
pub async fn run_worker(
    config: WorkerConfig,
    mut shutdown: watch::Receiver<bool>,
) -> Result<WorkerSummary, ClientError> {
    let solver = Arc::new(ShardSolver::new(config.threads)?);
    let mut session = Session {
        stop: shutdown.clone(),
        client: connect_with_ca(
            &config.coordinator,
            config.token.as_deref(),
            config.tls_ca.as_deref(),
        )?,
        backoff: config.backoff.clone(),
        worker_id: 0,
        n: 0,
        objective: Objective::Points,
        lease: Duration::from_secs(60),
    };
    session.hello(&config.name, config.threads).await?;
    let mut cache = SliceCache::new(config.cache_bytes);
    let mut engine: Option<Arc<LayerEngine>> = None;
    let mut summary = WorkerSummary::default();
    // the previous shard's submission runs while the next shard is solved
    let mut in_flight: Option<InFlight> = None;
    loop {
        if *shutdown.borrow() {
            settle(&mut in_flight, &mut session, &config, &mut summary).await?;
            info!("shutting down");
            return Ok(summary);
        }
        let worker_id = session.worker_id;
        let reply = match session
            .call("lease", |mut c| async move {
                c.lease(LeaseRequest { worker_id }).await
            })
            .await?
        {
            Called::Done(reply) => reply,
            Called::Forgotten => {
                session.hello(&config.name, config.threads).await?;
                continue;
            }
        };
        let shard = match reply.reply {
            Some(lease_reply::Reply::Finished(_)) => {
                settle(&mut in_flight, &mut session, &config, &mut summary).await?;
                info!(
                    shards = summary.shards,
                    slices = summary.slices,
                    "run finished"
                );
                return Ok(summary);
            }
            Some(lease_reply::Reply::Wait(_)) if in_flight.is_some() => {
                // most likely the layer waits for our own submission
                settle(&mut in_flight, &mut session, &config, &mut summary).await?;
                continue;
            }
            Some(lease_reply::Reply::Wait(wait)) => {
                let pause = Duration::from_millis(wait.retry_after_ms.clamp(1, 10_000));
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.changed() => {}
                }
                continue;
            }
            Some(lease_reply::Reply::Shard(shard)) => shard,
            None => return Err(ClientError::Protocol("empty lease reply".into())),
        };
        let layer = u8::try_from(shard.layer)
            .ok()
            .filter(|&k| k >= 1 && k <= session.n)
            .ok_or_else(|| ClientError::Protocol(format!("shard of layer {}", shard.layer)))?;
        if shard
            .prize_ranks
            .iter()
            .any(|&r| r as usize >= prize_set_count(session.n, layer))
        {
            return Err(ClientError::Protocol(
                "shard with a prize rank out of range".into(),
            ));
        }
        info!(
            layer,
            lease = shard.lease_id,
            slices = shard.prize_ranks.len(),
            "shard leased"
        );
        let started = Instant::now();
        let layer_engine = match engine.as_ref().filter(|e| e.k() == layer) {
            Some(e) => Arc::clone(e),
            None => {
                let (n, objective) = (session.n, session.objective);
                let built =
                    tokio::task::spawn_blocking(move || LayerEngine::new(n, layer, objective))
                        .await
                        .map_err(|e| ClientError::Protocol(e.to_string()))?;
                cache.keep_layer(layer - 1);
                let built = Arc::new(built);
                engine = Some(Arc::clone(&built));
                built
            }
        };
        let deps = fetch_dependencies(&mut session, &mut cache, layer, &shard.prize_ranks).await?;
        let fetched = started.elapsed();
        let solved = solve_with_heartbeats(&session, &solver, layer_engine, deps, &shard).await?;
        debug!(
            layer,
            lease_and_fetch_ms = fetched.as_millis() as u64,
            solve_ms = (started.elapsed() - fetched).as_millis() as u64,
            "shard solved"
        );
        let solved = match solved {
            Ok(slices) => slices,
            Err(e) => {
                error!(layer, error = %e, "shard failed; giving it back");
                let request = ReleaseRequest {
                    worker_id: session.worker_id,
                    lease_id: shard.lease_id,
                };
                let _ = session.client.clone().release(request).await;
                return Err(e.into());
            }
        };
        let games: u64 = solved.iter().map(|s| s.games).sum();
        let chunks = submission_chunks(layer, &solved);
        let waited = Instant::now();
        settle(&mut in_flight, &mut session, &config, &mut summary).await?;
        debug!(
            settle_ms = waited.elapsed().as_millis() as u64,
            "previous submission settled"
        );
        in_flight = Some(InFlight {
            task: tokio::spawn(send_submission(session.submitter(), shard.lease_id, chunks)),
            layer,
            lease_id: shard.lease_id,
            slices: solved.len(),
            games,
            started,
        });
    }
}

/// The slices of layer `layer - 1` the shard reads, from the cache or the coordinator.
async fn fetch_dependencies(
    session: &mut Session,
    cache: &mut SliceCache,
    layer: u8,
    prize_ranks: &[u32],
) -> Result<HashMap<u32, Arc<Slice>>, ClientError> {
    let mut deps = HashMap::new();
    if layer == 1 {
        deps.insert(0, Arc::new(terminal_slice()));
        return Ok(deps);
    }
    let below = layer - 1;
    let needed: BTreeSet<u32> = prize_ranks
        .iter()
        .flat_map(|&r| {
            let prizes = prize_unrank(r, layer);
            prizes.iter().map(move |c| prize_rank(prizes.without(c)))
        })
        .collect();
    let mut missing = Vec::new();
    for rank in needed {
        match cache.get(below, rank) {
            Some(slice) => {
                deps.insert(rank, slice);
            }
            None => missing.push(rank),
        }
    }
    for chunk in missing.chunks(1024) {
        let (n, objective) = (session.n, session.objective);
        let request = FetchRequest {
            layer: u32::from(below),
            prize_ranks: chunk.to_vec(),
        };
        let fetched = session
            .call("fetch", |mut c| {
                let r = request.clone();
                async move {
                    let mut stream = c.fetch_slices(r).await?.into_inner();
                    let mut slices = Vec::new();
                    while let Some(item) = stream.message().await? {
                        slices.push(item);
                    }
                    Ok(tonic::Response::new(slices))
                }
            })
            .await?;
        let Called::Done(fetched) = fetched else {
            return Err(ClientError::Protocol(
                "fetch answered 'unknown worker'".into(),
            ));
        };
        if fetched.len() != chunk.len() {
            return Err(ClientError::Protocol(format!(
                "asked for {} slices, got {}",
                chunk.len(),
                fetched.len()
            )));
        }
        for (data, &want) in fetched.into_iter().zip(chunk) {
            if data.layer != u32::from(below) || data.prize_rank != want {
                return Err(ClientError::Protocol(
                    "fetched slice is not the one asked for".into(),
                ));
            }
            if digest_bytes(&data.body).as_slice() != data.digest.as_slice() {
                return Err(ClientError::Protocol(format!(
                    "slice {want} arrived damaged"
                )));
            }
            let slice = Slice::decode_for(n, objective, below, want, &data.body)
                .map_err(ClientError::Protocol)?;
            let slice = Arc::new(slice);
            cache.insert(below, want, Arc::clone(&slice));
            deps.insert(want, slice);
        }
    }
    Ok(deps)
}

/// Solves the shard on the pool, off the runtime, heartbeating its lease meanwhile.
async fn solve_with_heartbeats(
    session: &Session,
    solver: &Arc<ShardSolver>,
    engine: Arc<LayerEngine>,
    deps: HashMap<u32, Arc<Slice>>,
    shard: &gops_proto::v1::Shard,
) -> Result<Result<Vec<SolvedSlice>, WorkerError>, ClientError> {
    let solver = Arc::clone(solver);
    let ranks = shard.prize_ranks.clone();
    let task = tokio::task::spawn_blocking(move || {
        let dependency = |prizes: CardSet| &*deps[&prize_rank(prizes)];
        solver.solve_shard(&engine, &ranks, &dependency)
    });
    let beats = keep_lease(
        session.client.clone(),
        session.worker_id,
        shard.lease_id,
        session.lease / 3,
        Phase::Solving,
    );
    tokio::select! {
        result = task => {
            result.map_err(|e| ClientError::Protocol(format!("solver thread failed: {e}")))
        }
        () = beats => unreachable!("heartbeats never end"),
    }
}

/// What a lease is kept alive for.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Solving,
    /// A lost lease is expected here in the instant between the coordinator storing the
    /// submission and the worker hearing so.
    Submitting,
}

/// One heartbeat for `lease_id`, bounded by `limit` so a stuck call never holds up the
/// work it accompanies; failures are logged, not fatal.
async fn heartbeat(client: &Client, worker_id: u64, lease_id: u64, limit: Duration, phase: Phase) {
    let request = HeartbeatRequest {
        worker_id,
        lease_id,
    };
    let mut client = client.clone();
    match tokio::time::timeout(limit, client.heartbeat(request)).await {
        Ok(Ok(reply)) if !reply.get_ref().valid => match phase {
            Phase::Solving => warn!(lease = lease_id, "lease lost; finishing the shard anyway"),
            Phase::Submitting => debug!(lease = lease_id, "lease no longer open while submitting"),
        },
        Ok(Ok(_)) => {}
        Ok(Err(status)) => warn!(error = %status.message(), "heartbeat failed"),
        Err(_) => warn!("heartbeat timed out"),
    }
}

/// Heartbeats `lease_id` every `every`, forever: raced against the work it keeps alive.
async fn keep_lease(client: Client, worker_id: u64, lease_id: u64, every: Duration, phase: Phase) {
    let mut beats = tokio::time::interval(every.max(Duration::from_millis(1)));
    beats.tick().await;
    loop {
        beats.tick().await;
        heartbeat(&client, worker_id, lease_id, every, phase).await;
    }
}

/// How a submission ended.
enum Submission {
    Stored,
    Rejected,
    /// The coordinator restarted and forgot this worker: these chunks are still to send.
    Forgotten(Vec<Vec<SliceData>>),
}

/// A shard whose submission is under way.
struct InFlight {
    task: tokio::task::JoinHandle<Result<Submission, ClientError>>,
    layer: u8,
    lease_id: u64,
    slices: usize,
    games: u64,
    started: Instant,
}

/// The shard's slices as messages, in chunks of at most SUBMIT_CHUNK_BYTES.
fn submission_chunks(layer: u8, solved: &[SolvedSlice]) -> Vec<Vec<SliceData>> {
    let mut chunks: Vec<Vec<SliceData>> = vec![Vec::new()];
    let mut size = 0;
    for s in solved {
        let body = s.slice.encode();
        let data = SliceData {
            layer: u32::from(layer),
            prize_rank: s.prize_rank,
            digest: digest_bytes(&body).to_vec(),
            body,
            max_gap: s.max_gap,
            games: s.games,
        };
        if size + data.body.len() > gops_proto::SUBMIT_CHUNK_BYTES
            && !chunks.last().unwrap().is_empty()
        {
            chunks.push(Vec::new());
            size = 0;
        }
        size += data.body.len();
        chunks.last_mut().unwrap().push(data);
    }
    chunks
}

/// What a submission task needs from the session.
#[derive(Clone)]
struct Submitter {
    client: Client,
    backoff: Backoff,
    stop: watch::Receiver<bool>,
    worker_id: u64,
    /// Heartbeat period of the lease while its submission is under way.
    beat_every: Duration,
}

impl Session {
    fn submitter(&self) -> Submitter {
        Submitter {
            client: self.client.clone(),
            backoff: self.backoff.clone(),
            stop: self.stop.clone(),
            worker_id: self.worker_id,
            beat_every: self.lease / 3,
        }
    }
}

/// Sends the chunks in order, heartbeating the lease meanwhile (a large submission on a
/// slow link must not cost the lease).
async fn send_submission(
    submitter: Submitter,
    lease_id: u64,
    chunks: Vec<Vec<SliceData>>,
) -> Result<Submission, ClientError> {
    let beats = keep_lease(
        submitter.client.clone(),
        submitter.worker_id,
        lease_id,
        submitter.beat_every,
        Phase::Submitting,
    );
    tokio::select! {
        outcome = send_chunks(&submitter, lease_id, chunks) => outcome,
        () = beats => unreachable!("heartbeats never end"),
    }
}

async fn send_chunks(
    submitter: &Submitter,
    lease_id: u64,
    mut chunks: Vec<Vec<SliceData>>,
) -> Result<Submission, ClientError> {
    let Submitter {
        client,
        backoff,
        stop,
        worker_id,
        ..
    } = submitter;
    let worker_id = *worker_id;
    while !chunks.is_empty() {
        let request = SubmitRequest {
            worker_id,
            lease_id,
            slices: chunks[0].clone(),
        };
        let result = call_with(client, backoff, stop, "submit", |mut c| {
            let r = request.clone();
            async move { c.submit(r).await }
        })
        .await;
        match result {
            Ok(Called::Done(_)) => {
                chunks.remove(0);
            }
            Ok(Called::Forgotten) => return Ok(Submission::Forgotten(chunks)),
            Err(ClientError::Refused(why)) => {
                error!(lease = lease_id, reason = %why, "submission rejected");
                return Ok(Submission::Rejected);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Submission::Stored)
}

/// Waits for the submission in flight, if any, and accounts for it; greets a restarted
/// coordinator again and resends what it forgot.
async fn settle(
    in_flight: &mut Option<InFlight>,
    session: &mut Session,
    config: &WorkerConfig,
    summary: &mut WorkerSummary,
) -> Result<(), ClientError> {
    let Some(shard) = in_flight.take() else {
        return Ok(());
    };
    let mut outcome = shard
        .task
        .await
        .map_err(|e| ClientError::Protocol(format!("submission task failed: {e}")))??;
    while let Submission::Forgotten(rest) = outcome {
        session.hello(&config.name, config.threads).await?;
        outcome = send_submission(session.submitter(), shard.lease_id, rest).await?;
    }
    match outcome {
        Submission::Stored => {
            summary.shards += 1;
            summary.slices += shard.slices as u64;
            summary.games += shard.games;
            info!(
                layer = shard.layer,
                slices = shard.slices,
                games = shard.games,
                seconds = format!("{:.2}", shard.started.elapsed().as_secs_f64()),
                "shard done"
            );
        }
        Submission::Rejected => summary.rejected += 1,
        Submission::Forgotten(_) => unreachable!("resent above"),
    }
    Ok(())
}
