//! The process's file limit: a coordinator holds one descriptor per connection beside its
//! store's files, and the soft limit many systems start with (1024) is far below the hard
//! one. [`raise`] lifts the soft limit to the hard one at start.

#![expect(
    unsafe_code,
    reason = "getrlimit and setrlimit through libc, each call with its SAFETY comment"
)]

/// Raises the soft limit on open files to the hard limit (to 1,048,576 where the hard
/// limit is unlimited) and returns the soft limit now in force; `None` where it cannot be
/// read (or off Unix).
// rlim_t is u64 on Linux and macOS, not on every Unix
#[allow(clippy::unnecessary_cast)]
pub fn raise() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given, which lives on this stack.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return None;
        }
        let hard = if limit.rlim_max == libc::RLIM_INFINITY {
            1 << 20
        } else {
            limit.rlim_max
        };
        if hard > limit.rlim_cur {
            let raised = libc::rlimit {
                rlim_cur: hard,
                rlim_max: limit.rlim_max,
            };
            // SAFETY: setrlimit reads the struct it is given; a refusal leaves the limit
            // as it was.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                return Some(hard as u64);
            }
        }
        Some(limit.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    #[test]
    #[allow(clippy::unnecessary_cast)]
    fn the_limit_after_raising_is_the_one_in_force() {
        let raised = super::raise();
        #[cfg(unix)]
        {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: as in `raise`.
            assert_eq!(
                unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
                0
            );
            assert_eq!(raised, Some(limit.rlim_cur as u64));
            assert!(limit.rlim_max == libc::RLIM_INFINITY || limit.rlim_cur == limit.rlim_max);
        }
        #[cfg(not(unix))]
        assert_eq!(raised, None);
    }
}
