//! The layout of one layer: its patterns in rank order, the canonical orientation that
//! antisymmetry lets us store (DESIGN §2), and the table of children each canonical
//! pattern reaches in one round, built once per layer and reused for every prize set.

use crate::pattern::{Pattern, PatternIndex};

/// An index into a layer's canonical patterns, with a flag saying the pattern at hand is
/// the mirror image (A and B exchanged) of that canonical pattern.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Oriented(pub u32);

impl Oriented {
    const MIRRORED: u32 = 1 << 31;

    pub fn new(canonical: u32, mirrored: bool) -> Oriented {
        Oriented(canonical | if mirrored { Self::MIRRORED } else { 0 })
    }

    #[inline]
    pub fn canonical(self) -> usize {
        (self.0 & !Self::MIRRORED) as usize
    }

    #[inline]
    pub fn is_mirrored(self) -> bool {
        self.0 & Self::MIRRORED != 0
    }
}

/// The patterns of layer `k` of the `n`-card game. A pattern is canonical when its rank
/// is at most that of its mirror image; only canonical patterns are stored, in rank order.
#[derive(Clone, Debug)]
pub struct LayerLayout {
    pub n: u8,
    pub k: u8,
    pub index: PatternIndex,
    /// The canonical patterns, in rank order; a slice stores values in this order.
    pub canonical: Vec<Pattern>,
    /// For every rank of the layer, where its value is stored.
    pub orientation: Vec<Oriented>,
}

impl LayerLayout {
    pub fn new(n: u8, k: u8) -> LayerLayout {
        let index = PatternIndex::new(n, k);
        let count = index.count();
        let mut canonical = Vec::with_capacity(count / 2 + 1);
        let mut orientation = vec![Oriented(u32::MAX); count];
        for rank in 0..count as u32 {
            let pattern = index.unrank(rank);
            let mirror_rank = index.rank(pattern.swapped());
            if rank <= mirror_rank {
                let slot = canonical.len() as u32;
                canonical.push(pattern);
                orientation[rank as usize] = Oriented::new(slot, false);
                if mirror_rank != rank {
                    orientation[mirror_rank as usize] = Oriented::new(slot, true);
                }
            }
        }
        LayerLayout {
            n,
            k,
            index,
            canonical,
            orientation,
        }
    }

    /// Where the value of `pattern` (a pattern of this layer) is stored.
    pub fn locate(&self, pattern: Pattern) -> Oriented {
        self.orientation[self.index.rank(pattern) as usize]
    }

    /// Number of patterns in the layer, both orientations.
    pub fn pattern_count(&self) -> usize {
        self.orientation.len()
    }

    pub fn canonical_count(&self) -> usize {
        self.canonical.len()
    }
}

/// For each canonical pattern of layer `k`, the `k x k` children (A plays its i-th card,
/// B its j-th) located in layer `k - 1`, and the sign of each bid comparison.
pub struct ChildTable {
    pub k: usize,
    /// `children[(p * k + i) * k + j]`
    pub children: Vec<Oriented>,
    /// `signs[(p * k + i) * k + j]`: +1 when A's card is higher, -1 lower, 0 equal.
    pub signs: Vec<i8>,
}

impl ChildTable {
    pub fn new(layer: &LayerLayout, below: &LayerLayout) -> ChildTable {
        assert_eq!(layer.k, below.k + 1);
        let k = layer.k as usize;
        let mut children = Vec::with_capacity(layer.canonical_count() * k * k);
        let mut signs = Vec::with_capacity(layer.canonical_count() * k * k);
        let mut positions_a = Vec::with_capacity(k);
        let mut positions_b = Vec::with_capacity(k);
        for &pattern in &layer.canonical {
            positions_a.clear();
            positions_a.extend(pattern.a_positions());
            positions_b.clear();
            positions_b.extend(pattern.b_positions());
            for &pa in &positions_a {
                for &pb in &positions_b {
                    let (child, sign) = pattern.play(pa, pb);
                    children.push(below.locate(child));
                    signs.push(sign as i8);
                }
            }
        }
        ChildTable { k, children, signs }
    }

    /// The children and signs of canonical pattern `p`, each `k * k` long.
    #[inline]
    pub fn of(&self, p: usize) -> (&[Oriented], &[i8]) {
        let kk = self.k * self.k;
        (
            &self.children[p * kk..(p + 1) * kk],
            &self.signs[p * kk..(p + 1) * kk],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orientation_covers_every_rank_once_per_side() {
        for n in 1..=8u8 {
            for k in 0..=n {
                let layout = LayerLayout::new(n, k);
                let mut uses = vec![[0u32; 2]; layout.canonical_count()];
                for (rank, o) in layout.orientation.iter().enumerate() {
                    let pattern = layout.index.unrank(rank as u32);
                    let canon = layout.canonical[o.canonical()];
                    let want = if o.is_mirrored() {
                        canon.swapped()
                    } else {
                        canon
                    };
                    assert_eq!(pattern, want);
                    uses[o.canonical()][o.is_mirrored() as usize] += 1;
                }
                for (p, u) in uses.iter().enumerate() {
                    let symmetric = layout.canonical[p] == layout.canonical[p].swapped();
                    assert_eq!(*u, if symmetric { [1, 0] } else { [1, 1] });
                }
            }
        }
    }

    #[test]
    fn six_card_game_has_1695_distinct_states() {
        // DESIGN §2: with antisymmetry and the terminal state, the 6-card game has 1,695
        // distinct states: one orientation of every pattern (the symmetric A = B pattern
        // included) for every prize set, plus the terminal state.
        let n = 6u8;
        let mut distinct = 1; // the terminal state
        for k in 1..=n {
            let layout = LayerLayout::new(n, k);
            distinct += layout.canonical_count() * crate::prizes::prize_set_count(n, k);
        }
        assert_eq!(distinct, 1695);
    }
}
