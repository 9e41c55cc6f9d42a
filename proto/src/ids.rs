//! Typed ids of the protocol: a worker and a lease are both numbered with `u64`s on the
//! wire, and passing one for the other is a bug the compiler should catch.

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
