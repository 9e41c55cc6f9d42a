//! The gRPC surface itself, served in this process on 127.0.0.1:0: tokens, session keys,
//! protocol versions and malformed requests get clear statuses, never a panic.

use std::sync::Arc;
use std::time::Duration;

use gops_common::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::observer::Silent;
use gops_coordinator::server::service::{AccessTokens, serve};
use gops_db::store::Store;
use gops_proto::call_metadata::submit_call;
use gops_proto::v1::{
    FetchRequest, HeartbeatRequest, HelloRequest, LeaseRequest, SliceData, StatusRequest,
    SubmitRequest, lease_reply,
};
use gops_worker::{Client, connect};
use tonic::Code;

use crate::support::temp_db;

async fn start(
    tokens: AccessTokens,
) -> (String, tokio::sync::oneshot::Sender<()>, tempfile::TempDir) {
    let (dir, db) = temp_db();
    let store = Store::open_or_create(&db, 5, Objective::Points).unwrap();
    let core =
        Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        serve(listener, core, tokens, Duration::from_secs(3600), async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (url, stop, dir)
}

/// A session: the worker id and its key.
async fn hello(client: &mut Client, version: u32) -> Result<(u64, Vec<u8>), tonic::Status> {
    let request = HelloRequest {
        protocol_version: version,
        worker_name: "t".into(),
        threads: 1,
    };
    client.hello(request).await.map(|r| {
        let r = r.into_inner();
        (r.worker_id, r.session_key)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_checked_on_every_call() {
    let (url, _stop, _dir) = start(AccessTokens::shared("s3cret".into())).await;
    let v = gops_proto::PROTOCOL_VERSION;
    for token in [None, Some("wrong"), Some("s3cret ")] {
        let mut client = connect(&url, token).unwrap();
        let err = hello(&mut client, v).await.unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated, "token {token:?}");
        let err = client.status(StatusRequest {}).await.unwrap_err();
        assert_eq!(err.code(), Code::Unauthenticated);
    }
    let mut client = connect(&url, Some("s3cret")).unwrap();
    assert!(hello(&mut client, v).await.unwrap().0 > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_invalid_argument() {
    let (url, _stop, _dir) = start(AccessTokens::none()).await;
    let mut client = connect(&url, None).unwrap();
    let err = hello(&mut client, 99).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message().contains("protocol version 99"),
        "{}",
        err.message()
    );
    let (worker_id, session_key) = hello(&mut client, gops_proto::PROTOCOL_VERSION)
        .await
        .unwrap();
    let lease = LeaseRequest {
        worker_id,
        session_key: session_key.clone(),
    };
    let Some(lease_reply::Reply::Shard(shard)) =
        client.lease(lease).await.unwrap().into_inner().reply
    else {
        panic!("a fresh run has shards to lease")
    };

    let fetch = |layer: u32, ranks: Vec<u32>| FetchRequest {
        layer,
        prize_ranks: ranks,
    };
    for (request, code) in [
        (fetch(300, vec![0]), Code::InvalidArgument),
        (fetch(9, vec![0]), Code::InvalidArgument),
        (fetch(2, vec![u32::MAX]), Code::InvalidArgument),
        (fetch(2, vec![0; 10_000]), Code::InvalidArgument),
        (fetch(2, vec![0, 1, 0]), Code::InvalidArgument), // a rank twice
        (fetch(3, vec![0]), Code::FailedPrecondition),    // not solved yet
    ] {
        let err = client.fetch_slices(request.clone()).await.unwrap_err();
        assert_eq!(err.code(), code, "{request:?}: {}", err.message());
        // asking where they lie is checked the same way
        let err = client.locate_slices(request.clone()).await.unwrap_err();
        assert_eq!(err.code(), code, "locate {request:?}: {}", err.message());
    }
    let slice = |layer: u32, digest: Vec<u8>| SliceData {
        layer,
        prize_rank: shard.prize_ranks[0],
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
            lease_id: shard.lease_id,
            slices,
            session_key: session_key.clone(),
        };
        let err = client.submit(submit_call(request)).await.unwrap_err();
        assert_eq!(
            err.code(),
            Code::InvalidArgument,
            "{what}: {}",
            err.message()
        );
        assert!(err.message().contains(what), "{}", err.message());
    }
    let err = client
        .lease(LeaseRequest {
            worker_id: 12345,
            session_key: session_key.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    // a call without a key, or with another session's key
    for (key, code) in [
        (Vec::new(), Code::InvalidArgument),
        (vec![0; 32], Code::PermissionDenied),
    ] {
        let err = client
            .lease(LeaseRequest {
                worker_id,
                session_key: key,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), code, "{}", err.message());
    }
    let beat = client
        .heartbeat(HeartbeatRequest {
            worker_id,
            lease_id: 777,
            session_key: session_key.clone(),
        })
        .await
        .unwrap();
    assert!(!beat.into_inner().valid);
    // after all that, the coordinator still serves
    let status = client.status(StatusRequest {}).await.unwrap().into_inner();
    assert_eq!(status.run.unwrap().n, 5);
    assert_eq!(status.rejected_submissions, 1);
    assert_eq!(status.refused_calls, 1);
}

/// A message is weighed on the wire before it is decoded: a submission of more empty
/// slices than any shard holds (the amplification of the hostile-peer report: 2 bytes on
/// the wire, about 80 decoded) and an oversized small message are refused unread, and the
/// coordinator serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_are_bounded_before_they_are_decoded() {
    let (url, _stop, _dir) = start(AccessTokens::none()).await;
    let mut client = connect(&url, None).unwrap();
    let (worker_id, session_key) = hello(&mut client, gops_proto::PROTOCOL_VERSION)
        .await
        .unwrap();
    let Some(lease_reply::Reply::Shard(shard)) = client
        .lease(LeaseRequest {
            worker_id,
            session_key: session_key.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .reply
    else {
        panic!("a fresh run has shards to lease")
    };
    let flood = SubmitRequest {
        worker_id,
        lease_id: shard.lease_id,
        slices: vec![SliceData::default(); 100_000],
        session_key: session_key.clone(),
    };
    let err = client.submit(submit_call(flood)).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
    assert!(
        err.message()
            .contains("at most 12870 slices, this one 100000"),
        "{}",
        err.message()
    );
    let big_hello = HelloRequest {
        protocol_version: gops_proto::PROTOCOL_VERSION,
        worker_name: "w".repeat(2 << 20),
        threads: 1,
    };
    let err = client.hello(big_hello).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{}", err.message());
    // not a rejected submission (nothing was decoded), and the run goes on
    let status = client.status(StatusRequest {}).await.unwrap().into_inner();
    assert_eq!(status.rejected_submissions, 0);
    let beat = client
        .heartbeat(HeartbeatRequest {
            worker_id,
            lease_id: shard.lease_id,
            session_key,
        })
        .await
        .unwrap();
    assert!(beat.into_inner().valid);
}

/// Three garbage submissions under one token of a per-worker token file: its holder
/// loses its standing for good (a new session is refused), and the other tokens keep
/// theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standing_lost_under_a_per_worker_token_stays_lost() {
    let tokens = AccessTokens::of(vec!["alice-token".into(), "mallory-token".into()]);
    let (url, _stop, _dir) = start(tokens).await;
    let v = gops_proto::PROTOCOL_VERSION;
    let mut mallory = connect(&url, Some("mallory-token")).unwrap();
    for _ in 0..3 {
        let (worker_id, session_key) = hello(&mut mallory, v).await.unwrap();
        let garbage = SubmitRequest {
            worker_id,
            lease_id: 1,
            slices: vec![SliceData {
                layer: 1,
                prize_rank: 0,
                digest: vec![0; 32],
                body: vec![0; 8],
                max_gap: 0.0,
                games: 1,
            }],
            session_key,
        };
        let err = mallory.submit(submit_call(garbage)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
    }
    let err = hello(&mut mallory, v).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{}", err.message());
    assert!(err.message().contains("token"), "{}", err.message());
    let mut alice = connect(&url, Some("alice-token")).unwrap();
    let (worker_id, session_key) = hello(&mut alice, v).await.unwrap();
    let reply = alice
        .lease(LeaseRequest {
            worker_id,
            session_key,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(matches!(reply.reply, Some(lease_reply::Reply::Shard(_))));
}

/// A submission's sender is checked from its metadata before its message is read
/// (protocol 7): a message the codec would refuse, sent by an unknown or forged
/// session, is refused for its sender instead, so a stranger's message costs no
/// decoding; a call without the metadata is refused saying which protocol needs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_s_sender_is_checked_before_its_message_is_read() {
    let (url, _stop, _dir) = start(AccessTokens::none()).await;
    let mut client = connect(&url, None).unwrap();
    let (worker_id, session_key) = hello(&mut client, gops_proto::PROTOCOL_VERSION)
        .await
        .unwrap();
    let flood = |worker_id: u64, session_key: &[u8]| SubmitRequest {
        worker_id,
        lease_id: 1,
        slices: vec![SliceData::default(); 100_000],
        session_key: session_key.to_vec(),
    };
    // the session's own flood gets as far as the codec, which refuses it
    let err = client
        .submit(submit_call(flood(worker_id, &session_key)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
    assert!(err.message().contains("at most"), "{}", err.message());
    // a stranger's and a forger's are refused before the codec sees them
    let err = client
        .submit(submit_call(flood(worker_id + 1000, &session_key)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{}", err.message());
    let err = client
        .submit(submit_call(flood(worker_id, &[0x5A; 32])))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{}", err.message());
    // a stranger's message larger than the HTTP/2 window (1 MiB) is refused while it is
    // still being sent, again and again, and the connection stays usable
    let large = SubmitRequest {
        worker_id: worker_id + 1000,
        lease_id: 1,
        slices: vec![SliceData {
            layer: 1,
            body: vec![7; 3 << 20],
            ..SliceData::default()
        }],
        session_key: session_key.clone(),
    };
    for _ in 0..4 {
        let err = client.submit(submit_call(large.clone())).await.unwrap_err();
        assert_eq!(err.code(), Code::NotFound, "{}", err.message());
    }
    // a worker of protocol 6 names its sender only in the message
    let err = client
        .submit(flood(worker_id, &session_key))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
    let needed = format!("protocol version {}", gops_proto::PROTOCOL_VERSION);
    assert!(err.message().contains(&needed), "{}", err.message());
    // metadata of one lease on a message of another
    let mut mismatched = submit_call(SubmitRequest {
        worker_id,
        lease_id: 1,
        slices: Vec::new(),
        session_key: session_key.clone(),
    });
    mismatched.get_mut().lease_id = 2;
    let err = client.submit(mismatched).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
    assert!(
        err.message().contains("another sender"),
        "{}",
        err.message()
    );
    // none of this was a rejected submission: the session keeps its standing
    let status = client.status(StatusRequest {}).await.unwrap().into_inner();
    assert_eq!(status.rejected_submissions, 0);
    let lease = LeaseRequest {
        worker_id,
        session_key,
    };
    let reply = client.lease(lease).await.unwrap().into_inner().reply;
    assert!(matches!(reply, Some(lease_reply::Reply::Shard(_))));
}
