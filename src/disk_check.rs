//! The disk check of `solve` and `coordinator`: the db's estimated final size is logged,
//! and a start is refused (exit 2, nothing created) when the rest of it cannot fit in the
//! free space of the db's file system, unless `--skip-disk-check`.

use std::path::Path;

use gops_common::Objective;
use gops_db::disk::{DiskPlan, human_bytes};
use tracing::{info, warn};

use crate::failure::Failure;

pub fn check(db: &Path, n: u8, objective: Objective, skip: bool) -> Result<(), Failure> {
    let plan = match DiskPlan::of(db, n, objective) {
        Ok(plan) => plan,
        Err(e) => {
            warn!(db = %db.display(), error = %e, "cannot tell the free disk space; not checked");
            return Ok(());
        }
    };
    info!(
        estimate = %human_bytes(plan.estimate),
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
