//! One state's subtree solved on its own, from the last round up: what a reader of a
//! book (a db that keeps only its game's top layers) computes for a state below the
//! book's lowest layer, so that every value and strategy is the one the whole game's db
//! holds, bit for bit.
//!
//! The subtree of a state `(A, B, C, d)` with k cards left holds, at each layer j < k,
//! the prize sets of j cards within `C`, and of each only the canonical patterns that
//! the state's pattern reaches in k - j rounds ([`LayerLayout::restricted`]); for `win`,
//! only the score differences that `d` reaches ([`Reach::within_subtree`]). Each layer
//! is computed by the same [`LayerEngine`] and kernel as a whole solve: a state's value
//! depends only on its children's values, which the subtree holds, so the bits are
//! those of the whole game's slices at every state the subtree holds.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::cache::Weigh;
use crate::cards::CardSet;
use crate::engine::{EngineError, LayerEngine, terminal_slice};
use crate::kernel::PivotStart;
use crate::layout::{LayerLayout, Layouts};
use crate::objective::Objective;
use crate::prizes::prize_rank;
use crate::reach::Reach;
use crate::slice::Slice;
use crate::state::GameState;

/// The state a subtree hangs from, in its canonical orientation: its prizes, its
/// canonical pattern in the whole layer, and its score difference as that pattern sees
/// it (0 for `points`). With `upcard`, the subtree is that of the root's game after the
/// upcard alone: the states its rounds lead to once `upcard` is turned up, not the
/// root's own value (what the game of a book's lowest stored state reads, about 1/k of
/// the whole subtree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SubtreeRoot {
    pub prizes: CardSet,
    pub pattern: usize,
    pub diff: i32,
    pub upcard: Option<u8>,
}

impl SubtreeRoot {
    /// The root of `state`'s subtree, located in its whole layer `layout`.
    pub fn of(state: &GameState, objective: Objective, layout: &LayerLayout) -> SubtreeRoot {
        let at = state.locate(layout);
        SubtreeRoot {
            prizes: state.prizes,
            pattern: at.canonical(),
            diff: at.orient_diff(state.effective_diff(objective)).abs(),
            upcard: None,
        }
    }

    /// The subtree of this root's game after `upcard` (one of its prizes) alone.
    pub fn after(self, upcard: u8) -> SubtreeRoot {
        debug_assert!(self.prizes.contains(upcard));
        SubtreeRoot {
            upcard: Some(upcard),
            ..self
        }
    }

    /// Cards left per hand.
    pub fn k(&self) -> u8 {
        self.prizes.len() as u8
    }

    /// The highest layer whose values the subtree solves: the root's, or with an upcard
    /// the layer below it.
    fn top(&self) -> u8 {
        self.k() - u8::from(self.upcard.is_some())
    }

    /// The prizes of the layers below the root: all of the root's, or without the
    /// upcard.
    fn prizes_below(&self) -> CardSet {
        match self.upcard {
            Some(u) => self.prizes.without(u),
            None => self.prizes,
        }
    }
}

/// What solving a subtree costs at most, known before any game is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubtreeEstimate {
    /// States (canonical pattern, prize set and, for `win`, score difference) to solve,
    /// at most: `win` states whose value the children's windows settle at ±1 take no game.
    pub states: u64,
    /// Matrix games, at most (k per state of layer k).
    pub games: u64,
    /// Bytes of the solved values kept, at most.
    pub bytes: u64,
}

/// Which states a subtree holds: its root, and by layer j = 0..=k the patterns the
/// root reaches (a restricted layout).
pub struct SubtreeShape {
    pub objective: Objective,
    pub root: SubtreeRoot,
    layouts: Vec<Arc<LayerLayout>>,
}

impl SubtreeShape {
    /// Whether the subtree holds `state` (a state of its game, at a score difference the
    /// game can reach): the root or a state the root's play leads to.
    pub fn holds(&self, state: &GameState) -> bool {
        let j = usize::from(state.k());
        let within = if state.k() == self.root.k() {
            self.root.prizes
        } else {
            self.root.prizes_below()
        };
        if j > usize::from(self.root.top()) || state.prizes.0 & !within.0 != 0 {
            return false;
        }
        if self.layouts[j].try_locate(state.pattern()).is_none() {
            return false;
        }
        match self.objective {
            Objective::Points => true,
            Objective::Win => {
                // beyond the live range every value is exactly ±1, wherever it came from
                state.diff.unsigned_abs() > state.prizes.sum()
                    || Reach::within_subtree(self.root.prizes, self.root.diff, state.prizes)
                        .contains_diff(state.diff)
            }
        }
    }

    /// Whether the subtree holds every state the game of `state` after `upcard` reads:
    /// it holds `state`, or it is the subtree of exactly that game.
    pub fn holds_game_after(&self, state: &GameState, upcard: u8) -> bool {
        if self.holds(state) {
            return true;
        }
        let root = &self.root;
        if root.upcard != Some(upcard) || state.prizes != root.prizes {
            return false;
        }
        // the root's layer is laid out over the root's pattern alone
        match self.layouts[usize::from(root.k())].try_locate(state.pattern()) {
            None => false,
            Some(at) => at.orient_diff(state.effective_diff(self.objective)).abs() == root.diff,
        }
    }

    /// The restricted layout of layer `j`.
    pub fn layout(&self, j: u8) -> &LayerLayout {
        &self.layouts[usize::from(j)]
    }
}

/// A subtree laid out, not solved yet: its shape and what it costs.
pub struct SubtreePlan {
    pub start: PivotStart,
    pub shape: Arc<SubtreeShape>,
    /// By layer j: the prize sets of j cards within the root's, each with its share of
    /// the estimate's games.
    prize_sets: Vec<Vec<(CardSet, u64)>>,
    pub estimate: SubtreeEstimate,
}

/// The subsets of `set`, by size: `out[j]` holds those of j cards, ascending.
fn subsets_by_size(set: CardSet) -> Vec<Vec<CardSet>> {
    let mut out = vec![Vec::new(); set.len() + 1];
    let mut sub = 0u32;
    loop {
        out[sub.count_ones() as usize].push(CardSet(sub));
        if sub == set.0 {
            break;
        }
        // the next subset of `set` in increasing order
        sub = (sub.wrapping_sub(set.0)) & set.0;
    }
    out
}

impl SubtreePlan {
    /// The subtree of `root` in the game `layouts` lays out, computed with the kernel
    /// started as `start` says (the db's arithmetic).
    pub fn new(
        objective: Objective,
        start: PivotStart,
        root: SubtreeRoot,
        layouts: &Layouts,
    ) -> SubtreePlan {
        let k = root.k();
        // the canonical patterns of each layer that the root reaches, layer by layer down
        let mut reached: Vec<Vec<usize>> = vec![Vec::new(); usize::from(k) + 1];
        reached[usize::from(k)] = vec![root.pattern];
        for j in (1..=k).rev() {
            let (layer, below) = (layouts.get(j), layouts.get(j - 1));
            let mut seen = vec![false; below.canonical_count()];
            for &p in &reached[usize::from(j)] {
                let pattern = layer.canonical[p];
                let positions_b: Vec<u32> = pattern.b_positions().collect();
                for pa in pattern.a_positions() {
                    for &pb in &positions_b {
                        seen[below.locate(pattern.play(pa, pb).0).canonical()] = true;
                    }
                }
            }
            reached[usize::from(j) - 1] = (0..seen.len()).filter(|&q| seen[q]).collect();
        }
        let restricted: Vec<Arc<LayerLayout>> = (0..=k)
            .map(|j| Arc::new(layouts.get(j).restricted(&reached[usize::from(j)])))
            .collect();
        let mut estimate = SubtreeEstimate::default();
        let mut prize_sets = vec![Vec::new()];
        for (j, sets) in subsets_by_size(root.prizes_below())
            .into_iter()
            .enumerate()
            .skip(1)
        {
            let patterns = restricted[j].canonical_count() as u64;
            let sized: Vec<(CardSet, u64)> = sets
                .into_iter()
                .map(|prizes| {
                    let diffs = match objective {
                        Objective::Points => 1,
                        // the first layer's windows are found by bisection, which may
                        // probe any score difference of the live range
                        Objective::Win if j == 1 => objective.slice_width(prizes) as u64,
                        Objective::Win => {
                            Reach::within_subtree(root.prizes, root.diff, prizes).count() as u64
                        }
                    };
                    let states = patterns * diffs;
                    estimate.states += states;
                    estimate.games += states * j as u64;
                    // the values and a window per pattern
                    estimate.bytes += 8 * states + 8 * patterns + 64;
                    (prizes, states * j as u64)
                })
                .collect();
            prize_sets.push(sized);
        }
        SubtreePlan {
            start,
            shape: Arc::new(SubtreeShape {
                objective,
                root,
                layouts: restricted,
            }),
            prize_sets,
            estimate,
        }
    }

    /// Solves the subtree, layer after layer from the last round up, the prize sets of
    /// a layer in parallel on the current rayon pool. `progress` hears the estimate's
    /// games done so far and in all, after each prize set.
    pub fn solve(
        &self,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<SolvedSubtree, EngineError> {
        let shape = &self.shape;
        let k = shape.root.top();
        let mut slices: Vec<HashMap<u32, Slice>> = vec![HashMap::from([(0, terminal_slice())])];
        let done = AtomicU64::new(0);
        let (mut max_gap, mut games) = (0.0f64, 0u64);
        for j in 1..=k {
            let (layout, below) = (shape.layout(j).clone(), shape.layout(j - 1).clone());
            let root = (shape.root.prizes, shape.root.diff);
            let engine = LayerEngine::within_subtree(shape.objective, layout, below, root)
                .with_start(self.start);
            let previous = &slices[usize::from(j) - 1];
            let dependency = |prizes: CardSet| &previous[&prize_rank(prizes)];
            let solved = self.prize_sets[usize::from(j)]
                .par_iter()
                .map(|&(prizes, share)| {
                    let solved = engine.solve_slice(prize_rank(prizes), &dependency)?;
                    let so_far = done.fetch_add(share, Ordering::Relaxed) + share;
                    progress(so_far, self.estimate.games);
                    Ok(solved)
                })
                .collect::<Result<Vec<_>, EngineError>>()?;
            let mut layer = HashMap::with_capacity(solved.len());
            for s in solved {
                max_gap = max_gap.max(s.max_gap);
                games += s.games;
                layer.insert(s.prize_rank, s.slice);
            }
            slices.push(layer);
        }
        let bytes = slices
            .iter()
            .flat_map(HashMap::values)
            .map(Weigh::weight)
            .sum::<usize>()
            + shape
                .layouts
                .iter()
                .map(|l| 4 * l.orientation.len() + 4 * l.canonical.len())
                .sum::<usize>();
        Ok(SolvedSubtree {
            shape: Arc::clone(shape),
            slices,
            max_gap,
            games,
            bytes,
        })
    }
}

/// A solved subtree: the values of every state it holds, and the slices below them
/// that the games after an upcard read.
pub struct SolvedSubtree {
    pub shape: Arc<SubtreeShape>,
    /// By layer, prize rank -> slice over the layer's restricted layout.
    slices: Vec<HashMap<u32, Slice>>,
    /// The largest certificate gap of its games.
    pub max_gap: f64,
    /// Matrix games solved.
    pub games: u64,
    /// Bytes kept in memory.
    pub bytes: usize,
}

impl SolvedSubtree {
    /// Whether the subtree holds `state` ([`SubtreeShape::holds`]).
    pub fn holds(&self, state: &GameState) -> bool {
        self.shape.holds(state)
    }

    /// The value of `state`, if the subtree holds it.
    pub fn value(&self, state: &GameState) -> Option<f64> {
        if !self.holds(state) {
            return None;
        }
        let (layout, slice) = self.slice(state.k(), state.prizes)?;
        Some(state.value_in(self.shape.objective, layout, slice))
    }

    /// The layout and slice of `prizes` in layer `k`, over the patterns the root reaches.
    pub fn slice(&self, k: u8, prizes: CardSet) -> Option<(&LayerLayout, &Slice)> {
        let slice = self.slices.get(usize::from(k))?.get(&prize_rank(prizes))?;
        Some((self.shape.layout(k), slice))
    }

    /// What the game of `state` after `upcard` reads: the layout and slice of the prizes
    /// left in the layer below, if the subtree holds `state` and `upcard` is one of its
    /// prizes.
    pub fn below(&self, state: &GameState, upcard: u8) -> Option<(&LayerLayout, &Slice)> {
        if state.k() == 0
            || !state.prizes.contains(upcard)
            || !self.shape.holds_game_after(state, upcard)
        {
            return None;
        }
        self.slice(state.k() - 1, state.prizes.without(upcard))
    }
}

#[cfg(test)]
mod tests;
