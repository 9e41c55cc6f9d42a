//! Which connections the coordinator keeps: at most so many in all and so many from one
//! address, each closed unless a call on it passes the token check within a deadline
//! (a peer that connects and sends nothing, or finishes a TLS handshake and stays
//! silent, or sends only refused calls, holds a file descriptor no longer than that).
//! At the cap, a new connection pushes out the oldest that has not authenticated yet,
//! so idle connections cannot keep a worker out even for that deadline; only
//! authenticated ones make the accept loop wait. The accept loop pauses when the process
//! is out of file descriptors instead of spinning on the error. tonic reads the connections this module admits
//! ([`admit`]); the token check marks a connection as authenticated
//! ([`ConnInfo::mark_authenticated`]).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use gops_common::sync::lock;
use gops_http::{AcceptPause, is_connection_error};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::futures::OwnedNotified;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::Sleep;
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};
use tracing::warn;

/// Descriptors kept free for the store's files, the status file and the metrics server
/// when the connection cap is derived from the file limit.
pub const FD_RESERVE: u64 = 256;

/// The limits on connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Connections open at once; at the cap, a new connection pushes out the oldest one
    /// that has not passed the token check.
    pub max_connections: usize,
    /// Connections open at once from one IPv4 address or IPv6 /64; more are closed at
    /// once.
    pub per_address: usize,
    /// How long a connection may stay open before a call on it passes the token check.
    pub auth_within: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            max_connections: 4096,
            per_address: 512,
            auth_within: Duration::from_secs(10),
        }
    }
}

impl ConnLimits {
    /// The default limits, with the total cut to what a process allowed `file_limit`
    /// descriptors can hold beside [`FD_RESERVE`] for its own files
    /// ([`ConnLimits::room`]).
    pub fn for_file_limit(file_limit: Option<u64>) -> ConnLimits {
        let mut limits = ConnLimits::default();
        limits.max_connections = limits.max_connections.min(Self::room(file_limit));
        limits.per_address = limits.per_address.min(limits.max_connections);
        limits
    }

    /// The limits of a process allowed `file_limit` descriptors, with the flags over
    /// them: `max_connections` is cut to what the file limit leaves beside the store's
    /// files (more would starve them), with a warning; `per_address` is taken as given.
    pub fn with_flags(
        file_limit: Option<u64>,
        max_connections: Option<u64>,
        per_address: Option<u64>,
    ) -> ConnLimits {
        let mut limits = ConnLimits::for_file_limit(file_limit);
        if let Some(max) = max_connections {
            let room = ConnLimits::room(file_limit);
            let asked = usize::try_from(max).unwrap_or(usize::MAX);
            if asked > room {
                tracing::warn!(
                    asked = max,
                    allowed = room,
                    "--max-connections is above what the file limit leaves beside the store's files; using the lower"
                );
            }
            limits.max_connections = asked.min(room);
        }
        if let Some(per_address) = per_address {
            limits.per_address = usize::try_from(per_address).unwrap_or(usize::MAX);
        }
        tracing::info!(
            file_limit = file_limit.map_or_else(|| "unknown".to_string(), |l| l.to_string()),
            max_connections = limits.max_connections,
            per_address = limits.per_address,
            "connection limits"
        );
        limits
    }

    /// The most connections a process allowed `file_limit` descriptors can hold beside
    /// [`FD_RESERVE`] for its own files (at least 16); unbounded when the limit is not
    /// known.
    pub fn room(file_limit: Option<u64>) -> usize {
        match file_limit {
            Some(limit) => limit.saturating_sub(FD_RESERVE).max(16) as usize,
            None => usize::MAX,
        }
    }
}

/// What tonic hands to every call of a connection ([`Connected::ConnectInfo`]).
#[derive(Clone, Debug)]
pub struct ConnInfo {
    pub tcp: TcpConnectInfo,
    state: Arc<ConnState>,
}

/// A connection's standing, shared by its socket and the accept loop.
#[derive(Debug, Default)]
struct ConnState {
    authenticated: AtomicBool,
    /// Told when the accept loop pushes the connection out.
    evict: Arc<Notify>,
}

impl ConnInfo {
    /// The connection carried a call that passed the token check: it stays open.
    pub fn mark_authenticated(&self) {
        self.state.authenticated.store(true, Ordering::Relaxed);
    }
}

/// The connections open per address prefix.
#[derive(Default)]
struct AddressCounts(Mutex<HashMap<IpAddr, usize>>);

impl AddressCounts {
    /// A slot for one more connection from `ip`, if its prefix has fewer than `cap`.
    fn try_add(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<AddressSlot> {
        let prefix = address_prefix(ip);
        let mut counts = lock(&self.0);
        let count = counts.entry(prefix).or_insert(0);
        if *count >= cap {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            counts: Arc::clone(self),
            prefix,
        })
    }
}

/// One connection's place in [`AddressCounts`], given back when the connection closes.
struct AddressSlot {
    counts: Arc<AddressCounts>,
    prefix: IpAddr,
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts.0);
        if let Some(count) = counts.get_mut(&self.prefix) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.prefix);
            }
        }
    }
}

/// An IPv4 address as it is (an IPv4-mapped IPv6 address as its IPv4 one), an IPv6
/// address cut to its /64: one host or one site's network.
fn address_prefix(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::from(segments)
            }
        },
    }
}

/// An admitted connection: the socket, its places under both caps, and the deadline by
/// which a call on it must pass the token check.
pub struct Guarded {
    tcp: TcpStream,
    info: ConnInfo,
    deadline: Option<Pin<Box<Sleep>>>,
    evicted: Pin<Box<OwnedNotified>>,
    _permit: OwnedSemaphorePermit,
    _slot: AddressSlot,
}

impl Guarded {
    /// Whether the connection is past its deadline unauthenticated (an error to end it);
    /// drops the deadline once it is authenticated.
    fn check_deadline(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if self.deadline.is_none() {
            return Ok(());
        }
        if self.info.state.authenticated.load(Ordering::Relaxed) {
            self.deadline = None;
            return Ok(());
        }
        if self.evicted.as_mut().poll(cx).is_ready() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "pushed out unauthenticated by a newer connection",
            ));
        }
        if let Some(deadline) = &mut self.deadline
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no authenticated call on the connection in time",
            ));
        }
        Ok(())
    }
}

impl Connected for Guarded {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        self.info.clone()
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Err(e) = self.check_deadline(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}

/// The connections `listener` accepts within `limits`, for tonic's
/// `serve_with_incoming`. The accept loop runs as its own task and stops when the stream
/// is dropped.
pub fn admit(listener: TcpListener, limits: ConnLimits) -> Admitted {
    let (sender, receiver) = mpsc::channel(64);
    let task = tokio::spawn(accept_loop(listener, limits, sender));
    Admitted { receiver, task }
}

/// The stream [`admit`] returns.
pub struct Admitted {
    receiver: mpsc::Receiver<io::Result<Guarded>>,
    task: tokio::task::JoinHandle<()>,
}

impl Stream for Admitted {
    type Item = io::Result<Guarded>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.receiver.poll_recv(cx)
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How often a continuing accept error or refusals are logged.
const WARN_EVERY: Duration = Duration::from_secs(10);

async fn accept_loop(
    listener: TcpListener,
    limits: ConnLimits,
    sender: mpsc::Sender<io::Result<Guarded>>,
) {
    let total = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let addresses = Arc::new(AddressCounts::default());
    let mut unauthenticated = Unauthenticated::default();
    let mut pause = AcceptPause::new();
    let mut warned: Option<Instant> = None;
    let mut should_warn = move || {
        let due = warned.is_none_or(|at| at.elapsed() >= WARN_EVERY);
        if due {
            warned = Some(Instant::now());
        }
        due
    };
    loop {
        // at the cap, the oldest connection not yet authenticated makes room; if every
        // one is, nothing is accepted (new ones wait in the kernel's backlog)
        if total.available_permits() == 0 {
            unauthenticated.evict_oldest();
        }
        let Ok(permit) = Arc::clone(&total).acquire_owned().await else {
            return;
        };
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => {
                pause.accepted();
                accepted
            }
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                if should_warn() {
                    warn!(error = %e, pause_ms = pause.current().as_millis() as u64, "cannot accept connections; pausing");
                }
                pause.wait().await;
                continue;
            }
        };
        let Some(slot) = addresses.try_add(peer.ip(), limits.per_address) else {
            if should_warn() {
                warn!(peer = %peer.ip(), cap = limits.per_address, "too many connections from one address; closing the new ones");
            }
            continue;
        };
        // small replies must not wait for Nagle's algorithm (40 ms stalls per call)
        if let Err(e) = tcp.set_nodelay(true) {
            warn!(error = %e, "cannot set TCP_NODELAY");
        }
        let state = Arc::new(ConnState::default());
        unauthenticated.push(&state);
        let evicted = Box::pin(Arc::clone(&state.evict).notified_owned());
        let info = ConnInfo {
            tcp: tcp.connect_info(),
            state,
        };
        let guarded = Guarded {
            tcp,
            info,
            deadline: Some(Box::pin(tokio::time::sleep(limits.auth_within))),
            evicted,
            _permit: permit,
            _slot: slot,
        };
        if sender.send(Ok(guarded)).await.is_err() {
            return;
        }
    }
}

/// The connections not known to be authenticated, oldest first (weakly held: a closed
/// one is skipped).
#[derive(Default)]
struct Unauthenticated(VecDeque<Weak<ConnState>>);

impl Unauthenticated {
    fn push(&mut self, state: &Arc<ConnState>) {
        // forget the closed and the authenticated now and then, so the queue stays short
        if self.0.len() >= 64 && self.0.len().is_power_of_two() {
            self.0
                .retain(|weak| weak.upgrade().is_some_and(|s| !s.is_authenticated()));
        }
        self.0.push_back(Arc::downgrade(state));
    }

    /// Tells the oldest open connection that has not authenticated to close; false if
    /// there is none.
    fn evict_oldest(&mut self) -> bool {
        while let Some(weak) = self.0.pop_front() {
            if let Some(state) = weak.upgrade()
                && !state.is_authenticated()
            {
                state.evict.notify_one();
                return true;
            }
        }
        false
    }
}

impl ConnState {
    fn is_authenticated(&self) -> bool {
        self.authenticated.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn prefixes_are_hosts_for_v4_and_slash_64_for_v6() {
        let v4 = IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3));
        assert_eq!(address_prefix(v4), v4);
        let mapped = IpAddr::V6(Ipv4Addr::new(10, 1, 2, 3).to_ipv6_mapped());
        assert_eq!(address_prefix(mapped), v4);
        let v6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 3, 4, 5, 6));
        let same_site = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9));
        assert_eq!(address_prefix(v6), address_prefix(same_site));
        let other = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 3, 4, 5, 6));
        assert_ne!(address_prefix(v6), address_prefix(other));
    }

    #[test]
    fn an_address_gets_its_cap_and_its_slots_back() {
        let counts = Arc::new(AddressCounts::default());
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let other = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
        let held: Vec<_> = (0..3).map(|_| counts.try_add(ip, 3).unwrap()).collect();
        assert!(counts.try_add(ip, 3).is_none());
        assert!(counts.try_add(other, 3).is_some());
        drop(held);
        let again = counts.try_add(ip, 3);
        assert!(again.is_some());
        assert_eq!(counts.0.lock().unwrap().get(&ip), Some(&1));
        drop(again);
        assert!(counts.0.lock().unwrap().is_empty());
    }

    #[test]
    fn the_cap_leaves_room_for_the_store() {
        assert_eq!(ConnLimits::for_file_limit(None), ConnLimits::default());
        let small = ConnLimits::for_file_limit(Some(1024));
        assert_eq!(small.max_connections, 1024 - FD_RESERVE as usize);
        assert_eq!(small.per_address, 512);
        let tiny = ConnLimits::for_file_limit(Some(100));
        assert_eq!((tiny.max_connections, tiny.per_address), (16, 16));
        assert_eq!(
            ConnLimits::room(Some(1 << 20)),
            (1 << 20) - FD_RESERVE as usize
        );
        assert_eq!(ConnLimits::room(None), usize::MAX);
    }

    #[test]
    fn the_flags_rule_but_never_past_the_file_limit() {
        let room = 1024 - FD_RESERVE as usize;
        let asked = ConnLimits::with_flags(Some(1024), Some(100), Some(7));
        assert_eq!((asked.max_connections, asked.per_address), (100, 7));
        let too_many = ConnLimits::with_flags(Some(1024), Some(1_000_000), None);
        assert_eq!(
            (too_many.max_connections, too_many.per_address),
            (room, 512)
        );
        assert_eq!(
            ConnLimits::with_flags(None, None, None),
            ConnLimits::default()
        );
    }
}
