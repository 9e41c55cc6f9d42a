//! `--memory-mb` of `solve`, `coordinator` and `worker`: the process's memory budget,
//! by default half the memory available (at most 3 GiB), checked against what the game
//! needs at the least (one shard and its dependency slices, `gops_common::budget`) and
//! split among the process's caches; and the memory figures of /proc it reads (available,
//! this process's peak).

use gops_common::Objective;
use gops_common::budget::{CacheSplit, Role, bounded_need, default_budget};

use crate::failure::Failure;

/// The caches of a process with `memory_mb` (or the default) for the `n`-card game.
pub fn split(
    memory_mb: Option<u64>,
    n: u8,
    objective: Objective,
    role: Role,
) -> Result<CacheSplit, Failure> {
    let need = bounded_need(n, objective);
    let mib = |b: u64| b.div_ceil(1 << 20);
    let budget = match memory_mb {
        Some(mb) => mb.saturating_mul(1 << 20),
        None => {
            let available = available_memory();
            let budget = default_budget(available, need);
            if let Some(available) = available.filter(|&a| a < need) {
                return Err(Failure::Usage(format!(
                    "the {n}-card {objective} game needs at least {} MiB (one shard and its dependency slices), but only {} MiB is available",
                    mib(need),
                    mib(available)
                )));
            }
            budget
        }
    };
    CacheSplit::of(budget, need, role).ok_or_else(|| {
        Failure::Usage(format!(
            "the {n}-card {objective} game needs at least {} MiB (one shard and its dependency slices); --memory-mb is {}",
            mib(need),
            mib(budget)
        ))
    })
}

/// MemAvailable from /proc/meminfo, where there is one.
pub fn available_memory() -> Option<u64> {
    proc_kib("/proc/meminfo", "MemAvailable:")
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
