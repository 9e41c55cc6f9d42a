//! A solved game as an oracle for `play`, `simulate` and `exploit`: the value of any
//! concrete state and the optimal strategies once a prize is revealed, read from a
//! complete db through bounded caches ([`SliceReads`]: small slices whole, large ones
//! only where a lookup needs) and one layout per layer.

use std::sync::Arc;

use gops_common::cards::CardSet;
use gops_common::kernel::GameSolver;
use gops_common::layout::{LayerLayout, full_game};
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_common::state::GameState;

use crate::point_reads::SliceReads;
use crate::query::{QueryError, RevealedGame, check_upcard, revealed_on_demand, solve_revealed};
use crate::store::Store;

pub struct Oracle<'s> {
    store: &'s Store,
    slices: SliceReads,
    layouts: Vec<Option<Arc<LayerLayout>>>,
    solver: GameSolver,
    /// The last revealed game asked for: both players of a simulated round ask for the
    /// same one, which is then solved once.
    last: Option<(RevealedKey, RevealedGame)>,
}

/// A concrete state and its upcard: (A, B, prizes, d, upcard).
type RevealedKey = (CardSet, CardSet, CardSet, i32, u8);

impl<'s> Oracle<'s> {
    /// An oracle over `store`, caching at most about `cache_bytes` of slices and tables.
    pub fn new(store: &'s Store, cache_bytes: usize) -> Oracle<'s> {
        Oracle::reading(store, SliceReads::new(cache_bytes))
    }

    /// An oracle over `store` reading slices through `slices`.
    pub fn reading(store: &'s Store, slices: SliceReads) -> Oracle<'s> {
        Oracle {
            store,
            slices,
            layouts: vec![None; usize::from(store.n()) + 1],
            solver: GameSolver::with_start(store.pivot_start()),
            last: None,
        }
    }

    pub fn n(&self) -> u8 {
        self.store.n()
    }

    pub fn objective(&self) -> Objective {
        self.store.objective()
    }

    /// The slice of `prizes` in layer `k`, holding at least the patterns `patterns`
    /// gives.
    fn slice(
        &mut self,
        k: u8,
        prizes: CardSet,
        patterns: impl FnOnce() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError> {
        self.slices
            .slice(self.store, k, prize_rank(prizes), patterns)
    }

    fn layout(&mut self, k: u8) -> Arc<LayerLayout> {
        let n = self.store.n();
        Arc::clone(
            self.layouts[usize::from(k)].get_or_insert_with(|| Arc::new(LayerLayout::new(n, k))),
        )
    }

    /// The value for A of `state` before its next prize is turned up.
    pub fn value(&mut self, state: &GameState) -> Result<f64, QueryError> {
        state.check_reachable(self.objective())?;
        let k = state.k();
        if let Some(on_demand) = self.store.on_demand().filter(|o| o.answers_value(k)) {
            return Ok(on_demand.value(state)?);
        }
        let layout = self.layout(k);
        let slice = self.slice(k, state.prizes, || vec![state.locate(&layout).canonical()])?;
        Ok(state.value_in(self.objective(), &layout, &slice))
    }

    /// The game of `state` once `upcard` is turned up: value, both strategies, certificate.
    pub fn revealed(&mut self, state: &GameState, upcard: u8) -> Result<RevealedGame, QueryError> {
        let key = (state.a, state.b, state.prizes, state.diff, upcard);
        if let Some((_, game)) = self.last.as_ref().filter(|(last, _)| *last == key) {
            return Ok(game.clone());
        }
        let below_prizes = check_upcard(state, upcard)?;
        let k = state.k();
        if let Some(on_demand) = self.store.on_demand().filter(|o| o.answers_revealed(k)) {
            return revealed_on_demand(on_demand, self.objective(), state, upcard);
        }
        let layout = self.layout(k - 1);
        let below = self.slice(k - 1, below_prizes, || children(state, &layout))?;
        let game = solve_revealed(
            self.objective(),
            state,
            upcard,
            &layout,
            &below,
            &mut self.solver,
        )?;
        self.last = Some((key, game.clone()));
        Ok(game)
    }
}

/// The canonical patterns of the layer below that `state`'s game after an upcard reads
/// (the same whatever the upcard).
pub(crate) fn children(state: &GameState, below: &LayerLayout) -> Vec<usize> {
    let (children, _) = full_game(state.pattern(), below);
    children.iter().map(|c| c.canonical()).collect()
}
