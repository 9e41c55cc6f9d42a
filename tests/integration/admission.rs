//! Connections that never authenticate cannot keep workers out or stop the coordinator:
//! idle sockets are closed after the deadline and pushed out by newer connections at the
//! cap, one address holds only its share, and a coordinator whose file limit is far
//! below the idle sockets pointed at it finishes its run with the reference checksums,
//! without spinning on the accept error.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gops_common::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::observer::Silent;
use gops_coordinator::server::admission::ConnLimits;
use gops_coordinator::server::service::{AccessTokens, serve_with_tls};
use gops_db::store::Store;
use gops_proto::v1::HelloRequest;
use gops_worker::connect;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::support::{Proc, checksums, listening_address, reference, temp_db};

const TOKEN: &str = "admission-test-token";

/// A coordinator of the 5-card game served in this process with `limits`.
async fn start(
    limits: ConnLimits,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tempfile::TempDir,
) {
    start_with_tls(limits, None).await
}

/// [`start`], serving TLS with `tls` where given.
async fn start_with_tls(
    limits: ConnLimits,
    tls: Option<tonic::transport::ServerTlsConfig>,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tempfile::TempDir,
) {
    let (dir, db) = temp_db();
    let store = Store::open_or_create(&db, 5, Objective::Points).unwrap();
    let core =
        Arc::new(Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let tokens = AccessTokens::shared(TOKEN.into());
    tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        serve_with_tls(
            listener,
            core,
            tokens,
            tls,
            limits,
            Duration::from_secs(3600),
            shutdown,
        )
        .await
        .unwrap();
    });
    (address, stop, dir)
}

/// A socket from `from` (a loopback address other than the honest client's) to
/// `server` that sends nothing.
async fn idle_socket(from: [u8; 4], server: SocketAddr) -> TcpStream {
    try_idle_socket(from, server).await.unwrap()
}

async fn try_idle_socket(from: [u8; 4], server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((from, 0)))?;
    socket.connect(server).await
}

/// Whether the server closed `socket` within `limit` (end of stream or an error after
/// whatever it sent, such as its HTTP/2 settings).
async fn closed_within(socket: &mut TcpStream, limit: Duration) -> bool {
    let mut buffer = [0u8; 1024];
    let drained = async {
        while let Ok(read) = socket.read(&mut buffer).await {
            if read == 0 {
                break;
            }
        }
    };
    tokio::time::timeout(limit, drained).await.is_ok()
}

async fn hello_within(address: SocketAddr, limit: Duration) -> Result<Duration, String> {
    let started = Instant::now();
    let mut client = connect(&format!("http://{address}"), Some(TOKEN)).unwrap();
    let request = HelloRequest {
        protocol_version: gops_proto::PROTOCOL_VERSION,
        worker_name: "honest".into(),
        threads: 1,
    };
    match tokio::time::timeout(limit, client.hello(request)).await {
        Ok(Ok(_)) => Ok(started.elapsed()),
        Ok(Err(status)) => Err(format!("refused: {status}")),
        Err(_) => Err(format!("no answer within {limit:?}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_cannot_keep_a_worker_out() {
    let limits = ConnLimits {
        max_connections: 16,
        per_address: 8,
        auth_within: Duration::from_millis(800),
    };
    let (address, _stop, _dir) = start(limits).await;
    // 40 idle sockets from four addresses: 32 could be held by the per-address share,
    // twice the cap
    let mut idle = Vec::new();
    for from in 2..=5u8 {
        for _ in 0..10 {
            idle.push(idle_socket([127, 0, 0, from], address).await);
        }
    }
    // a worker gets in at once: the cap pushes out unauthenticated connections
    let waited = hello_within(address, Duration::from_secs(3)).await.unwrap();
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    // and every idle socket is closed: over its address's share at once, the rest by
    // the deadline or pushed out
    for (i, socket) in idle.iter_mut().enumerate() {
        assert!(
            closed_within(socket, Duration::from_secs(3)).await,
            "idle socket {i} still open"
        );
    }
    // an authenticated connection outlives the deadline: calls go on on it
    let mut client = connect(&format!("http://{address}"), Some(TOKEN)).unwrap();
    let request = || HelloRequest {
        protocol_version: gops_proto::PROTOCOL_VERSION,
        worker_name: "honest".into(),
        threads: 1,
    };
    client.hello(request()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    client.hello(request()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_authenticates_is_closed_at_the_deadline() {
    let limits = ConnLimits {
        auth_within: Duration::from_millis(500),
        ..ConnLimits::default()
    };
    let (address, _stop, _dir) = start(limits).await;
    // a raw HTTP/2 preface and nothing after it: the server's settings come back, then
    // the connection is closed for want of an authenticated call
    let mut socket = idle_socket([127, 0, 0, 6], address).await;
    use tokio::io::AsyncWriteExt;
    socket
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    let started = Instant::now();
    assert!(
        closed_within(&mut socket, Duration::from_secs(5)).await,
        "the connection was still open after 5 s"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
}

/// A TLS client that completes its handshake and then says nothing is closed at the
/// deadline like a silent plain connection: the deadline runs on the socket, under TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_client_silent_after_its_handshake_is_closed_at_the_deadline() {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert, key) = (made.cert.pem(), made.signing_key.serialize_pem());
    let tls =
        gops_coordinator::server::service::server_tls(cert.as_bytes(), key.as_bytes()).unwrap();
    let limits = ConnLimits {
        auth_within: Duration::from_millis(500),
        ..ConnLimits::default()
    };
    let (address, _stop, _dir) = start_with_tls(limits, Some(tls)).await;
    let der = made.cert.der().clone();
    let outcome = tokio::task::spawn_blocking(move || silent_tls_client(address, der))
        .await
        .unwrap();
    let (handshake_done, closed_after) = outcome.unwrap();
    assert!(handshake_done, "the TLS handshake did not complete");
    assert!(
        closed_after >= Duration::from_millis(400) && closed_after < Duration::from_secs(5),
        "closed after {closed_after:?}"
    );
}

/// Connects to `address` over TLS trusting `certificate`, completes the handshake, sends
/// nothing more, and reads until the server closes: whether the handshake completed, and
/// how long after it the connection was closed (an error after 5 s if it was not).
fn silent_tls_client(
    address: SocketAddr,
    certificate: rustls::pki_types::CertificateDer<'static>,
) -> Result<(bool, Duration), String> {
    use std::io::Read;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certificate).map_err(|e| e.to_string())?;
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let name = rustls::pki_types::ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let mut connection =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| e.to_string())?;
    let mut socket = std::net::TcpStream::connect(address).map_err(|e| e.to_string())?;
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    while connection.is_handshaking() {
        connection
            .complete_io(&mut socket)
            .map_err(|e| format!("handshake: {e}"))?;
    }
    let handshaken = Instant::now();
    let mut stream = rustls::Stream::new(&mut connection, &mut socket);
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("still open after {:?}", handshaken.elapsed()));
            }
            // a reset or an unclean end: closed all the same
            Err(_) => break,
        }
    }
    Ok((true, handshaken.elapsed()))
}

/// `gops coordinator` under a file limit of 64 with 300 idle sockets at it: it accepts
/// what its limit allows, pushes out the idle ones, and a worker solves the game.
#[test]
fn a_coordinator_out_of_file_descriptors_keeps_serving() {
    let (_dir, db) = temp_db();
    let db_arg = db.to_str().unwrap();
    let mut coordinator = Proc::spawn_via(
        &["prlimit", "--nofile=64:64", "--"],
        &[
            "coordinator",
            "--n",
            "6",
            "--db",
            db_arg,
            "--listen",
            "127.0.0.1:0",
            "--exit-when-done",
        ],
    );
    let address: SocketAddr = listening_address(&mut coordinator).parse().unwrap();
    let url = format!("http://{address}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let idle = runtime.block_on(async {
        let mut idle = Vec::new();
        for i in 0..300u32 {
            let from = [127, 0, 1, (i % 50) as u8 + 1];
            if let Ok(Ok(socket)) =
                tokio::time::timeout(Duration::from_secs(2), try_idle_socket(from, address)).await
            {
                idle.push(socket);
            }
        }
        idle
    });
    assert!(
        idle.len() >= 100,
        "only {} idle sockets connected",
        idle.len()
    );
    let cpu_before = cpu_ticks(coordinator.pid());
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks(coordinator.pid()) - cpu_before;
    // a loop spinning on EMFILE spends about 200 ticks in 2 s
    assert!(
        spent < 50,
        "{spent} CPU ticks in 2 s with idle sockets held"
    );
    let worker = Proc::spawn(&[
        "worker",
        "--coordinator",
        &url,
        "--threads",
        "1",
        "--give-up-secs",
        "120",
    ]);
    let (ok, lines) = worker.finish();
    assert!(ok, "{lines:#?}");
    let (code, lines) = coordinator.finish_code();
    assert_eq!(code, Some(0), "{lines:#?}");
    drop(idle);
    assert_eq!(checksums(&db), reference(6, "points"));
}

/// User plus system CPU time of process `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // the fields after the command name, which is in parentheses
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}
