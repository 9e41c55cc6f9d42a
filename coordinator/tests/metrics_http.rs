//! The `/metrics` HTTP server over a real coordinator: what it answers, the bearer
//! token, unknown paths, and connections that send nothing.

use std::time::Duration;

use gops_coordinator::report::metrics::serve_metrics_within;
use gops_coordinator::server::service::AccessTokens;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

mod http_support;
use http_support::{Answer, coordinator, get, request, start};

#[tokio::test]
async fn metrics_are_served_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db"), 3), None).await;
    let Answer { status, body, .. } = get(addr, "/metrics", "").await;
    assert_eq!(status, 200);
    assert!(body.lines().any(|l| l == "gops_n 3.0"), "{body}");
    assert!(body.contains("gops_slices_total"), "{body}");
}

#[tokio::test]
async fn a_token_is_required_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db"), 3), Some("s3cret")).await;
    let Answer { status, body, .. } = get(addr, "/metrics", "").await;
    assert_eq!(status, 401);
    assert!(!body.contains("gops_n"));
    for wrong in [
        "Bearer s3creT",
        "Bearer s3cre",
        "Bearer s3crett",
        "s3cret",
        "Basic s3cret",
    ] {
        let Answer { status, .. } =
            get(addr, "/metrics", &format!("Authorization: {wrong}\r\n")).await;
        assert_eq!(status, 401, "{wrong}");
    }
    let Answer { status, body, .. } =
        get(addr, "/metrics", "Authorization: Bearer s3cret\r\n").await;
    assert_eq!(status, 200);
    assert!(body.contains("gops_n"), "{body}");
}

#[tokio::test]
async fn other_paths_and_methods_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db"), 3), None).await;
    assert_eq!(get(addr, "/nope", "").await.status, 404);
    assert_eq!(get(addr, "/metrics/x", "").await.status, 404);
    assert_eq!(
        request(addr, "POST", "/metrics", "Content-Length: 0\r\n")
            .await
            .status,
        405
    );
}

#[tokio::test]
async fn idle_connections_do_not_stop_others() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db"), 3), None).await;
    let silent = TcpStream::connect(addr).await.unwrap();
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\nHost: te")
        .await
        .unwrap();
    assert_eq!(get(addr, "/metrics", "").await.status, 200);
    let mut idle = Vec::new();
    for _ in 0..50 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    for _ in 0..3 {
        assert_eq!(get(addr, "/metrics", "").await.status, 200);
    }
    drop((silent, half, idle));
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let core = coordinator(&dir.path().join("db"), 3);
    let limit = Duration::from_millis(100);
    tokio::spawn(serve_metrics_within(
        listener,
        core,
        AccessTokens::none(),
        limit,
    ));
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\n").await.unwrap();
    // the server closes both: the read ends (end of stream, or a reset) instead of
    // waiting forever; the outer bound only turns a hang into a failure
    for stream in [&mut silent, &mut half] {
        let mut rest = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "the server left an idle connection open");
        assert!(!String::from_utf8_lossy(&rest).contains("gops_n"));
    }
    assert_eq!(get(addr, "/metrics", "").await.status, 200);
}
