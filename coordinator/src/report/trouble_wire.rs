//! The run's failure ([`RunFailure`]) and stall ([`Stall`]) on the wire: to and from
//! the status message's `failure_detail` and `stall_detail`, so that `gops status
//! --coordinator --json` carries them as fields, as the coordinator's own status does.

use gops_proto::v1;

use crate::error::{RunFailure, StoreFault};
use crate::report::stall::Stall;

pub fn failure_to_proto(failure: &RunFailure) -> v1::RunFailure {
    use v1::run_failure::Kind;
    let kind = match failure {
        RunFailure::StoreUnwritable { fault, message } => {
            Kind::StoreUnwritable(v1::StoreUnwritable {
                fault: match fault {
                    StoreFault::DiskFull => v1::StoreFault::DiskFull,
                    StoreFault::Io => v1::StoreFault::Io,
                } as i32,
                message: message.clone(),
            })
        }
        RunFailure::ShardNoOneGetsPast {
            parties,
            layer,
            shard,
            last,
        } => Kind::ShardNoOneGetsPast(v1::ShardNoOneGetsPast {
            parties: u32::try_from(*parties).unwrap_or(u32::MAX),
            layer: u32::from(*layer),
            shard: shard.clone(),
            last: last.clone(),
        }),
    };
    v1::RunFailure { kind: Some(kind) }
}

/// The failure a coordinator sent; an error names what does not fit.
pub fn failure_from_proto(failure: v1::RunFailure) -> Result<RunFailure, String> {
    use v1::run_failure::Kind;
    match failure.kind.ok_or("the failure has no kind")? {
        Kind::StoreUnwritable(s) => Ok(RunFailure::StoreUnwritable {
            fault: match v1::StoreFault::try_from(s.fault) {
                Ok(v1::StoreFault::DiskFull) => StoreFault::DiskFull,
                Ok(v1::StoreFault::Io) => StoreFault::Io,
                _ => return Err(format!("store fault {} is not known", s.fault)),
            },
            message: s.message,
        }),
        Kind::ShardNoOneGetsPast(s) => Ok(RunFailure::ShardNoOneGetsPast {
            parties: s.parties as usize,
            layer: u8::try_from(s.layer)
                .map_err(|_| format!("layer {} is out of range", s.layer))?,
            shard: s.shard,
            last: s.last,
        }),
    }
}

pub fn stall_to_proto(stall: &Stall) -> v1::Stall {
    use v1::stall::Kind;
    let kind = match stall {
        Stall::NoWorker { for_seconds } => Kind::NoWorker(v1::NoWorker {
            for_seconds: *for_seconds,
        }),
        Stall::NothingStored {
            for_seconds,
            workers,
        } => Kind::NothingStored(v1::NothingStored {
            for_seconds: *for_seconds,
            workers: workers.clone(),
        }),
    };
    v1::Stall { kind: Some(kind) }
}

/// The stall a coordinator sent; an error names what does not fit.
pub fn stall_from_proto(stall: v1::Stall) -> Result<Stall, String> {
    use v1::stall::Kind;
    Ok(match stall.kind.ok_or("the stall has no kind")? {
        Kind::NoWorker(s) => Stall::NoWorker {
            for_seconds: s.for_seconds,
        },
        Kind::NothingStored(s) => Stall::NothingStored {
            for_seconds: s.for_seconds,
            workers: s.workers,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_and_stall_survives_the_wire() {
        let failures = [
            RunFailure::StoreUnwritable {
                fault: StoreFault::DiskFull,
                message: "full".into(),
            },
            RunFailure::StoreUnwritable {
                fault: StoreFault::Io,
                message: "bad sector".into(),
            },
            RunFailure::ShardNoOneGetsPast {
                parties: 3,
                layer: 6,
                shard: "4..=9, 12".into(),
                last: "out of memory".into(),
            },
        ];
        for failure in failures {
            assert_eq!(failure_from_proto(failure_to_proto(&failure)), Ok(failure));
        }
        let stalls = [
            Stall::NoWorker { for_seconds: 61 },
            Stall::NothingStored {
                for_seconds: 240,
                workers: vec!["a".into(), "b".into()],
            },
        ];
        for stall in stalls {
            assert_eq!(stall_from_proto(stall_to_proto(&stall)), Ok(stall));
        }
    }

    #[test]
    fn a_failure_without_a_kind_or_with_an_unknown_fault_is_an_error() {
        assert!(failure_from_proto(v1::RunFailure { kind: None }).is_err());
        assert!(stall_from_proto(v1::Stall { kind: None }).is_err());
        let unknown = v1::RunFailure {
            kind: Some(v1::run_failure::Kind::StoreUnwritable(
                v1::StoreUnwritable {
                    fault: 99,
                    message: String::new(),
                },
            )),
        };
        assert_eq!(
            failure_from_proto(unknown),
            Err("store fault 99 is not known".into())
        );
        let layer = v1::RunFailure {
            kind: Some(v1::run_failure::Kind::ShardNoOneGetsPast(
                v1::ShardNoOneGetsPast {
                    parties: 3,
                    layer: 300,
                    shard: "1".into(),
                    last: String::new(),
                },
            )),
        };
        assert!(failure_from_proto(layer).is_err());
    }
}
