//! The slice-stream attack end to end (issue 31, finding 2): a token holder opens many
//! `FetchSlices` streams and never reads them. Each stream asks for a whole layer of the
//! 8-card win game (1.7 MB, far more than HTTP/2 buffers for an unread stream), so the
//! coordinator's slots stay held until its minimum-rate rule drops them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gops_common::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::observer::Silent;
use gops_coordinator::server::fetch_slots::PER_PARTY;
use gops_coordinator::server::service::{AccessTokens, FETCH_GRACE, serve};
use gops_db::store::Store;
use gops_proto::v1::FetchRequest;
use gops_proto::v1::coordinator_client::CoordinatorClient;
use gops_worker::connect;
use tonic::transport::Endpoint;

use crate::support::{solve, temp_db};

/// The layer fetched: the largest of the 8-card win game, 56 slices.
const LAYER: u32 = 5;
const SLICES: u32 = 56;
/// Streams the attacker opens: more than its share, fewer than a connection allows.
const ATTACK_STREAMS: usize = PER_PARTY + 8;

fn whole_layer() -> FetchRequest {
    FetchRequest {
        layer: LAYER,
        prize_ranks: (0..SLICES).collect(),
    }
}

/// Moves what arrives on `granted` to `held` until `deadline`, or until `held` has
/// `want`.
async fn collect_until<T>(
    granted: &mut tokio::sync::mpsc::UnboundedReceiver<T>,
    deadline: Instant,
    held: &mut Vec<T>,
    want: usize,
) {
    while held.len() < want {
        match tokio::time::timeout_at(deadline.into(), granted.recv()).await {
            Ok(Some(one)) => held.push(one),
            _ => return,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_slice_streams_of_one_token_hold_its_share_only_and_not_for_long() {
    let (_dir, db) = temp_db();
    solve(&db, 8, &["--objective", "win"]);
    let store = Store::open_or_create(&db, 8, Objective::Win).unwrap();
    let core =
        Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap());
    let tokens = AccessTokens::of(vec!["honest-token".into(), "mallory-token".into()]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let stop = async {
            let _ = stopped.await;
        };
        serve(listener, core, tokens, Duration::from_secs(3600), stop)
            .await
            .unwrap();
    });

    // the attacker: one connection granting the smallest flow-control windows, its
    // streams opened and never read
    let channel = Endpoint::from_shared(url.clone())
        .unwrap()
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .connect()
        .await
        .unwrap();
    let mallory = CoordinatorClient::with_interceptor(channel, |mut call: tonic::Request<()>| {
        let token = "Bearer mallory-token".parse().unwrap();
        call.metadata_mut().insert("authorization", token);
        Ok(call)
    });
    let start = Instant::now();
    let (granted_tx, mut granted) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..ATTACK_STREAMS {
        let mut client = mallory.clone();
        let granted_tx = granted_tx.clone();
        tokio::spawn(async move {
            let stream = client.fetch_slices(whole_layer()).await;
            let _ = granted_tx.send((start.elapsed(), stream));
        });
    }
    // held unread until the test ends. No slot of an unread stream can come free
    // before FETCH_GRACE after it was granted; a grant beyond the share before then
    // would mean a stream was not held after all
    let mut held = Vec::new();
    collect_until(
        &mut granted,
        start + Duration::from_secs(8),
        &mut held,
        PER_PARTY,
    )
    .await;
    assert_eq!(
        held.len(),
        PER_PARTY,
        "streams granted to one token within 8 s"
    );
    let first_grant = start + held[0].0;

    // an honest worker's fetch of the same layer is served in full meanwhile: before
    // any unread stream could be dropped
    let mut honest = connect(&url, Some("honest-token")).unwrap();
    let mut stream = honest
        .fetch_slices(whole_layer())
        .await
        .unwrap()
        .into_inner();
    let mut received = 0;
    while let Some(slice) = stream.message().await.unwrap() {
        assert_eq!(slice.layer, LAYER);
        received += 1;
    }
    assert_eq!(received, SLICES);
    assert!(
        Instant::now() < first_grant + FETCH_GRACE,
        "the honest fetch ended {:?} after the attacker's first stream, past the grace",
        first_grant.elapsed()
    );
    assert!(
        granted.try_recv().is_err(),
        "a slot beyond the share came free while every stream stayed unread"
    );

    // the unread streams are dropped by the minimum-rate rule (after the grace), which
    // hands their slots to the attacker's waiting fetches (they wait at most 30 s)
    collect_until(
        &mut granted,
        start + Duration::from_secs(25),
        &mut held,
        ATTACK_STREAMS,
    )
    .await;
    assert_eq!(held.len(), ATTACK_STREAMS, "waiting fetches never served");
    let first_late = start + held[PER_PARTY].0;
    assert!(
        first_late >= first_grant + FETCH_GRACE - Duration::from_millis(500),
        "a slot of an unread stream came free {:?} after the first grant, before the grace",
        first_late - first_grant
    );
    for (_, stream) in &held {
        assert!(stream.is_ok(), "{:?}", stream.as_ref().err());
    }
}
