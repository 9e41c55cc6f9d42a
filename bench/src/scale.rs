//! How far one coordinator goes: a real coordinator on a real store, driven over gRPC by
//! simulated workers at the slice sizes of games too large to solve here (N = 15, 16).
//!
//! [`prepare`] makes a db whose layers below `k` are recorded complete, with the slices of
//! layer `k - 1` that layer `k` reads stored in full size (zeros: the
//! values do not matter to the coordinator's costs); [`drive`] runs simulated workers that
//! do what a worker does (hello, lease, fetch every dependency slice, submit slices of the
//! right size) and stand in for the solving with a sleep of the time a real worker would
//! take. Submissions carry zeros, so the coordinator runs with `verify_fraction = 0` (the
//! cheap checks: digest, shape, canonical form, finite values, gap); the re-solve that the
//! default 1 % adds is the kernel's work on 1 % of a shard's games, which the benchmark
//! adds at the rate a whole solve measures, and the loads of the checked slices'
//! dependency slices from the store, which it times apart (`Store::slices_below` over the
//! scenario's shards) and, for whole games, counts through the coordinator's cache of
//! slices below in [`crate::fetch_model`] (all of them at `--verify-slices 1`, about the
//! share at a smaller `--verify-slices`).
//!
//! The figures: leases, submissions, slices and bytes through the coordinator per second,
//! and how much of the workers' time went to waiting on the coordinator (every call:
//! lease, fetch, submit, and the waits it asked for). `bench/benches/scale.rs`
//! runs the coordinator and the workers in separate processes, so the coordinator's CPU
//! time and peak memory are its own; the test suite runs a short mode in one process.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gops_common::engine::LayerEngine;
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use gops_common::slice::{Slice, SliceBytes};
use gops_db::store::{LayerRecord, Store, StoreError};
use gops_proto::call_metadata::submit_call;
use gops_proto::v1::coordinator_client::CoordinatorClient;
use gops_proto::v1::{FetchRequest, HelloRequest, LeaseRequest, Shard, SubmitRequest, lease_reply};
use gops_proto::wire::slice_data;
use serde::{Deserialize, Serialize};

pub use crate::fetch_model::{RankCache, shard_plan};
use gops_coordinator::cluster::CoordinatorConfig;

/// One scenario: layer `k` of the `n`-card points game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scenario {
    pub n: u8,
    pub k: u8,
    /// Simulated workers, each standing for a machine of `threads` cores.
    pub workers: usize,
    pub threads: u32,
    /// Matrix games one core solves per second (what a shard's sleep is made of).
    pub games_per_core_second: f64,
    /// The run ends once this many shards are submitted.
    pub shards: usize,
    /// Games per shard the coordinator aims at (its `target_games_per_shard`).
    pub target_games_per_shard: u64,
    /// Bytes of dependency slices a simulated worker keeps between shards (a worker's
    /// `--cache-mb`); 0 fetches every dependency of every shard.
    pub worker_cache_bytes: u64,
    /// The workers read their dependency slices from the coordinator's db directory
    /// (`gops worker --slices-dir`), asking only where they lie, instead of fetching.
    #[serde(default)]
    pub read_from_dir: bool,
}

impl Scenario {
    pub fn size(&self) -> LayerSize {
        LayerSize::of(self.n, self.k, Objective::Points)
    }

    /// The coordinator's settings for the scenario.
    pub fn config(&self) -> CoordinatorConfig {
        CoordinatorConfig {
            verify_fraction: 0.0,
            target_games_per_shard: self.target_games_per_shard,
            max_sessions: self.workers.max(16) * 2,
            ..CoordinatorConfig::default()
        }
    }

    /// Dependency slices a simulated worker's cache holds.
    pub fn cache_slices(&self) -> usize {
        let slice = zero_slice(self.n, self.k - 1).body.len().max(1) as u64;
        (self.worker_cache_bytes / slice) as usize
    }

    /// The layer's shards as the coordinator plans them.
    pub fn shard_plan(&self) -> Vec<Vec<u32>> {
        shard_plan(&self.size(), &self.config())
    }
}

/// A slice of layer `k` of the `n`-card points game, of the right size, all zeros.
pub fn zero_slice(n: u8, k: u8) -> SliceBytes {
    let size = LayerSize::of(n, k, Objective::Points);
    let values = (size.dense_values / size.slices as u64) as usize;
    // the games a points slice takes are fixed by its shape (the coordinator checks them)
    SliceBytes::of(
        &Slice::dense(0, vec![0.0; values]),
        0.0,
        size.games_per_slice(),
    )
}

/// What [`prepare`] stored.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Prepared {
    /// Dependency slices of layer `k - 1` stored, and their bytes.
    pub slices_below: usize,
    pub bytes_below: u64,
    /// Bytes of one submitted slice of layer `k`.
    pub slice_bytes: u64,
}

/// Makes the db at `path` for `scenario`: layers 1 to `k - 1` recorded complete, and the
/// slices of layer `k - 1` that the layer's shards read (all of them: affordable up to
/// about layer 9 of 16 cards, 55 GB at layer 10).
pub fn prepare(path: &Path, scenario: &Scenario) -> Result<Prepared, StoreError> {
    let (n, k) = (scenario.n, scenario.k);
    let store = Store::open_or_create(path, n, Objective::Points)?;
    let plan = scenario.shard_plan();
    // workers are leased regions all over the layer (lease affinity): every dependency
    let every_rank: Vec<u32> = plan.iter().flatten().copied().collect();
    let needed = LayerEngine::shard_dependency_ranks(&every_rank, k);
    let below = zero_slice(n, k - 1);
    for chunk in needed.chunks(64) {
        let batch: Vec<(u32, &SliceBytes)> = chunk.iter().map(|&r| (r, &below)).collect();
        store.put_slice_bytes(k - 1, &batch)?;
    }
    for layer in 1..k {
        let size = LayerSize::of(n, layer, Objective::Points);
        store.complete_layer_unsealed(&LayerRecord {
            k: layer,
            slices: size.slices,
            states: size.states,
            stored_values: size.dense_values,
            dense_values: size.dense_values,
            checksum: "simulated".into(),
            max_gap: 0.0,
            matrix_games: None,
        })?;
    }
    Ok(Prepared {
        slices_below: needed.len(),
        bytes_below: needed.len() as u64 * below.body.len() as u64,
        slice_bytes: zero_slice(n, k).body.len() as u64,
    })
}

/// What the simulated workers saw.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DriveReport {
    pub seconds: f64,
    pub leases: u64,
    pub waits: u64,
    pub submissions: u64,
    /// Slices handed in that were stored already (speculative copies of slow shards).
    pub duplicates: u64,
    pub slices_submitted: u64,
    pub bytes_submitted: u64,
    pub fetch_calls: u64,
    pub fetch_refusals: u64,
    pub slices_fetched: u64,
    pub bytes_fetched: u64,
    /// `LocateSlices` calls, and the slices and bytes then read from the db directory.
    #[serde(default)]
    pub locate_calls: u64,
    #[serde(default)]
    pub slices_read: u64,
    #[serde(default)]
    pub bytes_read: u64,
    /// Worker-seconds spent solving (the sleeps) and waiting on the coordinator.
    pub solving_seconds: f64,
    pub waiting_seconds: f64,
    /// The part of `waiting_seconds` before each worker's first shard (its first lease
    /// and the fetch of a cold cache, which nothing can overlap): a start-up cost, paid
    /// once a run where a real worker solves hundreds of shards.
    #[serde(default)]
    pub startup_seconds: f64,
}

impl DriveReport {
    /// The share of the workers' time spent waiting on the coordinator.
    pub fn waiting_share(&self) -> f64 {
        self.waiting_seconds / (self.waiting_seconds + self.solving_seconds).max(1e-12)
    }

    /// [`DriveReport::waiting_share`] once every worker has its first shard.
    pub fn steady_waiting_share(&self) -> f64 {
        let waiting = (self.waiting_seconds - self.startup_seconds).max(0.0);
        waiting / (waiting + self.solving_seconds).max(1e-12)
    }
}

#[derive(Default)]
struct Counters {
    leases: AtomicU64,
    waits: AtomicU64,
    duplicates: AtomicU64,
    submissions: AtomicU64,
    slices_submitted: AtomicU64,
    bytes_submitted: AtomicU64,
    fetch_calls: AtomicU64,
    fetch_refusals: AtomicU64,
    slices_fetched: AtomicU64,
    bytes_fetched: AtomicU64,
    locate_calls: AtomicU64,
    slices_read: AtomicU64,
    bytes_read: AtomicU64,
    solving_micros: AtomicU64,
    waiting_micros: AtomicU64,
    startup_micros: AtomicU64,
}

fn micros(d: Duration) -> u64 {
    d.as_micros() as u64
}

type Client = CoordinatorClient<tonic::transport::Channel>;

/// Runs `scenario.workers` simulated workers against the coordinator at `url` until
/// `scenario.shards` shards are submitted. An error is a call that failed for another
/// reason than a full fetch queue (which is retried, as a worker does). With
/// `scenario.read_from_dir`, `db` is the coordinator's db directory they read.
pub async fn drive(url: &str, scenario: &Scenario, db: &Path) -> Result<DriveReport, String> {
    let counters = Arc::new(Counters::default());
    let done = Arc::new(AtomicBool::new(false));
    let submitted = Arc::new(AtomicU64::new(0));
    let result = Arc::new(zero_slice(scenario.n, scenario.k));
    let per_game = 1.0 / (scenario.games_per_core_second * f64::from(scenario.threads));
    let games_per_slice = scenario.size().games_per_slice() as f64;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..scenario.workers {
        let url = url.to_string();
        let (counters, done, submitted, result) = (
            Arc::clone(&counters),
            Arc::clone(&done),
            Arc::clone(&submitted),
            Arc::clone(&result),
        );
        let (threads, target, k) = (scenario.threads, scenario.shards as u64, scenario.k);
        let cache_slices = scenario.cache_slices();
        let (read_from_dir, db) = (scenario.read_from_dir, db.to_path_buf());
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(url)
                .await
                .map_err(|e| format!("connect: {e}"))?
                .max_decoding_message_size(gops_proto::MAX_MESSAGE_BYTES)
                .max_encoding_message_size(gops_proto::MAX_MESSAGE_BYTES);
            let hello = HelloRequest {
                protocol_version: gops_proto::PROTOCOL_VERSION,
                worker_name: format!("simulated-{i}"),
                threads,
            };
            let welcome = client
                .hello(hello)
                .await
                .map_err(|e| format!("hello: {e}"))?
                .into_inner();
            let me = SimulatedWorker {
                worker_id: welcome.worker_id,
                session_key: welcome.session_key,
                k,
                counters: Arc::clone(&counters),
                result: Arc::clone(&result),
                slices_dir: read_from_dir.then(|| db.clone()),
            };
            let mut cache = RankCache::new(cache_slices);
            // as a worker does: the shard in hand is solved while the one before is
            // handed in and the next is leased and fetched; only the time the solving
            // cannot cover counts as waiting
            let mut ahead: Option<Shard> = None;
            let mut handing_in: Option<Shard> = None;
            let mut started_work = false;
            while !done.load(Ordering::Relaxed) {
                let shard = match ahead.take() {
                    Some(shard) => shard,
                    None => {
                        let asked = Instant::now();
                        let next = me.lease_and_fetch(&mut client, &mut cache).await?;
                        if let Some(previous) = handing_in.take() {
                            me.hand_in(&mut client, previous, &submitted, target, &done)
                                .await?;
                        }
                        let shard = match next {
                            Leased::Shard(shard) => Some(shard),
                            Leased::Wait(pause) => {
                                tokio::time::sleep(pause).await;
                                None
                            }
                            Leased::Finished => break,
                        };
                        let waited = micros(asked.elapsed());
                        counters.waiting_micros.fetch_add(waited, Ordering::Relaxed);
                        if !started_work {
                            counters.startup_micros.fetch_add(waited, Ordering::Relaxed);
                            started_work = shard.is_some();
                        }
                        match shard {
                            Some(shard) => shard,
                            None => continue,
                        }
                    }
                };
                // the solving, simulated
                let solve = Duration::from_secs_f64(
                    shard.prize_ranks.len() as f64 * games_per_slice * per_game,
                );
                let started = Instant::now();
                let mut background = client.clone();
                let previous = handing_in.take();
                let (_, next) = tokio::join!(tokio::time::sleep(solve), async {
                    if let Some(previous) = previous {
                        me.hand_in(&mut background, previous, &submitted, target, &done)
                            .await?;
                    }
                    me.lease_and_fetch(&mut background, &mut cache).await
                });
                counters
                    .solving_micros
                    .fetch_add(micros(solve), Ordering::Relaxed);
                counters.waiting_micros.fetch_add(
                    micros(started.elapsed().saturating_sub(solve)),
                    Ordering::Relaxed,
                );
                ahead = match next? {
                    Leased::Shard(next) => Some(next),
                    // asked again once this shard is in hand
                    Leased::Wait(_) | Leased::Finished => None,
                };
                handing_in = Some(shard);
            }
            if let Some(last) = handing_in.take() {
                me.hand_in(&mut client, last, &submitted, target, &done)
                    .await?;
            }
            Ok::<(), String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| format!("worker task: {e}"))??;
    }
    let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
    Ok(DriveReport {
        seconds: started.elapsed().as_secs_f64(),
        leases: load(&counters.leases),
        waits: load(&counters.waits),
        duplicates: load(&counters.duplicates),
        submissions: load(&counters.submissions),
        slices_submitted: load(&counters.slices_submitted),
        bytes_submitted: load(&counters.bytes_submitted),
        fetch_calls: load(&counters.fetch_calls),
        fetch_refusals: load(&counters.fetch_refusals),
        slices_fetched: load(&counters.slices_fetched),
        bytes_fetched: load(&counters.bytes_fetched),
        locate_calls: load(&counters.locate_calls),
        slices_read: load(&counters.slices_read),
        bytes_read: load(&counters.bytes_read),
        solving_seconds: load(&counters.solving_micros) as f64 / 1e6,
        waiting_seconds: load(&counters.waiting_micros) as f64 / 1e6,
        startup_seconds: load(&counters.startup_micros) as f64 / 1e6,
    })
}

/// What a simulated worker's lease gave.
enum Leased {
    Shard(Shard),
    Wait(Duration),
    Finished,
}

/// One simulated worker's identity and what it reports to.
struct SimulatedWorker {
    worker_id: u64,
    session_key: Vec<u8>,
    k: u8,
    counters: Arc<Counters>,
    /// The slice it hands in for every prize set (zeros, of the right size).
    result: Arc<SliceBytes>,
    /// The coordinator's db directory, when it reads slices from there.
    slices_dir: Option<PathBuf>,
}

impl SimulatedWorker {
    /// Leases a shard and fetches every dependency slice of it that is not in `cache`.
    async fn lease_and_fetch(
        &self,
        client: &mut Client,
        cache: &mut RankCache,
    ) -> Result<Leased, String> {
        let lease = LeaseRequest {
            worker_id: self.worker_id,
            session_key: self.session_key.clone(),
        };
        let reply = client
            .lease(lease)
            .await
            .map_err(|e| format!("lease: {e}"))?
            .into_inner();
        self.counters.leases.fetch_add(1, Ordering::Relaxed);
        let shard = match reply.reply {
            Some(lease_reply::Reply::Shard(shard)) => shard,
            Some(lease_reply::Reply::Wait(wait)) => {
                self.counters.waits.fetch_add(1, Ordering::Relaxed);
                return Ok(Leased::Wait(Duration::from_millis(wait.retry_after_ms)));
            }
            Some(lease_reply::Reply::Finished(_)) | None => return Ok(Leased::Finished),
        };
        // the scenario is one layer: once it is complete the coordinator opens the next
        if shard.layer != u32::from(self.k) {
            return Ok(Leased::Finished);
        }
        let needed: Vec<u32> = LayerEngine::shard_dependency_ranks(&shard.prize_ranks, self.k)
            .into_iter()
            .filter(|&rank| !cache.touch(rank))
            .collect();
        for chunk in needed.chunks(gops_proto::MAX_FETCH_SLICES) {
            match &self.slices_dir {
                Some(dir) => {
                    locate_and_read(client, &self.counters, self.k - 1, chunk, dir).await?
                }
                None => fetch(client, &self.counters, self.k - 1, chunk).await?,
            }
        }
        Ok(Leased::Shard(shard))
    }

    /// Hands in `shard`'s slices; the run is `done` once `target` shards are in.
    async fn hand_in(
        &self,
        client: &mut Client,
        shard: Shard,
        submitted: &AtomicU64,
        target: u64,
        done: &AtomicBool,
    ) -> Result<(), String> {
        let slices: Vec<_> = shard
            .prize_ranks
            .iter()
            .map(|&rank| slice_data(self.k, rank, (*self.result).clone()))
            .collect();
        let count = slices.len() as u64;
        let request = SubmitRequest {
            worker_id: self.worker_id,
            lease_id: shard.lease_id,
            slices,
            session_key: self.session_key.clone(),
        };
        let reply = client
            .submit(submit_call(request))
            .await
            .map_err(|e| format!("submit: {e}"))?
            .into_inner();
        // a speculative copy of a slow shard may find its slices stored already
        if u64::from(reply.stored + reply.duplicates) != count {
            return Err(format!(
                "submit: {} of {count} slices stored, {} already stored",
                reply.stored, reply.duplicates
            ));
        }
        let counters = &self.counters;
        counters
            .duplicates
            .fetch_add(u64::from(reply.duplicates), Ordering::Relaxed);
        counters.submissions.fetch_add(1, Ordering::Relaxed);
        counters
            .slices_submitted
            .fetch_add(count, Ordering::Relaxed);
        counters
            .bytes_submitted
            .fetch_add(count * self.result.body.len() as u64, Ordering::Relaxed);
        if submitted.fetch_add(1, Ordering::Relaxed) + 1 >= target {
            done.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// Fetches `ranks` of `layer`, retrying while the coordinator's streams are all busy.
async fn fetch(
    client: &mut Client,
    counters: &Counters,
    layer: u8,
    ranks: &[u32],
) -> Result<(), String> {
    loop {
        counters.fetch_calls.fetch_add(1, Ordering::Relaxed);
        let request = FetchRequest {
            layer: u32::from(layer),
            prize_ranks: ranks.to_vec(),
        };
        match client.fetch_slices(request).await {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                while let Some(slice) = stream.message().await.map_err(|e| format!("fetch: {e}"))? {
                    counters.slices_fetched.fetch_add(1, Ordering::Relaxed);
                    counters
                        .bytes_fetched
                        .fetch_add(slice.body.len() as u64, Ordering::Relaxed);
                }
                return Ok(());
            }
            Err(status) if status.code() == tonic::Code::ResourceExhausted => {
                counters.fetch_refusals.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(status) => return Err(format!("fetch: {status}")),
        }
    }
}

/// Asks where `ranks` of `layer` lie and reads their records from `dir`, as a worker
/// with `--slices-dir` does (the records are read, not checked: the coordinator's side
/// is what is measured).
async fn locate_and_read(
    client: &mut Client,
    counters: &Counters,
    layer: u8,
    ranks: &[u32],
    dir: &Path,
) -> Result<(), String> {
    counters.locate_calls.fetch_add(1, Ordering::Relaxed);
    let request = FetchRequest {
        layer: u32::from(layer),
        prize_ranks: ranks.to_vec(),
    };
    let places = client
        .locate_slices(request)
        .await
        .map_err(|e| format!("locate: {e}"))?
        .into_inner()
        .places;
    let dir = dir.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || -> Result<u64, String> {
        use std::os::unix::fs::FileExt;
        let mut files: std::collections::HashMap<String, std::fs::File> = Default::default();
        let mut bytes = 0u64;
        for place in &places {
            if !files.contains_key(&place.file) {
                let file = std::fs::File::open(dir.join(&place.file))
                    .map_err(|e| format!("{}: {e}", place.file))?;
                files.insert(place.file.clone(), file);
            }
            let mut record = vec![0u8; place.len as usize];
            files[&place.file]
                .read_exact_at(&mut record, place.offset)
                .map_err(|e| format!("{}: {e}", place.file))?;
            bytes += record.len() as u64;
        }
        Ok(bytes)
    })
    .await
    .map_err(|e| e.to_string())??;
    counters
        .slices_read
        .fetch_add(ranks.len() as u64, Ordering::Relaxed);
    counters.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    Ok(())
}

/// Starts a coordinator for `scenario` over the prepared db at `path`, serving gRPC on a
/// free loopback port from the current tokio runtime; its URL and core.
pub async fn host(
    path: &Path,
    scenario: &Scenario,
) -> Result<(String, Arc<gops_coordinator::cluster::Coordinator>), String> {
    let store = Store::open_live(path).map_err(|e| e.to_string())?;
    let core = gops_coordinator::cluster::Coordinator::new(
        store,
        scenario.config(),
        Arc::new(gops_coordinator::report::observer::Silent),
    )
    .map_err(|e| e.to_string())?;
    let core = Arc::new(core);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let url = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let served = Arc::clone(&core);
    tokio::spawn(async move {
        let tokens = gops_coordinator::server::service::AccessTokens::none();
        let quiet = Duration::from_secs(24 * 3600);
        let _ = gops_coordinator::server::service::serve(
            listener,
            served,
            tokens,
            quiet,
            std::future::pending(),
        )
        .await;
    });
    Ok((url, core))
}
