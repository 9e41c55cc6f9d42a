//! A worker's session with its coordinator: the client, the retry policy, the id and
//! session key the coordinator gave it at `Hello` and the game it runs. A restarted coordinator forgets
//! its workers; the session then says hello again and checks the game is the same.

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

/// `L`: how calls reach the coordinator (gRPC, or an in-memory one in tests).
pub struct Session<L: Link = Client> {
    pub client: L,
    pub backoff: Backoff,
    /// Turns true when the worker is asked to stop.
    pub stop: watch::Receiver<bool>,
    /// `None` until the first hello is answered.
    pub worker_id: Option<WorkerId>,
    /// The secret every call after `Hello` presents with the worker id.
    pub key: SessionKey,
    pub n: u8,
    pub objective: Objective,
    /// How the kernel starts each simplex: the coordinator's db's arithmetic.
    pub pivot_start: PivotStart,
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
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
    /// A session not yet greeted.
    pub fn new(client: L, backoff: Backoff, stop: watch::Receiver<bool>) -> Session<L> {
        Session {
            client,
            backoff,
            stop,
            worker_id: None,
            key: SessionKey([0; SessionKey::LEN]),
            n: 0,
            objective: Objective::Points,
            pivot_start: PivotStart::default(),
            lease: Duration::from_secs(60),
        }
    }

    /// The id the coordinator gave this worker (0 before the first hello, which the
    /// coordinator never hands out).
    pub fn id(&self) -> WorkerId {
        self.worker_id.unwrap_or_default()
    }

    /// Who this worker's calls say they come from.
    pub fn caller(&self) -> Caller {
        Caller {
            worker: self.id(),
            key: self.key,
        }
    }

    pub async fn call<T, F, Fut>(&self, what: &str, f: F) -> Result<Called<T>, ClientError>
    where
        F: FnMut(L) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        call_with(&self.client, &self.backoff, &self.stop, what, f).await
    }

    /// Says hello (again, after a coordinator restart: the game must be the same).
    pub async fn hello(&mut self, name: &str, threads: usize) -> Result<(), ClientError> {
        let request = HelloRequest {
            protocol_version: gops_proto::PROTOCOL_VERSION,
            worker_name: name.to_string(),
            threads: threads as u32,
        };
        // never reached yet: fail fast (a mistyped address); else wait as long as usual
        let first_contact = self.worker_id.is_none();
        let backoff = if first_contact {
            self.backoff.for_first_contact()
        } else {
            self.backoff.clone()
        };
        let called = call_with(&self.client, &backoff, &self.stop, "hello", |c| {
            let r = request.clone();
            async move { c.hello(r).await }
        })
        .await;
        let reply = match called {
            Err(ClientError::GaveUp(after, why)) if first_contact => {
                return Err(ClientError::NeverReached(after, why));
            }
            other => other?,
        };
        let reply = match reply {
            Called::Done(reply) => reply,
            Called::Forgotten => {
                return Err(ClientError::Protocol(
                    "hello answered 'unknown worker'".into(),
                ));
            }
        };
        let welcome = Welcome::from_reply(&reply)?;
        if self.worker_id.is_some()
            && (welcome.n != self.n
                || welcome.objective != self.objective
                || welcome.pivot_start != self.pivot_start)
        {
            return Err(ClientError::Protocol(
                "the coordinator now runs another game".into(),
            ));
        }
        self.worker_id = Some(welcome.worker_id);
        self.key = welcome.key;
        (self.n, self.objective, self.lease) = (welcome.n, welcome.objective, welcome.lease);
        self.pivot_start = welcome.pivot_start;
        info!(worker = %welcome.worker_id, n = welcome.n, objective = %welcome.objective, "joined the coordinator");
        Ok(())
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
