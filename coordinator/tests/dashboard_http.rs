//! The dashboard on the coordinator's HTTP server, over a real coordinator: the page,
//! `/api/status`, the token as Bearer, Basic password or `?token=`, refusals, and paths
//! it does not serve.

use std::net::SocketAddr;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use gops_common::objective::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::metrics::serve_metrics;
use gops_coordinator::observer::Silent;
use gops_coordinator::service::AccessTokens;
use gops_db::store::Store;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn coordinator(db: &std::path::Path) -> Arc<Coordinator> {
    let store = Store::open_or_create(db, 4, Objective::Points).unwrap();
    Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap())
}

/// The HTTP server on a free port of 127.0.0.1, with `token`, serving in the background.
async fn start(core: Arc<Coordinator>, token: Option<&str>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tokens = token.map_or_else(AccessTokens::none, |t| AccessTokens::shared(t.into()));
    tokio::spawn(serve_metrics(listener, core, tokens));
    addr
}

/// An answer: status, header lines (lower-case names) and body.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    /// The value of header `name`, if present.
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn request(addr: SocketAddr, method: &str, path: &str, headers: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head =
        format!("{method} {path} HTTP/1.1\r\nHost: test\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

async fn get(addr: SocketAddr, path: &str, headers: &str) -> Answer {
    request(addr, "GET", path, headers).await
}

fn basic(credentials: &str) -> String {
    format!("Authorization: Basic {}\r\n", STANDARD.encode(credentials))
}

#[tokio::test]
async fn the_page_and_its_data_are_served_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"));
    core.hello(gops_proto::PROTOCOL_VERSION, "w<script>", 3, None)
        .unwrap();
    let addr = start(Arc::clone(&core), None).await;

    let page = get(addr, "/", "").await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert!(
        page.header("content-security-policy")
            .is_some_and(|p| p.contains("default-src 'none'"))
    );
    assert!(page.body.contains("id=\"layers\"") && page.body.contains("api/status"));
    // the page is static: nothing of the run (a worker's name) is written into it
    assert!(!page.body.contains("w<script>"));

    let answer = get(addr, "/api/status", "").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let status = answer.json();
    assert_eq!(status["n"], 4);
    assert_eq!(status["objective"], "points");
    assert_eq!(status["layers"].as_array().unwrap().len(), 4);
    assert_eq!(status["layer_games"].as_array().unwrap().len(), 4);
    assert_eq!(status["open_layer"], 1);
    assert!(status["shards"]["pending"].as_u64().unwrap() > 0);
    let worker = &status["workers"][0];
    assert_eq!(worker["name"], "w<script>");
    assert_eq!(worker["threads"], 3);
    assert_eq!(
        (worker["shards"].as_u64(), worker["games"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(worker["seconds_since_heard"].as_f64().unwrap() >= 0.0);
    assert!(worker["games_per_second"].is_number());
    assert!(status["now_unix_ms"].as_u64().unwrap() > 1_600_000_000_000);
    assert!(status["eta_seconds"].is_null(), "no rate yet");
    assert!(status["games_left"].as_u64().unwrap() > 0);
    let events = status["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["kind"], "worker_joined");
    // every field of `gops status --coordinator --json` is there
    for key in [
        "complete",
        "db",
        "format_version",
        "db_bytes",
        "estimated_db_bytes",
        "slices_per_second",
        "games_per_second",
        "rejected_submissions",
        "refused_calls",
        "disagreements",
        "workers_registered",
        "failure",
        "repaired_slices",
    ] {
        assert!(status.get(key).is_some(), "{key}");
    }
}

#[tokio::test]
async fn with_a_token_the_page_and_its_data_require_it() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db")), Some("s3+cr/et=")).await;

    // without: 401, the page with a challenge that makes a browser ask
    let page = get(addr, "/", "").await;
    assert_eq!(page.status, 401);
    assert_eq!(
        page.header("www-authenticate"),
        Some("Basic realm=\"gops\", charset=\"UTF-8\"")
    );
    assert!(!page.body.contains("id=\"layers\""));
    let data = get(addr, "/api/status", "").await;
    assert_eq!(data.status, 401);
    assert_eq!(data.header("www-authenticate"), Some("Bearer"));
    assert!(data.json()["error"].is_string());
    assert!(!data.body.contains("layers"));

    let wrong = [
        ("", "Authorization: Bearer s3+cr/et\r\n".to_string()),
        ("", "Authorization: s3+cr/et=\r\n".to_string()),
        ("", basic("user:s3+cr/et")),
        ("", basic("s3+cr/et=")),
        ("?token=s3%2Bcr%2Fet", String::new()),
        ("?token=S3+cr/et=", String::new()),
        ("?tok=s3+cr/et=", String::new()),
    ];
    for path in ["/", "/api/status"] {
        for (query, header) in &wrong {
            let answer = get(addr, &format!("{path}{query}"), header).await;
            assert_eq!(answer.status, 401, "{path}{query} {header}");
        }
    }

    let right = [
        ("", "Authorization: Bearer s3+cr/et=\r\n".to_string()),
        ("", basic("anyone:s3+cr/et=")),
        ("", basic(":s3+cr/et=")),
        ("?token=s3+cr/et=", String::new()),
        ("?token=s3%2Bcr%2Fet%3D", String::new()),
        ("?x=1&token=s3+cr/et=", String::new()),
        // a stale header does not hide a right token in the address
        (
            "?token=s3+cr/et=",
            "Authorization: Bearer old\r\n".to_string(),
        ),
    ];
    for (query, header) in &right {
        let page = get(addr, &format!("/{query}"), header).await;
        assert_eq!(page.status, 200, "/{query} {header}");
        assert!(page.body.contains("id=\"layers\""));
        let data = get(addr, &format!("/api/status{query}"), header).await;
        assert_eq!(data.status, 200, "/api/status{query} {header}");
        assert_eq!(data.json()["n"], 4);
    }

    // /metrics keeps its own rule: a bearer token only
    assert_eq!(get(addr, "/metrics?token=s3+cr/et=", "").await.status, 401);
    assert_eq!(
        get(addr, "/metrics", "Authorization: Bearer s3+cr/et=\r\n")
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn unknown_paths_are_404_and_other_methods_405() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(coordinator(&dir.path().join("db")), Some("t")).await;
    for path in [
        "/nope",
        "/api",
        "/api/status/x",
        "/index.html",
        "/api/nope?token=t",
    ] {
        let answer = get(addr, path, "Authorization: Bearer t\r\n").await;
        assert_eq!(answer.status, 404, "{path}");
        assert!(answer.body.contains("/api/status"), "{}", answer.body);
    }
    for path in ["/", "/api/status"] {
        let answer = request(
            addr,
            "POST",
            path,
            "Authorization: Bearer t\r\nContent-Length: 0\r\n",
        )
        .await;
        assert_eq!(answer.status, 405, "{path}");
    }
}
