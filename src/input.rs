//! Input that several commands read alike: a `--layers` range, the seed taken from
//! the clock when `--seed` is not given, the caches of a `--memory-mb` budget, and the
//! disk check of a solve's `--db`.

use std::path::Path;

use gops_common::Objective;
use gops_common::budget::{CacheSplit, Role, available_memory, process_caches};
use gops_db::disk::check::{RoomCheck, check_room};
use gops_db::disk::human_bytes;
use tracing::{info, warn};

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

/// The disk check of `solve` and `coordinator` (`gops_db::disk::check`), logged: the db's
/// estimated size, or why it was not checked, or the refusal `--skip-disk-check` overrode.
pub fn check_disk(
    db: &Path,
    n: u8,
    objective: Objective,
    keep_from_layer: Option<u8>,
    skip: bool,
) -> Result<(), Failure> {
    let plan = match check_room(db, n, objective, keep_from_layer, skip)? {
        RoomCheck::Unknown(e) => {
            warn!(db = %db.display(), error = %e, "cannot tell the free disk space; not checked");
            return Ok(());
        }
        RoomCheck::Fits(plan) => plan,
        RoomCheck::Overridden { plan, refusal } => {
            warn!("{refusal}");
            plan
        }
    };
    info!(
        estimate = %human_bytes(plan.estimate),
        peak = %human_bytes(plan.peak),
        stored = %human_bytes(plan.stored),
        free = %human_bytes(plan.free),
        "db size"
    );
    Ok(())
}
