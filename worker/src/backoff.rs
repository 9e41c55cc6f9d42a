//! Retrying a coordinator that is unreachable: exponential backoff with jitter, and the
//! split of errors into transient (retry) and permanent (give up).

use std::time::Duration;

use rand::Rng;
use tonic::Code;

#[derive(Clone, Debug)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
    /// Give up once the coordinator has been unreachable this long.
    pub give_up_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(5),
            give_up_after: Duration::from_secs(15 * 60),
        }
    }
}

impl Backoff {
    /// The delay before retry number `attempt` (0-based): base * 2^attempt capped at
    /// max, then scaled by a random factor in [0.5, 1.0] so workers do not retry in step.
    pub fn delay(&self, attempt: u32) -> Duration {
        let exp = self.base.saturating_mul(1u32 << attempt.min(16));
        let capped = exp.min(self.max);
        capped.mul_f64(rand::rng().random_range(0.5..=1.0))
    }
}

/// Whether a failed call may succeed if tried again (the coordinator restarting, the
/// network dropping), as opposed to a refusal that will not change.
pub fn is_transient(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::Aborted
            | Code::Cancelled
            | Code::ResourceExhausted
            | Code::Internal
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_and_are_capped() {
        let b = Backoff {
            base: Duration::from_millis(10),
            max: Duration::from_millis(100),
            give_up_after: Duration::from_secs(1),
        };
        for attempt in 0..40 {
            let d = b.delay(attempt);
            let full = Duration::from_millis(10)
                .saturating_mul(1 << attempt.min(16))
                .min(Duration::from_millis(100));
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
        assert!(is_transient(Code::Unavailable));
        assert!(!is_transient(Code::Unauthenticated));
        assert!(!is_transient(Code::InvalidArgument));
    }
}
