//! The gRPC surface itself, served in this process on 127.0.0.1:0: tokens, protocol
//! versions and malformed requests get clear statuses, never a panic.

use std::sync::Arc;
use std::time::Duration;

use gops_common::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::observer::Silent;
use gops_coordinator::service::serve;
use gops_db::store::Store;
use gops_proto::v1::{
    FetchRequest, HeartbeatRequest, HelloRequest, LeaseRequest, SliceData, StatusRequest,
    SubmitRequest,
};
use gops_worker::{Client, connect};
use tonic::Code;

use crate::support::temp_db;

async fn start(
    token: Option<&str>,
) -> (String, tokio::sync::oneshot::Sender<()>, tempfile::TempDir) {
    let (dir, db) = temp_db();
    let store = Store::open_or_create(&db, 5, Objective::Points).unwrap();
    let core =
        Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let token = token.map(str::to_string);
    tokio::spawn(async move {
        serve(listener, core, token, Duration::from_secs(3600), async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (url, stop, dir)
}

async fn hello(client: &mut Client, version: u32) -> Result<u64, tonic::Status> {
    let request = HelloRequest {
        protocol_version: version,
        worker_name: "t".into(),
        threads: 1,
    };
    client
        .hello(request)
        .await
        .map(|r| r.into_inner().worker_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_checked_on_every_call() {
    let (url, _stop, _dir) = start(Some("s3cret")).await;
    let v = gops_proto::PROTOCOL_VERSION;
    for token in [None, Some("wrong"), Some("s3cret ")] {
        let mut client = connect(&url, token).unwrap();
        let err = hello(&mut client, v).await.unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated, "token {token:?}");
        let err = client.status(StatusRequest {}).await.unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated);
    }
    let mut client = connect(&url, Some("s3cret")).unwrap();
    assert!(hello(&mut client, v).await.unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_invalid_argument() {
    let (url, _stop, _dir) = start(None).await;
    let mut client = connect(&url, None).unwrap();
    let err = hello(&mut client, 99).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message().contains("protocol version 99"),
        "{}",
        err.message()
    );
    let worker_id = hello(&mut client, gops_proto::PROTOCOL_VERSION)
        .await
        .unwrap();

    let fetch = |layer: u32, ranks: Vec<u32>| FetchRequest {
        layer,
        prize_ranks: ranks,
    };
    for (request, code) in [
        (fetch(300, vec![0]), Code::InvalidArgument),
        (fetch(9, vec![0]), Code::InvalidArgument),
        (fetch(2, vec![u32::MAX]), Code::InvalidArgument),
        (fetch(2, vec![0; 10_000]), Code::InvalidArgument),
        (fetch(3, vec![0]), Code::FailedPrecondition), // not solved yet
    ] {
        let err = client.fetch_slices(request.clone()).await.unwrap_err();
        assert_eq!(err.code(), code, "{request:?}: {}", err.message());
    }
    let slice = |layer: u32, digest: Vec<u8>| SliceData {
        layer,
        prize_rank: 0,
        digest,
        body: vec![1, 2, 3],
        max_gap: 0.0,
        games: 1,
    };
    for (slices, what) in [
        (vec![slice(1, vec![0; 5])], "digest of 5 bytes"),
        (vec![slice(999, vec![0; 32])], "layer 999"),
        (vec![slice(1, vec![0; 32])], "digest"),
    ] {
        let request = SubmitRequest {
            worker_id,
            lease_id: 1,
            slices,
        };
        let err = client.submit(request).await.unwrap_err();
        assert_eq!(
            err.code(),
            Code::InvalidArgument,
            "{what}: {}",
            err.message()
        );
        assert!(err.message().contains(what), "{}", err.message());
    }
    let err = client
        .lease(LeaseRequest { worker_id: 12345 })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let beat = client
        .heartbeat(HeartbeatRequest {
            worker_id,
            lease_id: 777,
        })
        .await
        .unwrap();
    assert!(!beat.into_inner().valid);
    // after all that, the coordinator still serves
    let status = client.status(StatusRequest {}).await.unwrap().into_inner();
    assert_eq!(status.run.unwrap().n, 5);
    assert_eq!(status.rejected_submissions, 1);
}
