//! The HTTP server: axum's router on hyper's HTTP/1.1 connections. The routes are thin
//! glue: the access check (one middleware for every route), the query decoded with the
//! keys the route takes, the blocking answer of [`crate::api`] run on tokio's blocking
//! threads, and the answer or the error as a response. The accept loop outlives accept
//! errors; each connection has [`HEADER_LIMIT`] for each request head (so an idle
//! keep-alive connection is closed then) and [`CONNECTION_LIMIT`] in all.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, Request, State};
use axum::http::header::{
    AUTHORIZATION, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY,
    WWW_AUTHENTICATE, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use gops_http::HttpLimits;
use serde_json::Value;
use tokio::net::TcpListener;

use crate::access::Access;
use crate::api::{ApiError, Explorer};
use crate::page;
use crate::params::{Query, STATE_KEYS};

/// How long a client has to send each request head; also how long an idle keep-alive
/// connection is kept.
pub const HEADER_LIMIT: Duration = Duration::from_secs(10);

/// How long one connection may live; then it finishes the request in flight and closes
/// (a browser opens another).
pub const CONNECTION_LIMIT: Duration = Duration::from_secs(120);

/// How long a connection past its limit has to finish its request in flight.
const GRACE: Duration = Duration::from_secs(10);

/// Connections served at once.
const MAX_CONNECTIONS: usize = 512;

/// Serves the explorer on `listener` until the task is dropped.
pub async fn serve(
    listener: TcpListener,
    explorer: Arc<Explorer>,
    access: Access,
) -> std::io::Result<()> {
    let limits = HttpLimits {
        name: "explorer",
        max_connections: MAX_CONNECTIONS,
        header: HEADER_LIMIT,
        lifetime: CONNECTION_LIMIT,
        grace: GRACE,
        keep_alive: true,
    };
    gops_http::serve(listener, router(explorer, access), limits).await
}

/// The routes: `GET /` (the page), `GET /api/game`, `/api/value`, `/api/strategy`,
/// `/api/step`, `/api/solving`, and `POST /api/play/new`, `/api/play/bid`; any other path
/// is 404, another method 405. With tokens, every route first checks the request's.
pub fn router(explorer: Arc<Explorer>, access: Access) -> Router {
    Router::new()
        .route("/", get(page_route))
        .route("/api/game", get(game_route))
        .route("/api/value", get(value_route))
        .route("/api/strategy", get(strategy_route))
        .route("/api/step", get(step_route))
        .route("/api/solving", get(solving_route))
        .route("/api/play/new", post(play_new_route))
        .route("/api/play/bid", post(play_bid_route))
        .route("/api/coach", get(coach_route))
        .route("/coach", get(coach_page_route))
        .fallback(not_found)
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::new(access),
            check_access,
        ))
        .with_state(explorer)
}

async fn check_access(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let authorization = request.headers().get(AUTHORIZATION).map(|v| v.as_bytes());
    if access.admits(authorization, request.uri().query()) {
        return next.run(request).await;
    }
    let reason = if request.uri().path().starts_with("/api/") {
        "missing or wrong token: send Authorization: Bearer <token> or add token=<token> to the query\n"
    } else {
        "missing or wrong token: open the page as /?token=<token> (the token of the server's --token-file)\n"
    };
    (
        StatusCode::UNAUTHORIZED,
        [(WWW_AUTHENTICATE, "Bearer")],
        reason,
    )
        .into_response()
}

async fn not_found() -> Response {
    text(
        StatusCode::NOT_FOUND,
        "no such page: the API is under /api/ (see the README)",
    )
}

/// The page; it reads its own parameters (`token`, `selftest`) in the browser.
async fn page_route() -> Response {
    let nonce = format!("{:032x}", rand::random::<u128>());
    page_response(page::html(&nonce), &nonce)
}

/// A page's response: HTML, its content security policy, never cached or framed.
fn page_response(html: String, nonce: &str) -> Response {
    let mut response = html.into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(policy) = HeaderValue::from_str(&page::content_security_policy(nonce)) {
        headers.insert(CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    security_headers(response)
}

async fn game_route(State(explorer): State<Arc<Explorer>>, RawQuery(query): RawQuery) -> Response {
    answer(explorer, query, &[], |explorer, _| explorer.game()).await
}

async fn value_route(State(explorer): State<Arc<Explorer>>, RawQuery(query): RawQuery) -> Response {
    answer(explorer, query, &STATE_KEYS, Explorer::value).await
}

async fn strategy_route(
    State(explorer): State<Arc<Explorer>>,
    RawQuery(query): RawQuery,
) -> Response {
    answer(
        explorer,
        query,
        &[&STATE_KEYS[..], &["upcard"]].concat(),
        Explorer::strategy,
    )
    .await
}

async fn solving_route(
    State(explorer): State<Arc<Explorer>>,
    RawQuery(query): RawQuery,
) -> Response {
    answer(explorer, query, &[], |explorer, _| explorer.solving()).await
}

async fn step_route(State(explorer): State<Arc<Explorer>>, RawQuery(query): RawQuery) -> Response {
    let keys = [&STATE_KEYS[..], &["upcard", "bid_a", "bid_b"]].concat();
    answer(explorer, query, &keys, Explorer::step).await
}

async fn play_new_route(
    State(explorer): State<Arc<Explorer>>,
    RawQuery(query): RawQuery,
) -> Response {
    answer(explorer, query, &["seed", "opponent"], Explorer::play_new).await
}

async fn play_bid_route(
    State(explorer): State<Arc<Explorer>>,
    RawQuery(query): RawQuery,
) -> Response {
    answer(explorer, query, &["game", "card"], Explorer::play_bid).await
}

async fn coach_route(State(explorer): State<Arc<Explorer>>, RawQuery(query): RawQuery) -> Response {
    answer(explorer, query, &crate::coach::COACH_KEYS, Explorer::coach).await
}

/// The coach's page; it reads the game from its own address in the browser.
async fn coach_page_route() -> Response {
    let nonce = format!("{:032x}", rand::random::<u128>());
    page_response(page::coach_html(&nonce), &nonce)
}

/// Decodes the query with the route's `keys`, runs `work` (which reads the db, so
/// blocks) off the async threads, and turns its outcome into a response.
async fn answer(
    explorer: Arc<Explorer>,
    raw: Option<String>,
    keys: &[&str],
    work: fn(&Explorer, &Query) -> Result<Value, ApiError>,
) -> Response {
    let query = match Query::parse(raw.as_deref(), keys) {
        Ok(query) => query,
        Err(bad) => return error(ApiError::BadRequest(bad)),
    };
    match tokio::task::spawn_blocking(move || work(&explorer, &query)).await {
        Ok(Ok(value)) => {
            let response = (
                [
                    (CONTENT_TYPE, "application/json"),
                    (CACHE_CONTROL, "no-store"),
                ],
                value.to_string(),
            )
                .into_response();
            security_headers(response)
        }
        Ok(Err(e)) => error(e),
        Err(e) => error(ApiError::Internal(format!("the lookup failed: {e}"))),
    }
}

fn error(e: ApiError) -> Response {
    let status = match &e {
        ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
        ApiError::NotFound(_) => StatusCode::NOT_FOUND,
        ApiError::NotSolved(_) => StatusCode::CONFLICT,
        ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    text(status, &e.to_string())
}

/// A one-line plain-text answer.
fn text(status: StatusCode, line: &str) -> Response {
    let response = (
        status,
        [
            (CONTENT_TYPE, "text/plain; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
        ],
        format!("{line}\n"),
    )
        .into_response();
    security_headers(response)
}

fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // the page's address may hold the token: never send it on
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
