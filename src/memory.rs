//! `--memory-mb` of `solve`, `coordinator` and `worker`: the process's memory budget,
//! by default half the memory available (at most 3 GiB), checked against what the game
//! needs at the least (one shard and its dependency slices, `gops_common::budget`) and
//! split among the process's caches (`gops_common::budget::process_caches`); the
//! allocator's settings that keep the process's resident memory near what it holds; and
//! this process's peak memory, from /proc.

#![expect(
    unsafe_code,
    reason = "a libc call for the process memory, with its SAFETY comment"
)]

use gops_common::Objective;
use gops_common::budget::{CacheSplit, Role, available_memory, process_caches};

use crate::failure::Failure;

/// Allocations from this size up get their own mapping, returned to the system when
/// freed: slices and their messages (kilobytes to tens of megabytes) are what a budget
/// counts, and they come and go.
const OWN_MAPPING_FROM: i32 = 256 << 10;

/// glibc malloc arenas at most (the default is 8 per core). An arena keeps its
/// high-water mark: with slices allocated on one thread and freed on another, a 12-card
/// win solve stood at 3.97 GB resident on a 3 GiB budget, 2.7 GB of it in 44 arena heaps
/// and 1.3 GB in the main one. Nothing hot allocates, so few arenas cost no speed.
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

/// The caches of a process with `memory_mb` (or the default) for the `n`-card game.
pub fn split(
    memory_mb: Option<u64>,
    n: u8,
    objective: Objective,
    role: Role,
) -> Result<CacheSplit, Failure> {
    process_caches(
        "--memory-mb",
        memory_mb,
        n,
        objective,
        role,
        available_memory(),
    )
    .map_err(Failure::Usage)
}

/// This process's peak resident memory (VmHWM in /proc/self/status), where there is one.
pub fn peak_rss() -> Option<u64> {
    proc_kib("/proc/self/status", "VmHWM:")
}

/// The `key` line of a /proc file that counts in kB, in bytes.
fn proc_kib(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_the_allocator_settings() {
        assert!(tune_allocator());
    }
}
