//! Serving an axum router over HTTP/1.1 the way every `gops` HTTP server does (the
//! coordinator's dashboard and metrics, the explorer): at most so many connections at
//! once, a limit on the time to send a request head and on a connection's life (after
//! which it finishes the request in flight within a grace period, or is dropped), and an
//! accept loop that outlives accept errors, pausing (10 ms doubling to 1 s) while the
//! process is out of file descriptors rather than spinning. The only crate of the
//! workspace that uses hyper directly. [`tokens`]: reading an access token off a
//! request (Bearer, Basic, query) and comparing it in constant time. [`token_files`]:
//! the tokens of a `--token-file`, for every server and client, and the refusal to serve
//! a reachable address without one.

pub mod token_files;
pub mod tokens;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tracing::{debug, warn};

/// How a server treats its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// What the log lines call the server.
    pub name: &'static str,
    /// Connections served at once; at the cap, no more are accepted until one closes.
    pub max_connections: usize,
    /// How long a client has to send each request head (and how long an idle keep-alive
    /// connection is kept).
    pub header: Duration,
    /// How long one connection may live before it is asked to finish.
    pub lifetime: Duration,
    /// How long a connection past its lifetime has to finish the request in flight.
    pub grace: Duration,
    /// Whether a connection may carry more than one request.
    pub keep_alive: bool,
}

/// The pause of an accept loop after an error that is not about one connection (no
/// file descriptors left, say): 10 ms, doubling to 1 s while the errors go on, back to
/// 10 ms at the next connection accepted. Shared by every accept loop of the project.
#[derive(Debug)]
pub struct AcceptPause(Duration);

impl AcceptPause {
    const FIRST: Duration = Duration::from_millis(10);
    const LONGEST: Duration = Duration::from_secs(1);

    pub fn new() -> AcceptPause {
        AcceptPause(Self::FIRST)
    }

    /// A connection was accepted: the next error pauses the shortest time again.
    pub fn accepted(&mut self) {
        self.0 = Self::FIRST;
    }

    /// The pause the next [`AcceptPause::wait`] takes.
    pub fn current(&self) -> Duration {
        self.0
    }

    /// Sleeps the current pause and doubles the next.
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(Self::LONGEST);
    }
}

impl Default for AcceptPause {
    fn default() -> Self {
        AcceptPause::new()
    }
}

/// Serves `app` on `listener` within `limits` until the task is dropped.
pub async fn serve(listener: TcpListener, app: Router, limits: HttpLimits) -> std::io::Result<()> {
    let name = limits.name;
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut pause = AcceptPause::new();
    loop {
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return Ok(());
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => {
                pause.accepted();
                accepted
            }
            Err(e) if is_connection_error(&e) => {
                debug!(error = %e, "{name}: a connection failed before it was accepted");
                continue;
            }
            Err(e) => {
                warn!(error = %e, pause_ms = pause.current().as_millis() as u64, "{name}: accept failed; pausing");
                pause.wait().await;
                continue;
            }
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header)
                .keep_alive(limits.keep_alive)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = tokio::time::sleep(limits.lifetime) => {
                    connection.as_mut().graceful_shutdown();
                    match tokio::time::timeout(limits.grace, connection.as_mut()).await {
                        Ok(result) => result,
                        Err(_) => {
                            debug!(%peer, "{name}: connection over its time limit; closed");
                            Ok(())
                        }
                    }
                }
            };
            if let Err(e) = result {
                debug!(%peer, error = %e, "{name}: connection failed");
            }
        });
    }
}

/// Accept errors that concern one connection only: the next accept may succeed.
pub fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn limits(max_connections: usize) -> HttpLimits {
        HttpLimits {
            name: "test",
            max_connections,
            header: Duration::from_millis(300),
            lifetime: Duration::from_secs(5),
            grace: Duration::from_secs(1),
            keep_alive: false,
        }
    }

    async fn get_root(address: std::net::SocketAddr) -> String {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn a_silent_client_is_dropped_and_the_cap_holds_the_rest_back() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = Router::new().route("/", get(|| async { "hello" }));
        tokio::spawn(serve(listener, app, limits(1)));
        // one silent client holds the only slot until its head is late
        let mut silent = tokio::net::TcpStream::connect(address).await.unwrap();
        let started = std::time::Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(5), get_root(address))
            .await
            .expect("served once the silent client is dropped");
        assert!(answer.contains("hello"), "{answer}");
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "{:?}",
            started.elapsed()
        );
        let mut rest = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(2), silent.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "the silent client was dropped");
    }
}
