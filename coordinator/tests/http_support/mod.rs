//! What the HTTP server tests share (`metrics_http`, `dashboard_http`): a coordinator on
//! a fresh db, the server on a free port of 127.0.0.1, and one HTTP/1.1 request's answer.

#![allow(dead_code)] // each test crate uses its own part

use std::net::SocketAddr;
use std::sync::Arc;

use gops_common::objective::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::metrics::serve_metrics;
use gops_coordinator::report::observer::Silent;
use gops_coordinator::server::service::AccessTokens;
use gops_db::store::Store;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A coordinator of the `n`-card points game on a new db at `db`.
pub fn coordinator(db: &std::path::Path, n: u8) -> Arc<Coordinator> {
    let store = Store::open_or_create(db, n, Objective::Points).unwrap();
    Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap())
}

/// The HTTP server on a free port of 127.0.0.1, with `token`, serving in the background.
pub async fn start(core: Arc<Coordinator>, token: Option<&str>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tokens = token.map_or_else(AccessTokens::none, |t| AccessTokens::shared(t.into()));
    tokio::spawn(serve_metrics(listener, core, tokens));
    addr
}

/// An answer: status, header lines (lower-case names) and body.
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    /// The value of header `name`, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// `method path` with the extra header lines `headers`, on a connection of its own.
pub async fn request(addr: SocketAddr, method: &str, path: &str, headers: &str) -> Answer {
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

pub async fn get(addr: SocketAddr, path: &str, headers: &str) -> Answer {
    request(addr, "GET", path, headers).await
}
