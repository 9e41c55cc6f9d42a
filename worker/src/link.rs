//! The worker's calls to its coordinator, behind one small trait: the gRPC client
//! ([`crate::connection::Client`]) is one implementation, an in-memory coordinator in
//! the worker's unit tests another, so that leasing ahead, heartbeats, retries, backoff,
//! giving up and the end of a run are tested without a network and on tokio's paused
//! clock. Each call answers the reply's message or the gRPC status it failed with; the
//! retries and what a status means are the callers' ([`crate::call`]).

use std::future::Future;

use gops_proto::call_metadata::submit_call;
use gops_proto::v1::{
    FetchRequest, HeartbeatReply, HeartbeatRequest, HelloReply, HelloRequest, LeaseReply,
    LeaseRequest, LeaveRequest, LocateReply, ReleaseRequest, SliceData, SubmitReply, SubmitRequest,
};
use tonic::Status;

use gops_proto::v1::coordinator_client::CoordinatorClient;

use crate::connection::Client;

/// One coordinator's calls, as a worker makes them. Cloning is cheap (a handle).
pub trait Link: Clone + Send + Sync + 'static {
    fn hello(
        &self,
        request: HelloRequest,
    ) -> impl Future<Output = Result<HelloReply, Status>> + Send;
    fn lease(
        &self,
        request: LeaseRequest,
    ) -> impl Future<Output = Result<LeaseReply, Status>> + Send;
    fn heartbeat(
        &self,
        request: HeartbeatRequest,
    ) -> impl Future<Output = Result<HeartbeatReply, Status>> + Send;
    /// The slices asked for, every message of the stream collected.
    fn fetch_slices(
        &self,
        request: FetchRequest,
    ) -> impl Future<Output = Result<Vec<SliceData>, Status>> + Send;
    fn locate_slices(
        &self,
        request: FetchRequest,
    ) -> impl Future<Output = Result<LocateReply, Status>> + Send;
    /// A submission, its sender named in the call's metadata as well.
    fn submit(
        &self,
        request: SubmitRequest,
    ) -> impl Future<Output = Result<SubmitReply, Status>> + Send;
    fn release(&self, request: ReleaseRequest) -> impl Future<Output = Result<(), Status>> + Send;
    fn leave(&self, request: LeaveRequest) -> impl Future<Output = Result<(), Status>> + Send;
}

// Each call names the generated client's own method by path: inherent methods take
// precedence there, where `client.hello(..)` would find this trait's `&self` method first.
impl Link for Client {
    async fn hello(&self, request: HelloRequest) -> Result<HelloReply, Status> {
        Ok(CoordinatorClient::hello(&mut self.clone(), request)
            .await?
            .into_inner())
    }

    async fn lease(&self, request: LeaseRequest) -> Result<LeaseReply, Status> {
        Ok(CoordinatorClient::lease(&mut self.clone(), request)
            .await?
            .into_inner())
    }

    async fn heartbeat(&self, request: HeartbeatRequest) -> Result<HeartbeatReply, Status> {
        Ok(CoordinatorClient::heartbeat(&mut self.clone(), request)
            .await?
            .into_inner())
    }

    async fn fetch_slices(&self, request: FetchRequest) -> Result<Vec<SliceData>, Status> {
        let mut stream = CoordinatorClient::fetch_slices(&mut self.clone(), request)
            .await?
            .into_inner();
        let mut slices = Vec::new();
        while let Some(item) = stream.message().await? {
            slices.push(item);
        }
        Ok(slices)
    }

    async fn locate_slices(&self, request: FetchRequest) -> Result<LocateReply, Status> {
        Ok(CoordinatorClient::locate_slices(&mut self.clone(), request)
            .await?
            .into_inner())
    }

    async fn submit(&self, request: SubmitRequest) -> Result<SubmitReply, Status> {
        Ok(
            CoordinatorClient::submit(&mut self.clone(), submit_call(request))
                .await?
                .into_inner(),
        )
    }

    async fn release(&self, request: ReleaseRequest) -> Result<(), Status> {
        CoordinatorClient::release(&mut self.clone(), request)
            .await
            .map(|_| ())
    }

    async fn leave(&self, request: LeaveRequest) -> Result<(), Status> {
        CoordinatorClient::leave(&mut self.clone(), request)
            .await
            .map(|_| ())
    }
}
