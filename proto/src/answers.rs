//! The gRPC status contract between a coordinator and its workers, written once: the
//! status a coordinator answers for each kind of refusal or failure (the constructors
//! below, which its handlers use), and what a worker makes of a status ([`Answer::of`]).
//!
//! * [`forgotten`] (`NotFound`): the coordinator does not know the session (it
//!   restarted): the worker says hello again.
//! * [`busy`] (`ResourceExhausted`) and the network's own codes (`Unavailable`,
//!   `DeadlineExceeded`, `Aborted`, `Cancelled`, `Unknown`, and `Internal` without the
//!   mark below, which HTTP/2 resets and proxies produce): try again after a backoff.
//! * [`coordinator_failed`] (`Internal`, marked with [`COORDINATOR_FAILED_HEADER`]): the
//!   coordinator's own failure (its store cannot be written, its engine failed). Not the
//!   worker's fault, and not mended by retrying soon: the coordinator stops, and the
//!   worker stops with the reason.
//! * Every other code ([`bad_request`], [`wrong_key`], [`precondition`], ...): refused
//!   for good; the worker stops with the reason.

use tonic::metadata::MetadataValue;
use tonic::{Code, Status};

/// The metadata key that marks an `Internal` status as the coordinator's own failure.
pub const COORDINATOR_FAILED_HEADER: &str = "gops-coordinator-failed";

/// What a worker makes of a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The session is unknown: greet again.
    Forgotten,
    /// The coordinator is busy or unreachable: try again after a backoff.
    TryAgain,
    /// The coordinator failed (its store, its engine): stop with the reason.
    CoordinatorFailed,
    /// Refused for good: stop with the reason.
    Refused,
}

impl Answer {
    pub fn of(status: &Status) -> Answer {
        if status.code() == Code::Internal
            && status.metadata().contains_key(COORDINATOR_FAILED_HEADER)
        {
            return Answer::CoordinatorFailed;
        }
        match status.code() {
            Code::NotFound => Answer::Forgotten,
            Code::Unavailable
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::Aborted
            | Code::Cancelled
            | Code::ResourceExhausted
            | Code::Internal => Answer::TryAgain,
            _ => Answer::Refused,
        }
    }
}

/// The session named is not known to this coordinator.
pub fn forgotten(message: impl Into<String>) -> Status {
    Status::not_found(message)
}

/// The coordinator holds as many sessions as it may: try again later.
pub fn busy(message: impl Into<String>) -> Status {
    Status::resource_exhausted(message)
}

/// The call presented another session's key.
pub fn wrong_key(message: impl Into<String>) -> Status {
    Status::permission_denied(message)
}

/// The call's content is malformed or fails its checks.
pub fn bad_request(message: impl Into<String>) -> Status {
    Status::invalid_argument(message)
}

/// The call cannot be served in the coordinator's state: another protocol version, a
/// layer not complete yet, a banned session or token.
pub fn precondition(message: impl Into<String>) -> Status {
    Status::failed_precondition(message)
}

/// The coordinator's own failure: `Internal`, marked so that a worker tells it from an
/// `Internal` of the network.
pub fn coordinator_failed(message: impl Into<String>) -> Status {
    let mut status = Status::internal(message);
    status
        .metadata_mut()
        .insert(COORDINATOR_FAILED_HEADER, MetadataValue::from_static("1"));
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_constructor_means_what_its_name_says_to_a_worker() {
        assert_eq!(Answer::of(&forgotten("x")), Answer::Forgotten);
        assert_eq!(Answer::of(&busy("x")), Answer::TryAgain);
        assert_eq!(
            Answer::of(&coordinator_failed("x")),
            Answer::CoordinatorFailed
        );
        for refused in [wrong_key("x"), bad_request("x"), precondition("x")] {
            assert_eq!(Answer::of(&refused), Answer::Refused, "{refused:?}");
        }
    }

    #[test]
    fn the_network_s_codes_are_tried_again_and_unknown_ones_refused() {
        for code in [
            Code::Unavailable,
            Code::Unknown,
            Code::DeadlineExceeded,
            Code::Aborted,
            Code::Cancelled,
            // an HTTP/2 reset, unmarked: the network's, not the coordinator's
            Code::Internal,
        ] {
            assert_eq!(
                Answer::of(&Status::new(code, "x")),
                Answer::TryAgain,
                "{code:?}"
            );
        }
        for code in [Code::Unauthenticated, Code::Unimplemented, Code::DataLoss] {
            assert_eq!(
                Answer::of(&Status::new(code, "x")),
                Answer::Refused,
                "{code:?}"
            );
        }
    }
}
