//! Prometheus metrics of a coordinator, rendered from its status on each scrape, and
//! the HTTP server (axum on hyper, HTTP/1.1) that answers `GET /metrics` and the
//! dashboard's `GET /` and `GET /api/status` ([`crate::report::dashboard`]): an optional token,
//! a time limit on every connection, and an accept loop that outlives accept errors.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gops_http::HttpLimits;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use tokio::net::TcpListener;
use tracing::info;

use crate::cluster::Coordinator;
use crate::report::dashboard::{self, Shared};
use crate::server::service::AccessTokens;

/// The metrics in the Prometheus text format.
pub fn render(core: &Coordinator) -> String {
    let Ok(status) = core.status(Instant::now()) else {
        return "# status unavailable\n".into();
    };
    let mut registry = Registry::with_prefix("gops");
    let gauge = |registry: &mut Registry, name: &str, help: &str, value: f64| {
        let g = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        g.set(value);
        registry.register(name, help, g);
    };
    let done_layers = status.run.layers.iter().filter(|l| l.complete).count();
    let done_slices: usize = status.run.layers.iter().map(|l| l.done).sum();
    let all_slices: usize = status.run.layers.iter().map(|l| l.slices).sum();
    gauge(
        &mut registry,
        "n",
        "Cards per player of the game being solved",
        f64::from(status.run.n),
    );
    gauge(
        &mut registry,
        "layers_complete",
        "Layers complete",
        done_layers as f64,
    );
    gauge(
        &mut registry,
        "open_layer",
        "The layer being solved (0 when complete)",
        f64::from(status.open_layer.unwrap_or(0)),
    );
    gauge(
        &mut registry,
        "slices_stored",
        "Slices stored over all layers",
        done_slices as f64,
    );
    gauge(
        &mut registry,
        "slices_total",
        "Slices of the whole game",
        all_slices as f64,
    );
    gauge(
        &mut registry,
        "workers_live",
        "Workers seen within two lease periods",
        status.workers.len() as f64,
    );
    gauge(
        &mut registry,
        "games_per_second",
        "Matrix games solved per second this run",
        status.games_per_second,
    );
    gauge(
        &mut registry,
        "slices_per_second",
        "Slices stored per second this run",
        status.slices_per_second,
    );
    gauge(
        &mut registry,
        "submissions_rejected",
        "Submissions that failed validation this run",
        status.rejected_submissions as f64,
    );
    gauge(
        &mut registry,
        "calls_refused",
        "Calls refused this run for a wrong session key (a client acting for another)",
        status.refused_calls as f64,
    );
    gauge(
        &mut registry,
        "slice_disagreements",
        "Copies of a stored slice with another digest this run (each re-checked in full)",
        status.disagreements as f64,
    );
    gauge(
        &mut registry,
        "slices_repaired",
        "Damaged slices found and solved again this run",
        status.repaired_slices as f64,
    );
    gauge(
        &mut registry,
        "store_failed",
        "1 when the store cannot be written (a full disk): the coordinator is stopping",
        f64::from(u8::from(status.failure.is_some())),
    );
    gauge(
        &mut registry,
        "sessions_registered",
        "Worker sessions the coordinator holds, live or silent",
        status.workers_registered as f64,
    );
    let traffic = core.slice_traffic();
    let load = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    gauge(
        &mut registry,
        "slices_fetched",
        "Dependency slices sent to workers (FetchSlices) since the coordinator started",
        load(&traffic.fetched) as f64,
    );
    gauge(
        &mut registry,
        "slice_bytes_fetched",
        "Bytes of dependency slices sent to workers since the coordinator started",
        load(&traffic.fetched_bytes) as f64,
    );
    gauge(
        &mut registry,
        "slices_located",
        "Dependency slices located for workers that read the db directory (LocateSlices) since the coordinator started",
        load(&traffic.located) as f64,
    );
    if let Some(shards) = &status.shards {
        gauge(
            &mut registry,
            "shards_pending",
            "Shards of the open layer waiting",
            shards.pending as f64,
        );
        gauge(
            &mut registry,
            "shards_leased",
            "Shards of the open layer leased",
            shards.leased as f64,
        );
        gauge(
            &mut registry,
            "shards_done",
            "Shards of the open layer done",
            shards.done as f64,
        );
    }
    let mut text = String::new();
    if encode(&mut text, &registry).is_err() {
        return "# encoding failed\n".into();
    }
    text
}

/// How long one connection may take, from accept to the last byte of the answer (the
/// request head included): a client that sends nothing, or sends slowly, is dropped
/// then. Prometheus's own scrape timeout is 10 s by default.
pub const CONNECTION_LIMIT: Duration = Duration::from_secs(10);

/// Connections the dashboard and metrics server serves at once (each answers one request
/// within [`CONNECTION_LIMIT`]).
const MAX_CONNECTIONS: usize = 256;

/// The content type of what [`render`] writes (the OpenMetrics text format).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves `GET /metrics`, the dashboard (`GET /`) and its data (`GET /api/status`) on
/// `listener` until the task is dropped; with a token, only to requests that carry it
/// (`/metrics`: `Authorization: Bearer <token>`; the dashboard also takes it as a Basic
/// password or `?token=`). Each connection answers one request within
/// [`CONNECTION_LIMIT`], at most [`MAX_CONNECTIONS`] at once ([`gops_http::serve`]).
pub async fn serve_metrics(
    listener: TcpListener,
    core: Arc<Coordinator>,
    tokens: AccessTokens,
) -> std::io::Result<()> {
    serve_metrics_within(listener, core, tokens, CONNECTION_LIMIT).await
}

/// [`serve_metrics`] with its connection time limit given (tests use a short one).
pub async fn serve_metrics_within(
    listener: TcpListener,
    core: Arc<Coordinator>,
    tokens: AccessTokens,
    limit: Duration,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    info!(%addr, url = %format!("http://{addr}/"), token = !tokens.is_empty(), "dashboard at /, metrics at /metrics");
    let limits = HttpLimits {
        name: "metrics",
        max_connections: MAX_CONNECTIONS,
        header: limit,
        lifetime: limit,
        grace: Duration::ZERO,
        keep_alive: false,
    };
    gops_http::serve(listener, router(core, tokens), limits).await
}

/// The routes: `GET /metrics`, `GET /` and `GET /api/status`; any other path is 404,
/// another method 405.
fn router(core: Arc<Coordinator>, tokens: AccessTokens) -> Router {
    let shared = Arc::new(Shared { core, tokens });
    Router::new()
        .route("/metrics", get(metrics))
        .route("/", get(dashboard::serve_page))
        .route("/api/status", get(dashboard::serve_status))
        .fallback(not_found)
        .with_state(shared)
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        "not found: this server answers /, /api/status and /metrics\n",
    )
        .into_response()
}

async fn metrics(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    {
        let given = headers
            .get(AUTHORIZATION)
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        if !shared.tokens.admits(given) {
            return (
                StatusCode::UNAUTHORIZED,
                [(WWW_AUTHENTICATE, "Bearer")],
                "missing or wrong bearer token\n",
            )
                .into_response();
        }
    }
    let core = Arc::clone(&shared.core);
    // render takes the coordinator's lock: off the async threads
    match tokio::task::spawn_blocking(move || render(&core)).await {
        Ok(text) => ([(CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("metrics failed: {e}\n"),
        )
            .into_response(),
    }
}
