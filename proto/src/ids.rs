//! Typed ids of the protocol: a worker and a lease are both numbered with `u64`s on the
//! wire, and passing one for the other is a bug the compiler should catch; and the
//! session key that binds a worker's calls to the `Hello` that opened its session.

use std::fmt;

/// A worker, as its coordinator numbered it at `Hello`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkerId(pub u64);

/// One lease of a shard to a worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LeaseId(pub u64);

impl fmt::Display for WorkerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl LeaseId {
    /// The lease numbered after this one.
    pub fn next(self) -> LeaseId {
        LeaseId(self.0 + 1)
    }
}

/// The secret a coordinator hands a worker at `Hello`. Its `Debug` never shows it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionKey(pub [u8; SessionKey::LEN]);

impl SessionKey {
    pub const LEN: usize = 32;

    /// A key as it arrives on the wire: exactly [`SessionKey::LEN`] bytes.
    pub fn from_wire(bytes: &[u8]) -> Option<SessionKey> {
        bytes.try_into().ok().map(SessionKey)
    }

    pub fn to_wire(self) -> Vec<u8> {
        self.0.to_vec()
    }

    /// Compares in time independent of where the keys differ.
    pub fn matches(&self, other: &SessionKey) -> bool {
        constant_time_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

/// Who makes a call: the worker id and the session key it presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    pub worker: WorkerId,
    pub key: SessionKey,
}

/// Equality of two byte strings in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_only_in_their_length_and_never_print() {
        assert!(SessionKey::from_wire(&[1; 31]).is_none());
        assert!(SessionKey::from_wire(&[1; 33]).is_none());
        let key = SessionKey::from_wire(&[7; 32]).unwrap();
        assert!(key.matches(&SessionKey([7; 32])));
        assert!(!key.matches(&SessionKey([8; 32])));
        assert_eq!(key.to_wire(), vec![7; 32]);
        assert!(!format!("{key:?}").contains('7'));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
