//! A solved game answering many threads at once (the explorer's HTTP server): the value
//! of a concrete state and the game after an upcard, read from a complete db through
//! one set of bounded caches ([`SliceReads`]) and one layout per layer that all threads
//! share. The answers are those of [`crate::query::state_value`] and
//! [`crate::query::revealed_game`], bit for bit: the same values, layouts and kernel,
//! only kept between calls (large slices read only where a lookup needs).

use std::sync::{Arc, Mutex, OnceLock};

use gops_common::cards::CardSet;
use gops_common::kernel::GameSolver;
use gops_common::layout::LayerLayout;
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_common::state::GameState;
use gops_common::sync::lock;

use crate::oracle::children;
use crate::point_reads::{SliceReads, SliceSource};
use crate::query::{QueryError, RevealedGame, check_upcard, revealed_on_demand, solve_revealed};
use crate::store::Store;

pub struct SharedOracle {
    store: Store,
    /// Held only to look up or insert: a slice is read and decoded outside the lock (two
    /// threads missing the same slice both read it; the second insert replaces the first).
    slices: Mutex<SliceReads>,
    layouts: Vec<OnceLock<Arc<LayerLayout>>>,
}

impl SharedOracle {
    /// An oracle owning `store`, caching at most about `cache_bytes` of slices and tables.
    pub fn new(store: Store, cache_bytes: usize) -> SharedOracle {
        SharedOracle::reading(store, SliceReads::new(cache_bytes))
    }

    /// An oracle owning `store`, reading slices through `slices`.
    pub fn reading(store: Store, slices: SliceReads) -> SharedOracle {
        let layers = usize::from(store.n()) + 1;
        SharedOracle {
            store,
            slices: Mutex::new(slices),
            layouts: (0..layers).map(|_| OnceLock::new()).collect(),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn n(&self) -> u8 {
        self.store.n()
    }

    pub fn objective(&self) -> Objective {
        self.store.objective()
    }

    fn reads(&self) -> std::sync::MutexGuard<'_, SliceReads> {
        // a poisoned lock only means another thread panicked between two cache calls:
        // the caches are still whole
        lock(&self.slices)
    }

    /// The slice of `prizes` in layer `k`, holding at least the patterns `patterns`
    /// gives.
    fn slice(
        &self,
        k: u8,
        prizes: CardSet,
        patterns: impl FnOnce() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError> {
        let rank = prize_rank(prizes);
        let cached = self.reads().cached(k, rank);
        let source = match cached {
            Some(source) => source,
            None => {
                let min_bytes = self.reads().min_bytes();
                let source = SliceSource::load(&self.store, k, rank, min_bytes)?;
                self.reads().keep(k, rank, &source);
                source
            }
        };
        source.slice(&self.store, k, rank, patterns)
    }

    fn layout(&self, k: u8) -> Arc<LayerLayout> {
        let n = self.store.n();
        Arc::clone(self.layouts[usize::from(k)].get_or_init(|| Arc::new(LayerLayout::new(n, k))))
    }

    /// The value for A of `state` before its next prize is turned up.
    pub fn value(&self, state: &GameState) -> Result<f64, QueryError> {
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
    pub fn revealed(&self, state: &GameState, upcard: u8) -> Result<RevealedGame, QueryError> {
        let below_prizes = check_upcard(state, upcard)?;
        let k = state.k();
        if let Some(on_demand) = self.store.on_demand().filter(|o| o.answers_revealed(k)) {
            return revealed_on_demand(on_demand, self.objective(), state, upcard);
        }
        let layout = self.layout(k - 1);
        let below = self.slice(k - 1, below_prizes, || children(state, &layout))?;
        solve_revealed(
            self.objective(),
            state,
            upcard,
            &layout,
            &below,
            &mut GameSolver::with_start(self.store.pivot_start()),
        )
    }
}

// the explorer's server shares one oracle (and so one store) between its threads
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<SharedOracle>();
};
