//! A call into the coordinator's core from a gRPC handler: run off the async runtime (it
//! may wait for the core's lock, which is held across flushed writes), its error mapped
//! to the `Status` the protocol's contract ([`gops_proto::answers`]) gives it. Used by
//! the handlers ([`crate::server::service`]) and by the gate that admits a submission before
//! its message is read ([`crate::server::submit_gate`]).

use gops_proto::answers;
use tonic::Status;

use crate::error::CoreError;

impl From<CoreError> for Status {
    /// Each error as the status contract ([`gops_proto::answers`]) says.
    fn from(e: CoreError) -> Status {
        let message = e.to_string();
        match e {
            CoreError::Version { .. }
            | CoreError::NotReady(_)
            | CoreError::Banned(..)
            | CoreError::CredentialBanned(_) => answers::precondition(message),
            CoreError::UnknownWorker(_) => answers::forgotten(message),
            CoreError::WrongSession(_) => answers::wrong_key(message),
            CoreError::Full(_) => answers::busy(message),
            CoreError::BadRequest(_) | CoreError::Rejected(_) => answers::bad_request(message),
            CoreError::Store(_) | CoreError::Engine(_) | CoreError::Config(_) => {
                answers::coordinator_failed(message)
            }
        }
    }
}

/// Runs a core call off the async runtime: it may wait for the coordinator's lock, which
/// is held across flushed writes.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CoreError> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| answers::coordinator_failed(format!("handler failed: {e}")))?
        .map_err(Status::from)
}
