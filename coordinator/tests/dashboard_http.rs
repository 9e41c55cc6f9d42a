//! The dashboard on the coordinator's HTTP server, over a real coordinator: the page,
//! `/api/status`, the token as Bearer, Basic password or `?token=`, refusals, and paths
//! it does not serve.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

mod http_support;
use http_support::{coordinator, get, request, start};

fn basic(credentials: &str) -> String {
    format!("Authorization: Basic {}\r\n", STANDARD.encode(credentials))
}

#[tokio::test]
async fn the_page_and_its_data_are_served_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let core = coordinator(&dir.path().join("db"), 4);
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
    let addr = start(coordinator(&dir.path().join("db"), 4), Some("s3+cr/et=")).await;

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
    let addr = start(coordinator(&dir.path().join("db"), 4), Some("t")).await;
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
