//! The disk check before a solve (`gops solve`, `gops coordinator`): a start is refused
//! (nothing created) when the rest of the db cannot fit in the free space of its file
//! system, unless the check is skipped. A rolling solve (`keep_from_layer`, or a db that
//! rolls already) is checked against its peak. A file system whose free space cannot be
//! read is not checked. The caller logs the verdict (the plan's figures, the refusal it
//! overrode).

use std::path::Path;

use gops_common::Objective;

use crate::disk::DiskPlan;
use crate::store::{Store, StoreError};

/// A solve that may start, and what the caller should say about it.
#[derive(Debug)]
pub enum RoomCheck {
    /// The rest fits.
    Fits(DiskPlan),
    /// The rest does not fit, but the check was skipped: the refusal to warn of.
    Overridden { plan: DiskPlan, refusal: String },
    /// The free space cannot be read: not checked.
    Unknown(std::io::Error),
}

/// Why a solve may not start.
#[derive(Debug, thiserror::Error)]
pub enum DiskCheckError {
    /// A rolling setting outside the game.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The rest of the db does not fit: the message names the figures and the flags.
    #[error("{0}")]
    NoRoom(String),
}

/// Checks that the `n`-card `objective` game fits in `db`'s file system; the flags the
/// refusal names are `--db` and `--skip-disk-check`.
pub fn check_room(
    db: &Path,
    n: u8,
    objective: Objective,
    keep_from_layer: Option<u8>,
    skip: bool,
) -> Result<RoomCheck, DiskCheckError> {
    if let Some(want) = keep_from_layer.filter(|&k| k > n) {
        return Err(StoreError::KeepOutOfRange { n, want }.into());
    }
    let rolling = keep_from_layer.or_else(|| {
        Store::peek_manifest(db)
            .ok()
            .flatten()
            .and_then(|m| m.keep_from_layer)
    });
    let plan = match DiskPlan::of(db, n, objective, rolling) {
        Ok(plan) => plan,
        Err(e) => return Ok(RoomCheck::Unknown(e)),
    };
    match plan.refusal(db, n, objective, ["--db", "--skip-disk-check"]) {
        None => Ok(RoomCheck::Fits(plan)),
        Some(refusal) if skip => Ok(RoomCheck::Overridden { plan, refusal }),
        Some(refusal) => Err(DiskCheckError::NoRoom(refusal)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keep_layer_outside_the_game_is_refused_before_anything_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let e = check_room(&db, 5, Objective::Points, Some(6), false).unwrap_err();
        assert!(matches!(
            e,
            DiskCheckError::Store(StoreError::KeepOutOfRange { n: 5, want: 6 })
        ));
        assert!(!db.exists());
        // a small game fits anywhere a test runs whose free space can be read
        let fits = check_room(&db, 5, Objective::Points, None, false).unwrap();
        assert!(
            matches!(fits, RoomCheck::Fits(_) | RoomCheck::Unknown(_)),
            "{fits:?}"
        );
        assert!(!db.exists());
    }
}
