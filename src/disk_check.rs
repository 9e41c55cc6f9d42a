//! The disk check of `solve` and `coordinator`: the db's estimated final size is logged,
//! and a start is refused (exit 2, nothing created) when the rest of it cannot fit in the
//! free space of the db's file system, unless `--skip-disk-check`. A rolling solve
//! (`--keep-from-layer`, or a db that rolls already) is checked against its peak.

use std::path::Path;

use gops_common::Objective;
use gops_db::disk::{DiskPlan, human_bytes};
use tracing::{info, warn};

use crate::failure::Failure;

pub fn check(
    db: &Path,
    n: u8,
    objective: Objective,
    keep_from_layer: Option<u8>,
    skip: bool,
) -> Result<(), Failure> {
    if let Some(want) = keep_from_layer.filter(|&k| k > n) {
        return Err(gops_db::store::StoreError::KeepOutOfRange { n, want }.into());
    }
    let rolling = keep_from_layer.or_else(|| {
        gops_db::store::Store::peek_manifest(db)
            .ok()
            .flatten()
            .and_then(|m| m.keep_from_layer)
    });
    let plan = match DiskPlan::of(db, n, objective, rolling) {
        Ok(plan) => plan,
        Err(e) => {
            warn!(db = %db.display(), error = %e, "cannot tell the free disk space; not checked");
            return Ok(());
        }
    };
    info!(
        estimate = %human_bytes(plan.estimate),
        peak = %human_bytes(plan.peak),
        stored = %human_bytes(plan.stored),
        free = %human_bytes(plan.free),
        "db size"
    );
    let Some(message) = plan.refusal(db, n, objective, ["--db", "--skip-disk-check"]) else {
        return Ok(());
    };
    if skip {
        warn!("{message}");
        return Ok(());
    }
    Err(Failure::Usage(message))
}
