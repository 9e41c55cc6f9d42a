//! What one coordinator sustains, measured with fake workers over real gRPC on loopback:
//! the workers submit precomputed correct slices (the 10-card points game), so the
//! coordinator does all it does in production (leases, checks with a 1 % re-solve,
//! flushed writes) while the workers cost nothing. Then fetchers stream slices.
//! Run: `cargo bench -p gops-coordinator --bench coordinator`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gops_common::objective::Objective;
use gops_common::prizes::prize_set_count;
use gops_common::slice::SliceBytes;
use gops_common::solution::InMemorySolution;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::observer::Silent;
use gops_coordinator::server::service::{AccessTokens, serve};
use gops_db::store::Store;
use gops_proto::call_metadata::submit_call;
use gops_proto::v1::coordinator_client::CoordinatorClient;
use gops_proto::v1::{
    FetchRequest, HelloRequest, LeaseRequest, SliceData, SubmitRequest, lease_reply,
};
use gops_proto::wire::slice_data;

const N: u8 = 10;

/// A plain client of the generated protocol: what a worker sends, without a worker.
async fn fake_client(url: &str) -> CoordinatorClient<tonic::transport::Channel> {
    CoordinatorClient::connect(url.to_string())
        .await
        .expect("the coordinator listens")
        .max_decoding_message_size(gops_proto::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(gops_proto::MAX_MESSAGE_BYTES)
}
const FAKE_WORKERS: usize = 8;

fn main() {
    let solution = InMemorySolution::solve(N, Objective::Points).expect("solves");
    let mut slices: HashMap<(u8, u32), SliceData> = HashMap::new();
    for k in 1..=N {
        for (rank, slice) in solution.layers[k as usize].iter().enumerate() {
            let bytes = SliceBytes::of(slice, 0.0, 1);
            slices.insert((k, rank as u32), slice_data(k, rank as u32, bytes));
        }
    }
    let slices = Arc::new(slices);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_or_create(&dir.path().join("db"), N, Objective::Points).unwrap();
    let config = CoordinatorConfig {
        min_shards: 512,
        min_games_per_shard: 1,
        ..CoordinatorConfig::default()
    };
    let core = Arc::new(Coordinator::new(store, config, Arc::new(Silent)).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server_core = Arc::clone(&core);
        tokio::spawn(async move {
            serve(listener, server_core, AccessTokens::none(), Duration::from_secs(3600), std::future::pending()).await.unwrap();
        });
        let (leases, submits, stored) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..FAKE_WORKERS {
            let (url, slices) = (url.clone(), Arc::clone(&slices));
            let (leases, submits, stored) = (Arc::clone(&leases), Arc::clone(&submits), Arc::clone(&stored));
            tasks.push(tokio::spawn(async move {
                let mut client = fake_client(&url).await;
                let hello = HelloRequest { protocol_version: gops_proto::PROTOCOL_VERSION, worker_name: format!("fake{i}"), threads: 1 };
                let welcome = client.hello(hello).await.unwrap().into_inner();
                let (worker_id, session_key) = (welcome.worker_id, welcome.session_key);
                loop {
                    let reply = client.lease(LeaseRequest { worker_id, session_key: session_key.clone() }).await.unwrap().into_inner();
                    leases.fetch_add(1, Ordering::Relaxed);
                    match reply.reply.unwrap() {
                        lease_reply::Reply::Finished(_) => return,
                        lease_reply::Reply::Wait(w) => tokio::time::sleep(Duration::from_millis(w.retry_after_ms.min(5))).await,
                        lease_reply::Reply::Shard(shard) => {
                            let layer = shard.layer as u8;
                            let data: Vec<SliceData> = shard.prize_ranks.iter().map(|&r| slices[&(layer, r)].clone()).collect();
                            let n = data.len() as u64;
                            let request = SubmitRequest { worker_id, lease_id: shard.lease_id, slices: data, session_key: session_key.clone() };
                            let reply = client.submit(submit_call(request)).await.unwrap().into_inner();
                            submits.fetch_add(1, Ordering::Relaxed);
                            stored.fetch_add(u64::from(reply.stored), Ordering::Relaxed);
                            let _ = n;
                        }
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        let total: usize = (1..=N).map(|k| prize_set_count(N, k)).sum();
        println!("{FAKE_WORKERS} fake workers, the {N}-card game ({total} slices), verify fraction 1 %:");
        println!(
            "  {:.0} leases/s, {:.0} submissions/s, {:.0} slices stored/s ({} leases, {} submissions, {} slices in {secs:.2} s)",
            leases.load(Ordering::Relaxed) as f64 / secs,
            submits.load(Ordering::Relaxed) as f64 / secs,
            stored.load(Ordering::Relaxed) as f64 / secs,
            leases.load(Ordering::Relaxed),
            submits.load(Ordering::Relaxed),
            stored.load(Ordering::Relaxed),
        );
        // serving: every fetcher streams layers 4 to 7 (the largest slices) three times
        let started = Instant::now();
        let (count, bytes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let mut tasks = Vec::new();
        for _ in 0..FAKE_WORKERS {
            let url = url.clone();
            let (count, bytes) = (Arc::clone(&count), Arc::clone(&bytes));
            tasks.push(tokio::spawn(async move {
                let mut client = fake_client(&url).await;
                for _ in 0..3 {
                    for layer in 4..=7u8 {
                        let ranks: Vec<u32> = (0..prize_set_count(N, layer) as u32).collect();
                        let mut stream = client.fetch_slices(FetchRequest { layer: u32::from(layer), prize_ranks: ranks }).await.unwrap().into_inner();
                        while let Some(s) = stream.message().await.unwrap() {
                            count.fetch_add(1, Ordering::Relaxed);
                            bytes.fetch_add(s.body.len() as u64, Ordering::Relaxed);
                        }
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "  serving: {:.0} slices/s, {:.0} MB/s to {FAKE_WORKERS} fetchers ({} slices in {secs:.2} s)",
            count.load(Ordering::Relaxed) as f64 / secs,
            bytes.load(Ordering::Relaxed) as f64 / secs / 1e6,
            count.load(Ordering::Relaxed)
        );
    });
}
