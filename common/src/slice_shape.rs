//! The shape of one slice of a game (its patterns, score range, dense or windowed form,
//! and the score differences it stores), which follows from the game, the layer and the
//! prize set alone: what a stored body is decoded with, whole ([`crate::slice`]) or in
//! part ([`crate::slice_table`]).

use crate::binomial::binomial;
use crate::objective::Objective;
use crate::pattern::PatternIndex;
use crate::prizes::prize_unrank;
use crate::reach::Reach;

/// The shape of one slice of a game, which follows from the game, the layer and the
/// prize set: what [`Slice::decode_for`] decodes a body with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceShape {
    pub objective: Objective,
    pub diff_range: i32,
    /// Canonical patterns.
    pub patterns: usize,
    /// Windowed (`win`) or dense (`points`).
    pub windowed: bool,
    /// The score differences a `win` slice stores values for.
    pub reach: Option<Reach>,
}

impl SliceShape {
    /// The shape of slice `rank` of layer `k` of the `n`-card game.
    pub fn of(n: u8, objective: Objective, k: u8, rank: u32) -> Result<SliceShape, String> {
        if k == 0 || k > n || u64::from(rank) >= binomial(n.into(), k.into()) {
            return Err(format!(
                "layer {k} has no slice {rank} in the {n}-card game"
            ));
        }
        let prizes = prize_unrank(rank, k);
        let (windowed, reach) = match objective {
            Objective::Points => (false, None),
            Objective::Win => (true, Some(Reach::of(n, prizes))),
        };
        Ok(SliceShape {
            objective,
            diff_range: objective.diff_range(prizes),
            patterns: PatternIndex::new(n, k).count().div_ceil(2),
            windowed,
            reach,
        })
    }

    /// Positions (score differences) per pattern.
    pub fn width(&self) -> usize {
        2 * self.diff_range as usize + 1
    }

    /// Bytes at the start of a body that [`SliceTable::new`] reads: the window table of a
    /// windowed slice (`lo` and `len`, u16 LE, per pattern), nothing of a dense one.
    pub fn table_bytes(&self) -> usize {
        if self.windowed { 4 * self.patterns } else { 0 }
    }

    pub(crate) fn reachable(&self, pos: usize) -> bool {
        self.reach.is_none_or(|r| r.contains(pos))
    }
}
