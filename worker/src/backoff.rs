//! Retrying a coordinator that is unreachable: exponential backoff with jitter, and the
//! TLS refusals that retrying does not mend (which statuses are tried again is the
//! protocol's status contract, [`gops_proto::answers`]).

use std::time::Duration;

use rand::Rng;
use tonic::Status;

#[derive(Clone, Debug)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
    /// Give up once the coordinator has been unreachable this long.
    pub give_up_after: Duration,
    /// Give up this soon (if sooner) when the coordinator has never been reached: a
    /// mistyped address should fail fast, a coordinator that went away is waited for.
    pub first_contact: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(5),
            give_up_after: Duration::from_secs(15 * 60),
            first_contact: FIRST_CONTACT,
        }
    }
}

/// How long a worker that has never reached its coordinator keeps trying.
pub const FIRST_CONTACT: Duration = Duration::from_secs(30);

impl Backoff {
    /// This backoff for a coordinator never reached yet: it gives up after
    /// [`Backoff::first_contact`] at most.
    pub fn for_first_contact(&self) -> Backoff {
        Backoff {
            give_up_after: self.give_up_after.min(self.first_contact),
            ..self.clone()
        }
    }

    /// The delay before retry number `attempt` (0-based): base * 2^attempt capped at
    /// max, then scaled by a random factor in [0.5, 1.0] so workers do not retry in step.
    pub fn delay(&self, attempt: u32) -> Duration {
        let exp = self.base.saturating_mul(1u32 << attempt.min(16));
        let capped = exp.min(self.max);
        capped.mul_f64(rand::rng().random_range(0.5..=1.0))
    }
}

/// The TLS failure behind a failed call, if that is what it was: a certificate that is
/// not trusted, expired or for another name, a peer that does not speak TLS. Retrying
/// does not mend these, although gRPC reports them as `Unavailable`; a dropped network
/// shows up as an I/O error instead, not as one of these.
pub fn tls_refusal(status: &Status) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(status);
    while let Some(e) = source {
        // tokio-rustls hands rustls' error over inside an io::Error, whose `source`
        // skips it
        let inner = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        if let Some(tls) = [Some(e), inner]
            .into_iter()
            .flatten()
            .find_map(|e| e.downcast_ref::<rustls::Error>())
        {
            return Some(tls.to_string());
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code;

    #[test]
    fn delays_grow_and_are_capped() {
        let b = Backoff {
            base: Duration::from_millis(10),
            max: Duration::from_millis(100),
            give_up_after: Duration::from_secs(1),
            first_contact: Duration::from_secs(1),
        };
        for attempt in 0..40 {
            let d = b.delay(attempt);
            let full = Duration::from_millis(10)
                .saturating_mul(1 << attempt.min(16))
                .min(Duration::from_millis(100));
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }

    #[test]
    fn tls_errors_are_found_inside_io_errors() {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        let status = Status::from_error(Box::new(tonic::ConnectError(Box::new(io))));
        assert_eq!(status.code(), Code::Unavailable);
        let why = tls_refusal(&status).expect("a TLS refusal");
        assert!(why.contains("UnknownIssuer"), "{why}");
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let status = Status::from_error(Box::new(tonic::ConnectError(Box::new(refused))));
        assert_eq!(tls_refusal(&status), None);
    }
}
