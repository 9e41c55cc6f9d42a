//! The layout of one layer: its patterns in rank order, the canonical orientation that
//! antisymmetry lets us store (DESIGN §2), and the table of children each canonical
//! pattern reaches in one round, built once per layer and reused for every prize set.

use std::sync::{Arc, OnceLock};

use crate::pattern::{Pattern, PatternIndex};

/// An index into a layer's canonical patterns, with a flag saying the pattern at hand is
/// the mirror image (A and B exchanged) of that canonical pattern.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Oriented(pub u32);

impl Oriented {
    const MIRRORED: u32 = 1 << 31;
    /// In a [`LayerLayout::restricted`] layout: a pattern the layout leaves out.
    pub const ABSENT: Oriented = Oriented(u32::MAX);

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

    /// `v` as seen from this orientation: negated when mirrored (antisymmetry), by
    /// flipping the sign bit, which is what `-1.0 * v` gives, without a branch (which
    /// way a child is oriented is as good as random to a branch predictor).
    #[inline]
    pub fn orient(self, v: f64) -> f64 {
        f64::from_bits(v.to_bits() ^ (u64::from(self.0 & Self::MIRRORED) << 32))
    }

    /// The score difference `d` as seen from this orientation: `-d` when mirrored, without
    /// a branch.
    #[inline]
    pub fn orient_diff(self, d: i32) -> i32 {
        let flip = (self.0 >> 31) as i32;
        (d ^ -flip) + flip
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

    /// Where the value of `pattern` is stored, if this layout holds it (a
    /// [`LayerLayout::restricted`] layout leaves patterns out).
    pub fn try_locate(&self, pattern: Pattern) -> Option<Oriented> {
        if pattern.cards_per_hand() != u32::from(self.k) || pattern.len() > u32::from(self.n) {
            return None;
        }
        Some(self.locate(pattern)).filter(|&o| o != Oriented::ABSENT)
    }

    /// This layout with only the canonical patterns `keep` (indices of this layout,
    /// ascending, no repeats), renumbered in the same order: the layout of a subtree
    /// whose slices hold those patterns alone. The patterns left out locate as
    /// [`Oriented::ABSENT`].
    pub fn restricted(&self, keep: &[usize]) -> LayerLayout {
        debug_assert!(keep.windows(2).all(|w| w[0] < w[1]));
        let mut renumbered = vec![u32::MAX; self.canonical.len()];
        for (slot, &p) in keep.iter().enumerate() {
            renumbered[p] = slot as u32;
        }
        let orientation = self
            .orientation
            .iter()
            .map(|o| match renumbered[o.canonical()] {
                u32::MAX => Oriented::ABSENT,
                slot => Oriented::new(slot, o.is_mirrored()),
            })
            .collect();
        LayerLayout {
            n: self.n,
            k: self.k,
            index: self.index.clone(),
            canonical: keep.iter().map(|&p| self.canonical[p]).collect(),
            orientation,
        }
    }

    /// Number of patterns in the layer, both orientations.
    pub fn pattern_count(&self) -> usize {
        self.orientation.len()
    }

    pub fn canonical_count(&self) -> usize {
        self.canonical.len()
    }
}

/// The whole layers' layouts of one game, each made when first asked for and kept: what
/// the read side locates states in, shared by its threads.
pub struct Layouts {
    n: u8,
    layers: Vec<OnceLock<Arc<LayerLayout>>>,
}

impl Layouts {
    pub fn new(n: u8) -> Layouts {
        Layouts {
            n,
            layers: (0..=n).map(|_| OnceLock::new()).collect(),
        }
    }

    pub fn n(&self) -> u8 {
        self.n
    }

    /// The layout of layer `k <= n`.
    pub fn get(&self, k: u8) -> Arc<LayerLayout> {
        let n = self.n;
        Arc::clone(self.layers[usize::from(k)].get_or_init(|| Arc::new(LayerLayout::new(n, k))))
    }
}

/// The full `k x k` game of a pattern (no moves collapsed): the child each pair of bids
/// leads to, located in the layer below, and the sign of the comparison, row-major with
/// A's cards ascending down the rows and B's along the columns.
pub fn full_game(pattern: Pattern, below: &LayerLayout) -> (Vec<Oriented>, Vec<i8>) {
    let positions_b: Vec<u32> = pattern.b_positions().collect();
    let mut children = Vec::new();
    let mut signs = Vec::new();
    for pa in pattern.a_positions() {
        for &pb in &positions_b {
            let (child, sign) = pattern.play(pa, pb);
            children.push(below.locate(child));
            signs.push(sign as i8);
        }
    }
    (children, signs)
}

/// For each canonical pattern of layer `k`, its matrix game's rows and columns with the
/// children they lead to (located in layer `k - 1`) and the sign of each bid comparison.
///
/// Two of A's cards that are adjacent in the merged order and held by A alone are the
/// same move: they compare alike with every card of B and leave the same pattern. Such
/// runs are one row (likewise B's runs one column), so the games are smaller and never
/// have these repeated rows and columns. The value of the game does not change.
pub struct ChildTable {
    pub k: usize,
    /// Per canonical pattern: where its entries start, its rows and its columns.
    shapes: Vec<(u32, u8, u8)>,
    /// Row-major `rows x cols` entries of each pattern, one after another.
    pub children: Vec<Oriented>,
    /// +1 when A's card is higher, -1 lower, 0 equal; same layout as `children`.
    pub signs: Vec<i8>,
}

/// The first card of each run of cards one player holds alone, adjacent in the merged
/// order: the distinct moves of that player.
fn distinct_moves(pattern: Pattern, positions: &[u32], alone: u32) -> Vec<u32> {
    let mut moves: Vec<u32> = Vec::with_capacity(positions.len());
    for (i, &p) in positions.iter().enumerate() {
        let repeats = i > 0
            && p == positions[i - 1] + 1
            && pattern.letter(p) == alone
            && pattern.letter(positions[i - 1]) == alone;
        if !repeats {
            moves.push(p);
        }
    }
    moves
}

impl ChildTable {
    pub fn new(layer: &LayerLayout, below: &LayerLayout) -> ChildTable {
        assert_eq!(layer.k, below.k + 1);
        let k = layer.k as usize;
        let mut shapes = Vec::with_capacity(layer.canonical_count());
        let mut children = Vec::with_capacity(layer.canonical_count() * k * k);
        let mut signs = Vec::with_capacity(layer.canonical_count() * k * k);
        for &pattern in &layer.canonical {
            let positions_a: Vec<u32> = pattern.a_positions().collect();
            let positions_b: Vec<u32> = pattern.b_positions().collect();
            let rows = distinct_moves(pattern, &positions_a, 1);
            let cols = distinct_moves(pattern, &positions_b, 2);
            shapes.push((children.len() as u32, rows.len() as u8, cols.len() as u8));
            for &pa in &rows {
                for &pb in &cols {
                    let (child, sign) = pattern.play(pa, pb);
                    let located = below.locate(child);
                    // a restricted layer must hold every child of the layer above it
                    assert_ne!(
                        located,
                        Oriented::ABSENT,
                        "a child left out of the layer below"
                    );
                    children.push(located);
                    signs.push(sign as i8);
                }
            }
        }
        ChildTable {
            k,
            shapes,
            children,
            signs,
        }
    }

    /// The rows, columns, children and signs of canonical pattern `p`'s game.
    #[inline]
    pub fn of(&self, p: usize) -> (usize, usize, &[Oriented], &[i8]) {
        let (start, rows, cols) = self.shapes[p];
        let (start, rows, cols) = (start as usize, rows as usize, cols as usize);
        let end = start + rows * cols;
        (
            rows,
            cols,
            &self.children[start..end],
            &self.signs[start..end],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::neg_multiply)] // the product is what the fill computed before
    fn orienting_negates_exactly_as_a_multiplication_by_minus_one() {
        let values = [0.0, -0.0, 1.5, -2.25, 1e-300, -7e300, f64::MIN_POSITIVE];
        for canonical in [0, 1, 12345, (1 << 31) - 1] {
            let (kept, mirrored) = (
                Oriented::new(canonical, false),
                Oriented::new(canonical, true),
            );
            for v in values {
                assert_eq!(kept.orient(v).to_bits(), v.to_bits());
                assert_eq!(mirrored.orient(v).to_bits(), (-1.0 * v).to_bits());
            }
            for d in [0, 1, -1, 91, -136, i32::MAX] {
                assert_eq!(kept.orient_diff(d), d);
                assert_eq!(mirrored.orient_diff(d), -d);
            }
        }
    }

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

    /// Collapsing runs changes no entry: every entry of the full game equals the reduced
    /// game's entry at the representatives of its row's and column's runs (found here by
    /// walking back over adjacent cards held alone), for every pattern up to 9 cards.
    #[test]
    fn collapsed_moves_are_exact_repeats() {
        let representative = |pattern: Pattern, positions: &[u32], i: usize, alone: u32| {
            let mut r = i;
            while r > 0
                && positions[r] == positions[r - 1] + 1
                && pattern.letter(positions[r]) == alone
                && pattern.letter(positions[r - 1]) == alone
            {
                r -= 1;
            }
            r
        };
        let mut collapsed = 0;
        for n in 2..=9u8 {
            for k in 1..=n {
                let (layer, below) = (LayerLayout::new(n, k), LayerLayout::new(n, k - 1));
                let table = ChildTable::new(&layer, &below);
                for (p, &pattern) in layer.canonical.iter().enumerate() {
                    let (rows, cols, children, signs) = table.of(p);
                    let pa: Vec<u32> = pattern.a_positions().collect();
                    let pb: Vec<u32> = pattern.b_positions().collect();
                    let reps_a: Vec<usize> = (0..pa.len())
                        .map(|i| representative(pattern, &pa, i, 1))
                        .collect();
                    let reps_b: Vec<usize> = (0..pb.len())
                        .map(|j| representative(pattern, &pb, j, 2))
                        .collect();
                    let mut distinct_a = reps_a.clone();
                    distinct_a.dedup();
                    let mut distinct_b = reps_b.clone();
                    distinct_b.dedup();
                    assert_eq!((rows, cols), (distinct_a.len(), distinct_b.len()));
                    collapsed += usize::from(rows < pa.len() || cols < pb.len());
                    for i in 0..pa.len() {
                        for j in 0..pb.len() {
                            let (child, sign) = pattern.play(pa[i], pb[j]);
                            let r = distinct_a.iter().position(|&x| x == reps_a[i]).unwrap();
                            let c = distinct_b.iter().position(|&x| x == reps_b[j]).unwrap();
                            assert_eq!(
                                children[r * cols + c],
                                below.locate(child),
                                "n={n} k={k} p={p}"
                            );
                            assert_eq!(i32::from(signs[r * cols + c]), sign);
                        }
                    }
                }
            }
        }
        assert!(
            collapsed > 1000,
            "runs are common: {collapsed} patterns collapse"
        );
    }
}
