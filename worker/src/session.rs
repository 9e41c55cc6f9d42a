//! A worker's session with its coordinator: the client, the retry policy, and the
//! welcome of its `Hello` (the id and session key the coordinator gave it, the game it
//! runs), without which no session exists. A restarted coordinator forgets its workers;
//! the session then says hello again and checks the game is the same.

use std::future::Future;
use std::time::Duration;

use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_proto::ids::{Caller, SessionKey, WorkerId};
use gops_proto::v1::HelloRequest;
use tokio::sync::watch;
use tonic::Status;
use tracing::info;

use crate::backoff::Backoff;
use crate::call::{Called, call_with};
use crate::connection::Client;
use crate::error::ClientError;
use crate::link::Link;

/// A greeted session: it exists only with the coordinator's welcome ([`Session::greet`]).
/// `L`: how calls reach the coordinator (gRPC, or an in-memory one in tests).
pub struct Session<L: Link = Client> {
    pub client: L,
    pub backoff: Backoff,
    /// Turns true when the worker is asked to stop.
    pub stop: watch::Receiver<bool>,
    /// The id, key and game of the last hello.
    welcome: Welcome,
}

/// What a worker learns from a hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Welcome {
    pub worker_id: WorkerId,
    pub key: SessionKey,
    pub n: u8,
    pub objective: Objective,
    pub pivot_start: PivotStart,
    pub lease: Duration,
}

impl Welcome {
    /// The coordinator's answer, checked for form.
    pub fn from_reply(reply: &gops_proto::v1::HelloReply) -> Result<Welcome, ClientError> {
        let n = u8::try_from(reply.n)
            .ok()
            .filter(|n| (1..=gops_common::MAX_N).contains(n))
            .ok_or_else(|| ClientError::Protocol(format!("n = {}", reply.n)))?;
        let objective: Objective = reply.objective.parse().map_err(ClientError::Protocol)?;
        let pivot_start = gops_proto::wire::pivot_start_from_wire(reply.pivot_start)
            .map_err(ClientError::Protocol)?;
        let key = SessionKey::from_wire(&reply.session_key).ok_or_else(|| {
            ClientError::Protocol(format!(
                "session key of {} bytes, not {}",
                reply.session_key.len(),
                SessionKey::LEN
            ))
        })?;
        Ok(Welcome {
            worker_id: WorkerId(reply.worker_id),
            key,
            n,
            objective,
            pivot_start,
            lease: Duration::from_millis(reply.lease_ms.max(1)),
        })
    }
}

impl<L: Link> Session<L> {
    /// Says hello to a coordinator not reached yet (failing fast on a mistyped
    /// address): the session, greeted.
    pub async fn greet(
        client: L,
        backoff: Backoff,
        stop: watch::Receiver<bool>,
        name: &str,
        threads: usize,
    ) -> Result<Session<L>, ClientError> {
        let first_contact = backoff.for_first_contact();
        let welcome = match hello(&client, &first_contact, &stop, name, threads).await {
            Err(ClientError::GaveUp(after, why)) => {
                return Err(ClientError::NeverReached(after, why));
            }
            other => other?,
        };
        info!(worker = %welcome.worker_id, n = welcome.n, objective = %welcome.objective, "joined the coordinator");
        Ok(Session {
            client,
            backoff,
            stop,
            welcome,
        })
    }

    /// Says hello again, to a coordinator that restarted and forgot this worker: the
    /// game must be the same.
    pub async fn greet_again(&mut self, name: &str, threads: usize) -> Result<(), ClientError> {
        let welcome = hello(&self.client, &self.backoff, &self.stop, name, threads).await?;
        let old = &self.welcome;
        if (welcome.n, welcome.objective, welcome.pivot_start)
            != (old.n, old.objective, old.pivot_start)
        {
            return Err(ClientError::Protocol(
                "the coordinator now runs another game".into(),
            ));
        }
        info!(worker = %welcome.worker_id, n = welcome.n, objective = %welcome.objective, "joined the coordinator again");
        self.welcome = welcome;
        Ok(())
    }

    /// The id the coordinator gave this worker.
    pub fn id(&self) -> WorkerId {
        self.welcome.worker_id
    }

    /// The secret every call after `Hello` presents with the worker id.
    pub fn key(&self) -> SessionKey {
        self.welcome.key
    }

    /// Who this worker's calls say they come from.
    pub fn caller(&self) -> Caller {
        Caller {
            worker: self.welcome.worker_id,
            key: self.welcome.key,
        }
    }

    /// The game: cards per player.
    pub fn n(&self) -> u8 {
        self.welcome.n
    }

    pub fn objective(&self) -> Objective {
        self.welcome.objective
    }

    /// How the kernel starts each simplex: the coordinator's db's arithmetic.
    pub fn pivot_start(&self) -> PivotStart {
        self.welcome.pivot_start
    }

    /// How long a lease lasts without a heartbeat.
    pub fn lease(&self) -> Duration {
        self.welcome.lease
    }

    pub async fn call<T, F, Fut>(&self, what: &str, f: F) -> Result<Called<T>, ClientError>
    where
        F: FnMut(L) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        call_with(&self.client, &self.backoff, &self.stop, what, f).await
    }
}

/// One hello, retried as `backoff` allows: the welcome, checked for form.
async fn hello<L: Link>(
    client: &L,
    backoff: &Backoff,
    stop: &watch::Receiver<bool>,
    name: &str,
    threads: usize,
) -> Result<Welcome, ClientError> {
    let request = HelloRequest {
        protocol_version: gops_proto::PROTOCOL_VERSION,
        worker_name: name.to_string(),
        threads: u32::try_from(threads).unwrap_or(u32::MAX),
    };
    let called = call_with(client, backoff, stop, "hello", |c| {
        let r = request.clone();
        async move { c.hello(r).await }
    })
    .await?;
    match called {
        Called::Done(reply) => Welcome::from_reply(&reply),
        Called::Forgotten => Err(ClientError::Protocol(
            "hello answered 'unknown worker'".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_proto::v1::HelloReply;

    #[test]
    fn a_welcome_of_the_wrong_form_is_a_protocol_error() {
        let reply = HelloReply {
            worker_id: 5,
            n: 13,
            objective: "win".into(),
            lease_ms: 0,
            session_key: vec![9; 32],
            pivot_start: 1,
        };
        let welcome = Welcome::from_reply(&reply).unwrap();
        assert_eq!(welcome.worker_id, WorkerId(5));
        assert_eq!(welcome.key, SessionKey([9; 32]));
        assert_eq!(welcome.lease, Duration::from_millis(1));
        assert_eq!(welcome.pivot_start, PivotStart::Minimax);
        for bad in [
            HelloReply {
                n: 0,
                ..reply.clone()
            },
            HelloReply {
                n: 17,
                ..reply.clone()
            },
            HelloReply {
                objective: "score".into(),
                ..reply.clone()
            },
            // an arithmetic of a newer build
            HelloReply {
                pivot_start: 2,
                ..reply.clone()
            },
            // a coordinator of protocol version 3 sends no key
            HelloReply {
                session_key: Vec::new(),
                ..reply.clone()
            },
        ] {
            assert!(matches!(
                Welcome::from_reply(&bad),
                Err(ClientError::Protocol(_))
            ));
        }
    }
}
