//! What a `gops` process asks of the operating system at start and at the end: glibc's
//! allocator settings that keep resident memory near what the process holds, the soft
//! limit on open files lifted to the hard one (a coordinator holds one descriptor per
//! connection beside its store's files), and the peak resident memory, from /proc.

#![expect(
    unsafe_code,
    reason = "mallopt, getrlimit and setrlimit through libc, each call with its SAFETY comment"
)]

/// Allocations from this size up get their own mapping, returned to the system when
/// freed: slices and their messages (kilobytes to tens of megabytes) are what a budget
/// counts, and they come and go.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const OWN_MAPPING_FROM: i32 = 256 << 10;

/// glibc malloc arenas at most (the default is 8 per core). An arena keeps its
/// high-water mark: with slices allocated on one thread and freed on another, a 12-card
/// win solve stood at 3.97 GB resident on a 3 GiB budget, 2.7 GB of it in 44 arena heaps
/// and 1.3 GB in the main one. Nothing hot allocates, so few arenas cost no speed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAX_ARENAS: i32 = 4;

/// Sets glibc's malloc so that resident memory follows the memory held: a fixed mmap
/// threshold (glibc raises it to 32 MiB as large blocks are freed, after which slices
/// come from the arenas and their space stays resident) and few arenas. Call before
/// any thread starts (arenas made before stay). Whether glibc took both settings (each
/// is tried whatever the other's fate); other C libraries and systems keep their
/// defaults (false).
pub fn tune_allocator() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters, under malloc's own lock.
    unsafe {
        let threshold = libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING_FROM) == 1;
        let arenas = libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS) == 1;
        threshold && arenas
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Raises the soft limit on open files to the hard limit (to 1,048,576 where the hard
/// limit is unlimited) and returns the soft limit now in force; `None` where it cannot be
/// read (or off Unix).
// rlim_t is u64 on Linux and macOS, not on every Unix
#[allow(clippy::unnecessary_cast)]
pub fn raise_file_limit() -> Option<u64> {
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

/// This process's peak resident memory (VmHWM in /proc/self/status), where there is one.
pub fn peak_rss() -> Option<u64> {
    proc_kib("/proc/self/status", "VmHWM:")
}

/// The `key` line of a /proc file that counts in kB (`VmHWM:   1234 kB`), in bytes.
pub fn proc_kib(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_the_allocator_settings() {
        assert!(super::tune_allocator());
    }

    #[test]
    #[allow(clippy::unnecessary_cast)]
    fn the_limit_after_raising_is_the_one_in_force() {
        let raised = super::raise_file_limit();
        #[cfg(unix)]
        {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: as in `raise_file_limit`.
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

    #[test]
    #[cfg(target_os = "linux")]
    fn the_peak_memory_is_read_and_plausible() {
        let peak = super::peak_rss().expect("Linux has /proc/self/status");
        assert!(peak > 1 << 20, "{peak}");
    }
}
