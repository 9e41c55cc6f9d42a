//! Input that several commands read alike: a `--layers` range, the seed taken from
//! the clock when `--seed` is not given, and the caches of a `--memory-mb` budget.

use gops_common::Objective;
use gops_common::budget::{CacheSplit, Role, available_memory, process_caches};

use crate::failure::Failure;

/// The caches of a process with `memory_mb` (or the default: half the memory
/// available, at most 3 GiB) for the `n`-card game, checked against what the game needs
/// at the least.
pub fn memory_split(
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

/// `K..L` (inclusive), `K..`, `..L` or `K`; all layers when absent.
pub fn parse_layers(text: Option<&str>, n: u8) -> Result<std::ops::RangeInclusive<u8>, Failure> {
    let Some(text) = text else {
        return Ok(1..=n);
    };
    let bad = || {
        Failure::Usage(format!(
            "--layers: expected K..L, K.., ..L or K with layers in 1..={n}, got '{text}'"
        ))
    };
    let layer = |s: &str, default: u8| -> Result<u8, Failure> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(default);
        }
        s.parse::<u8>()
            .ok()
            .filter(|k| (1..=n).contains(k))
            .ok_or_else(bad)
    };
    let (first, last) = match text.split_once("..") {
        Some((a, b)) => (layer(a, 1)?, layer(b.trim_start_matches('='), n)?),
        None => {
            let k = layer(text, 0)?;
            (k, k)
        }
    };
    if first == 0 || first > last {
        return Err(bad());
    }
    Ok(first..=last)
}

/// A seed for runs without `--seed`.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
