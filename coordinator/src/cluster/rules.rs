//! What a submitted slice must pass before it is stored, as plain functions: the sorting
//! of a submission into new slices, duplicates and disputes (a copy whose digest differs
//! from the stored one's), then per new slice its digest, shape, canonical encoding,
//! finite values, certificate gap, and a sample of its states re-solved bit for bit; a
//! slice checked in full is solved again whole, and its values, largest gap and games
//! must equal the copy's bit for bit.
//! Every refusal is a [`Rejection`], so callers and tests match on the reason, not on
//! its wording.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use gops_common::audit::{resolve_state, sample_states};
use gops_common::checksum::digest_bytes;
use gops_common::engine::{EngineError, LayerEngine};
use gops_common::kernel::{GAP_TOLERANCE, GameSolver};
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::{Slice, SliceBytes};
use gops_db::store::progress::LayerProgress;
use gops_proto::ids::LeaseId;
use rand::SeedableRng;
use rand::rngs::StdRng;

/// A submitted slice, as it arrives.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub layer: u8,
    pub prize_rank: u32,
    pub bytes: SliceBytes,
}

impl Submitted {
    /// A solved slice as a worker submits it.
    pub fn solved(layer: u8, solved: &gops_common::engine::SolvedSlice) -> Submitted {
        Submitted {
            layer,
            prize_rank: solved.prize_rank,
            bytes: solved.to_bytes(),
        }
    }
}

/// Why a submission is refused: the worker's data is wrong. Each names the slice.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Rejection {
    #[error("slice of layer {got} while layer {open} is open")]
    WrongLayer { got: u8, open: u8 },
    #[error("layer {layer} has no slice {rank}")]
    NoSuchSlice { layer: u8, rank: u32 },
    #[error("slice {rank} submitted twice in one request")]
    Repeated { rank: u32 },
    #[error("slice {rank} differs from the one already stored, which a full re-check confirmed")]
    DiffersFromStored { rank: u32 },
    #[error("lease {lease} was never granted to this worker")]
    NotYourLease { lease: LeaseId },
    #[error("slice {rank} is not part of the shard of lease {lease}")]
    OutsideLease { rank: u32, lease: LeaseId },
    #[error("slice {rank}: a window is wider than its values need (not the canonical encoding)")]
    NonCanonical { rank: u32 },
    #[error("slice {rank}: bytes do not match their digest")]
    DigestMismatch { rank: u32 },
    #[error("slice {rank}: {why}")]
    Malformed { rank: u32, why: String },
    #[error("slice {rank}: value {value}")]
    NonFinite { rank: u32, value: f64 },
    #[error("slice {rank}: certificate gap {gap:e} over tolerance")]
    GapOverTolerance { rank: u32, gap: f64 },
    #[error(
        "slice {rank}: {games} matrix games reported, where its shape and values allow {least} to {most}"
    )]
    ImpossibleGames {
        rank: u32,
        games: u64,
        least: u64,
        most: u64,
    },
    #[error("slice {rank}: pattern {pattern} at d {d} is {stored}, a re-solve gives {resolved}")]
    ValueMismatch {
        rank: u32,
        pattern: usize,
        d: i32,
        stored: f64,
        resolved: f64,
    },
    #[error(
        "slice {rank}: reported certificate gap {reported:e}, but pattern {pattern} at d {d} has a game with gap {found:e}"
    )]
    UnderstatedGap {
        rank: u32,
        pattern: usize,
        d: i32,
        reported: f64,
        found: f64,
    },
    #[error(
        "slice {rank}: reported certificate gap {reported:e}, a full re-solve gives {recomputed:e}"
    )]
    WrongGap {
        rank: u32,
        reported: f64,
        recomputed: f64,
    },
    #[error("slice {rank}: {reported} matrix games reported, a full re-solve solves {recomputed}")]
    WrongGames {
        rank: u32,
        reported: u64,
        recomputed: u64,
    },
    #[error("slice {rank}: a full re-solve gives other values")]
    RecomputedDiffers { rank: u32 },
}

/// A submission sorted against the open layer's progress.
#[derive(Debug, Default)]
pub struct Sorted {
    /// Slices not stored yet: to be checked.
    pub fresh: Vec<Submitted>,
    /// Slices stored already with another digest or largest gap: both copies are
    /// checked in full.
    pub disputed: Vec<Submitted>,
    /// Slices stored already with the same digest and largest gap, or of a layer
    /// already complete.
    pub duplicates: u32,
}

/// The lease a submission is made under, as the ledger knows it.
#[derive(Clone, Copy, Debug)]
pub struct LeaseGrant<'a> {
    pub lease: LeaseId,
    /// The prize ranks of its shard, if the lease was granted to the submitter in the
    /// open layer.
    pub ranks: Option<&'a [u32]>,
}

/// Sorts `slices` into new ones, disputes and duplicates of what `progress` (the open
/// layer) holds. A slice of a later layer, out of range, repeated, or not of the
/// submitter's lease `grant` rejects the whole submission.
pub fn sort_submission(
    progress: &LayerProgress,
    grant: LeaseGrant<'_>,
    slices: Vec<Submitted>,
) -> Result<Sorted, Rejection> {
    let k = progress.k();
    let mut sorted = Sorted::default();
    let mut seen = HashSet::new();
    for s in slices {
        if s.layer < k && s.layer >= 1 {
            sorted.duplicates += 1; // a late submission for a layer already complete
            continue;
        }
        if s.layer != k {
            return Err(Rejection::WrongLayer {
                got: s.layer,
                open: k,
            });
        }
        let rank = s.prize_rank;
        if rank as usize >= progress.size().slices {
            return Err(Rejection::NoSuchSlice { layer: k, rank });
        }
        if !seen.insert(rank) {
            return Err(Rejection::Repeated { rank });
        }
        let Some(allowed) = grant.ranks else {
            return Err(Rejection::NotYourLease { lease: grant.lease });
        };
        if !allowed.contains(&rank) {
            return Err(Rejection::OutsideLease {
                rank,
                lease: grant.lease,
            });
        }
        match progress.digest(rank) {
            Some(_) if progress.holds(rank, &s.bytes.digest, s.bytes.max_gap) => {
                sorted.duplicates += 1
            }
            Some(_) => sorted.disputed.push(s),
            None => sorted.fresh.push(s),
        }
    }
    Ok(sorted)
}

/// How [`check_slice`] checks a slice.
pub struct SliceCheck<'a> {
    pub n: u8,
    pub objective: Objective,
    pub engine: &'a LayerEngine,
    /// The slices of layer k - 1 the slice depends on, by prize rank.
    pub below: &'a HashMap<u32, Arc<Slice>>,
}

/// The share of its states each of `count` new slices has re-solved, so that `fraction`
/// of the states are re-solved in all, on `slice_share` of the slices: each slice is
/// chosen with probability `slice_share` (drawn from `rng`) and a chosen one has
/// `fraction / slice_share` of its states re-solved (all of them at most), the others
/// none. With `slice_share` 1 every slice has `fraction`. A slice that is not chosen
/// costs its check no slice of the layer below: any share above 0 of a slice's states
/// reads all of its dependencies, so this is what bounds the coordinator's reads.
pub fn slice_fractions(
    count: usize,
    fraction: f64,
    slice_share: f64,
    rng: &mut impl rand::Rng,
) -> Vec<f64> {
    // a share that is not a probability (the command line refuses one) checks every slice
    if fraction <= 0.0 || slice_share >= 1.0 || slice_share.is_nan() || slice_share <= 0.0 {
        return vec![fraction.max(0.0); count];
    }
    let chosen = (fraction / slice_share).min(1.0);
    (0..count)
        .map(|_| {
            if rng.random_bool(slice_share) {
                chosen
            } else {
                0.0
            }
        })
        .collect()
}

/// Either the slice is wrong, or the coordinator's own re-solve (or read) failed.
#[derive(Debug)]
pub enum CheckFailure {
    Rejected(Rejection),
    Engine(EngineError),
    Store(gops_db::store::StoreError),
}

impl From<Rejection> for CheckFailure {
    fn from(r: Rejection) -> Self {
        CheckFailure::Rejected(r)
    }
}

/// The checks of a slice that need nothing but the slice, cheap enough to run before
/// anything is loaded for it: digest, shape, canonical encoding, finite values and the
/// reported certificate gap. The decoded slice.
pub fn check_form(
    n: u8,
    objective: Objective,
    engine: &LayerEngine,
    s: &Submitted,
) -> Result<Slice, Rejection> {
    let k = engine.k();
    let rank = s.prize_rank;
    if digest_bytes(&s.bytes.body) != s.bytes.digest {
        return Err(Rejection::DigestMismatch { rank });
    }
    let slice = Slice::decode_for(n, objective, k, rank, &s.bytes.body)
        .map_err(|why| Rejection::Malformed { rank, why })?;
    if !slice.is_canonical() {
        return Err(Rejection::NonCanonical { rank });
    }
    if let Some(value) = slice.stored_values().find(|v| !v.is_finite()) {
        return Err(Rejection::NonFinite { rank, value });
    }
    let scale = 1.0 + f64::from(gops_common::CardSet::full(n).sum());
    let gap = s.bytes.max_gap;
    if !(gap.is_finite() && (0.0..=GAP_TOLERANCE * scale).contains(&gap)) {
        return Err(Rejection::GapOverTolerance { rank, gap });
    }
    let games = engine.games_bounds(rank, &slice);
    if !games.contains(&s.bytes.games) {
        return Err(Rejection::ImpossibleGames {
            rank,
            games: s.bytes.games,
            least: *games.start(),
            most: *games.end(),
        });
    }
    Ok(slice)
}

/// Checks one new slice whose form [`check_form`] passed (`slice` is its decoding): a
/// random sample of `fraction` of its states (at least one; none at 0) re-solved bit for
/// bit (a fresh seed each time: a worker cannot know which states will be checked). At
/// `fraction` 1 the slice is solved again whole, as a worker solves it, and must equal
/// the copy in values, largest gap and games. Returns the slice's number of stored values.
pub fn check_slice(
    check: &SliceCheck<'_>,
    s: &Submitted,
    slice: &Slice,
    fraction: f64,
) -> Result<u64, CheckFailure> {
    if fraction >= 1.0 {
        return check_whole_slice(check, s, slice);
    }
    check_sample(check, s, slice, fraction)
}

/// [`check_slice`] in full: the slice solved again by the engine, so the figures beside
/// the values are checked too (in `win` the reported gap and games also count the
/// engine's probes of score differences whose value is exactly ±1, which no state-by-state
/// re-solve sees).
fn check_whole_slice(
    check: &SliceCheck<'_>,
    s: &Submitted,
    slice: &Slice,
) -> Result<u64, CheckFailure> {
    let rank = s.prize_rank;
    let dependency = |prizes| &*check.below[&prize_rank(prizes)];
    let again = check
        .engine
        .solve_slice(rank, &dependency)
        .map_err(CheckFailure::Engine)?;
    if again.to_bytes().digest != s.bytes.digest {
        // name the first state that differs
        check_sample(check, s, slice, 1.0)?;
        return Err(Rejection::RecomputedDiffers { rank }.into());
    }
    if again.max_gap.to_bits() != s.bytes.max_gap.to_bits() {
        return Err(Rejection::WrongGap {
            rank,
            reported: s.bytes.max_gap,
            recomputed: again.max_gap,
        }
        .into());
    }
    if again.games != s.bytes.games {
        return Err(Rejection::WrongGames {
            rank,
            reported: s.bytes.games,
            recomputed: again.games,
        }
        .into());
    }
    Ok(slice.stored_values().count() as u64)
}

/// [`check_slice`] on a sample of the states, each re-solved on its own.
fn check_sample(
    check: &SliceCheck<'_>,
    s: &Submitted,
    slice: &Slice,
    fraction: f64,
) -> Result<u64, CheckFailure> {
    let rank = s.prize_rank;
    let gap = s.bytes.max_gap;
    let dependency = |prizes| &*check.below[&prize_rank(prizes)];
    // a fresh seed each time: a worker cannot know which states will be checked
    let mut rng = StdRng::seed_from_u64(rand::random());
    let mut solver = GameSolver::new();
    for state in sample_states(slice, fraction, &mut rng) {
        let again = resolve_state(check.engine, &mut solver, rank, slice, state, &dependency)
            .map_err(CheckFailure::Engine)?;
        let (pattern, d) = (again.pattern, again.d);
        if !again.matches() {
            return Err(Rejection::ValueMismatch {
                rank,
                pattern,
                d,
                stored: again.stored,
                resolved: again.resolved,
            }
            .into());
        }
        // the worker solved this state, so its games' gaps are in the reported maximum
        if again.was_solved(check.objective) && again.gap > gap {
            return Err(Rejection::UnderstatedGap {
                rank,
                pattern,
                d,
                reported: gap,
                found: again.gap,
            }
            .into());
        }
    }
    Ok(slice.stored_values().count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slice_has_the_fraction_unless_a_share_is_chosen() {
        let mut rng = StdRng::seed_from_u64(7);
        assert_eq!(slice_fractions(3, 0.01, 1.0, &mut rng), vec![0.01; 3]);
        assert_eq!(slice_fractions(3, 0.0, 0.5, &mut rng), vec![0.0; 3]);
        assert_eq!(slice_fractions(0, 0.01, 0.5, &mut rng), Vec::<f64>::new());
    }

    #[test]
    fn a_share_of_the_slices_carries_the_whole_fraction() {
        let mut rng = StdRng::seed_from_u64(7);
        let fractions = slice_fractions(10_000, 0.01, 0.25, &mut rng);
        let chosen = fractions.iter().filter(|&&f| f > 0.0).count();
        // a quarter of them, within seven standard deviations (43 slices)
        assert!((2_200..=2_800).contains(&chosen), "{chosen}");
        // each chosen slice has four times the fraction, so the states re-solved stay 1 %
        assert!(fractions.iter().all(|&f| f == 0.0 || f == 0.04));
        // a share below the fraction re-solves every state of the chosen slices
        let all = slice_fractions(100, 0.5, 0.1, &mut rng);
        assert!(all.iter().all(|&f| f == 0.0 || f == 1.0));
        assert!(all.contains(&1.0) && all.contains(&0.0));
    }
}
