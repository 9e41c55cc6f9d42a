//! The `/metrics` HTTP server over a real coordinator: what it answers, the bearer
//! token, unknown paths, and connections that send nothing.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gops_common::objective::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::metrics::{serve_metrics, serve_metrics_within};
use gops_coordinator::observer::Silent;
use gops_coordinator::service::AccessTokens;
use gops_db::store::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn coordinator(db: &std::path::Path) -> Arc<Coordinator> {
    let store = Store::open_or_create(db, 3, Objective::Points).unwrap();
    Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap())
}

/// A metrics server on a free port of 127.0.0.1, with `token`, serving in the background.
async fn start(core: Arc<Coordinator>, token: Option<&str>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tokens = token.map_or_else(AccessTokens::none, |t| AccessTokens::shared(t.into()));
    tokio::spawn(serve_metrics(listener, core, tokens));
    addr
}

/// The status code and body of `GET path`, with the extra header lines `headers`.
async fn get(addr: SocketAddr, path: &str, headers: &str) -> (u16, String) {
    request(addr, "GET", path, headers).await
}

async fn request(addr: SocketAddr, method: &str, path: &str, headers: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head =
        format!("{method} {path} HTTP/1.1\r\nHost: test\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

#[tokio::test]
async fn metrics_are_served_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db")), None).await;
    let (status, body) = get(addr, "/metrics", "").await;
    assert_eq!(status, 200);
    assert!(body.lines().any(|l| l == "gops_n 3.0"), "{body}");
    assert!(body.contains("gops_slices_total"), "{body}");
}

#[tokio::test]
async fn a_token_is_required_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db")), Some("s3cret")).await;
    let (status, body) = get(addr, "/metrics", "").await;
    assert_eq!(status, 401);
    assert!(!body.contains("gops_n"));
    for wrong in [
        "Bearer s3creT",
        "Bearer s3cre",
        "Bearer s3crett",
        "s3cret",
        "Basic s3cret",
    ] {
        let (status, _) = get(addr, "/metrics", &format!("Authorization: {wrong}\r\n")).await;
        assert_eq!(status, 401, "{wrong}");
    }
    let (status, body) = get(addr, "/metrics", "Authorization: Bearer s3cret\r\n").await;
    assert_eq!(status, 200);
    assert!(body.contains("gops_n"), "{body}");
}

#[tokio::test]
async fn other_paths_and_methods_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db")), None).await;
    assert_eq!(get(addr, "/nope", "").await.0, 404);
    assert_eq!(get(addr, "/metrics/x", "").await.0, 404);
    assert_eq!(
        request(addr, "POST", "/metrics", "Content-Length: 0\r\n")
            .await
            .0,
        405
    );
}

#[tokio::test]
async fn idle_connections_do_not_stop_others() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db")), None).await;
    let silent = TcpStream::connect(addr).await.unwrap();
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\nHost: te")
        .await
        .unwrap();
    assert_eq!(get(addr, "/metrics", "").await.0, 200);
    let mut idle = Vec::new();
    for _ in 0..50 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    for _ in 0..3 {
        assert_eq!(get(addr, "/metrics", "").await.0, 200);
    }
    drop((silent, half, idle));
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let core = coordinator(&dir.path().join("db"));
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
    assert_eq!(get(addr, "/metrics", "").await.0, 200);
}
