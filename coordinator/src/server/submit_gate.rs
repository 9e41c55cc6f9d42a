//! The check a `Submit` call passes before its message is read: the sender its metadata
//! names ([`gops_proto::call_metadata`]) must be a live session in good standing. A
//! submission of up to 64 MiB from an unknown, forged or banned session is refused
//! from its headers alone: it is never decoded, and no more of it is received than the
//! HTTP/2 flow-control window lets the client send first (1 MiB). The admission
//! ([`crate::cluster::Admitted`]) travels with the request to the handler, which checks
//! that the message names the same sender.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use gops_proto::call_metadata::{SUBMIT_PATH, submit_sender};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service, http};
use tonic::metadata::MetadataMap;
use tonic::server::NamedService;

use crate::cluster::Coordinator;
use crate::server::core_call::blocking;

/// Wraps the gRPC service: `Submit` calls are let through only for a known session in
/// good standing; every other call goes straight through.
#[derive(Clone)]
pub struct SubmitGate<S> {
    inner: S,
    core: Arc<Coordinator>,
}

impl<S> SubmitGate<S> {
    pub fn new(inner: S, core: Arc<Coordinator>) -> SubmitGate<S> {
        SubmitGate { inner, core }
    }
}

impl<S, B> Service<http::Request<B>> for SubmitGate<S>
where
    S: Service<http::Request<B>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<http::Response<Body>, Infallible>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        if request.uri().path() != SUBMIT_PATH {
            return Box::pin(self.inner.call(request));
        }
        // the service made ready is the one that takes the call; a clone stays behind
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let core = Arc::clone(&self.core);
        let metadata = MetadataMap::from_headers(request.headers().clone());
        Box::pin(async move {
            let admitted = match submit_sender(&metadata) {
                Ok((caller, lease)) => {
                    blocking(move || core.admit(caller, lease, Instant::now())).await
                }
                Err(why) => Err(Status::invalid_argument(why)),
            };
            match admitted {
                Ok(admitted) => {
                    // the handler takes the sender from here, not from the headers again
                    request.extensions_mut().insert(admitted);
                    inner.call(request).await
                }
                Err(status) => Ok(status.into_http()),
            }
        })
    }
}

impl<S: NamedService> NamedService for SubmitGate<S> {
    const NAME: &'static str = S::NAME;
}
