//! Answers about a solved game, read from the store: a state's value and the optimal
//! strategies of the game after an upcard is revealed (re-derived from the layer below,
//! DESIGN §4); and the one place that reads a state from text and writes these answers
//! as JSON, for `gops value`/`gops strategy` and the explorer's HTTP API alike.

use gops_common::cards::{CardSet, InputError, parse_cards};
use gops_common::engine::terminal_slice;
use gops_common::kernel::{GameSolver, GameStatus};
use gops_common::layout::LayerLayout;
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_common::state::GameState;
use serde::Serialize;
use serde_json::{Value, json};

use crate::on_demand::{OnDemand, OnDemandError};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "layer {k} ({k} {} left) is not solved yet in this database: run `gops solve` to finish it, or wait for the run solving it (a layer can be read once it is complete)",
        cards(.k)
    )]
    NotSolved { k: u8 },
    #[error(
        "layer {k} is not stored in this book (it keeps layers {from} and above; a state below them is solved on demand when asked for): read the layers it keeps, or a full db"
    )]
    NotInBook { k: u8, from: u8 },
    #[error("the matrix game could not be certified (gap {gap:e})")]
    Uncertified { gap: f64 },
    #[error(transparent)]
    OnDemand(#[from] OnDemandError),
}

/// "card" or "cards", for `k` of them.
fn cards(k: &u8) -> &'static str {
    if *k == 1 { "card" } else { "cards" }
}

impl QueryError {
    pub fn is_usage(&self) -> bool {
        match self {
            QueryError::Input(_) => true,
            QueryError::Store(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// The slice of `rank` in layer `k`, if that layer is complete (layer 0: the terminal
/// slice).
pub fn complete_slice(store: &Store, k: u8, rank: u32) -> Result<Slice, QueryError> {
    if k == 0 {
        return Ok(terminal_slice());
    }
    check_stored(store, k)?;
    Ok(store.require_slice(k, rank)?.slice)
}

/// Whether layer `k >= 1` of `store` can be read from its slices: not below a book's
/// layers (those are solved on demand, state by state), and complete.
pub fn check_stored(store: &Store, k: u8) -> Result<(), QueryError> {
    if let Some(book) = store.book().filter(|b| k < b.from_layer) {
        return Err(QueryError::NotInBook {
            k,
            from: book.from_layer,
        });
    }
    if store.layer(k)?.is_none() {
        return Err(QueryError::NotSolved { k });
    }
    Ok(())
}

/// The value for A of a state, before the next prize is turned up.
pub fn state_value(store: &Store, state: &GameState) -> Result<f64, QueryError> {
    let k = state.k();
    let objective = store.objective();
    state.check_reachable(objective)?;
    if let Some(on_demand) = store.on_demand().filter(|o| o.answers_value(k)) {
        return Ok(on_demand.value(state)?);
    }
    let slice = complete_slice(store, k, state.prize_rank())?;
    let layout = LayerLayout::new(store.n(), k);
    Ok(state.value_in(objective, &layout, &slice))
}

/// The game after `upcard` is revealed: its value, both strategies and the certificate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RevealedGame {
    pub value: f64,
    /// Probability of each of A's cards, ascending.
    pub strategy_a: Vec<f64>,
    /// Probability of each of B's cards, ascending.
    pub strategy_b: Vec<f64>,
    pub gap: f64,
    /// The game's payoff matrix for A (row-major, k x k, rows A's cards ascending,
    /// columns B's): what a decision's loss is measured with (`gops arena`).
    #[serde(skip)]
    pub matrix: Vec<f64>,
}

pub fn revealed_game(
    store: &Store,
    state: &GameState,
    upcard: u8,
) -> Result<RevealedGame, QueryError> {
    let below_prizes = check_upcard(state, upcard)?;
    let k = state.k();
    if let Some(on_demand) = store.on_demand().filter(|o| o.answers_revealed(k)) {
        return revealed_on_demand(on_demand, store.objective(), state, upcard);
    }
    let below = complete_slice(store, k - 1, prize_rank(below_prizes))?;
    let layout = LayerLayout::new(store.n(), k - 1);
    solve_revealed(
        store.objective(),
        state,
        upcard,
        &layout,
        &below,
        &mut GameSolver::with_start(store.pivot_start()),
    )
}

/// The game of `state` after `upcard` (checked by the caller), from the subtree a
/// book's [`OnDemand`] solves for it.
pub fn revealed_on_demand(
    on_demand: &OnDemand,
    objective: Objective,
    state: &GameState,
    upcard: u8,
) -> Result<RevealedGame, QueryError> {
    state.check_reachable(objective)?;
    check_upcard(state, upcard)?;
    let subtree = on_demand.subtree_after(state, upcard)?;
    let (layout, below) = subtree
        .below(state, upcard)
        .expect("the subtree holds the game after the upcard, one of the state's prizes");
    solve_revealed(
        objective,
        state,
        upcard,
        layout,
        below,
        &mut GameSolver::with_start(on_demand.pivot_start()),
    )
}

/// The prizes left once `upcard` is turned up, if it is one of the state's prizes.
pub fn check_upcard(state: &GameState, upcard: u8) -> Result<CardSet, QueryError> {
    if state.k() == 0 {
        return Err(InputError::NoPrizesLeft.into());
    }
    if !state.prizes.contains(upcard) {
        return Err(InputError::UpcardNotInPrizes {
            upcard: i64::from(upcard),
            prizes: state.prizes,
        }
        .into());
    }
    Ok(state.prizes.without(upcard))
}

/// Solves the game of `state` after `upcard`, given the slice of the remaining prizes in
/// the layer below (laid out by `below_layout`).
pub fn solve_revealed(
    objective: Objective,
    state: &GameState,
    upcard: u8,
    below_layout: &LayerLayout,
    below: &Slice,
    solver: &mut GameSolver,
) -> Result<RevealedGame, QueryError> {
    let matrix = state.matrix_after(objective, upcard, below_layout, below)?;
    let size = state.k() as usize;
    let outcome = solver.solve(&matrix, size, size);
    if outcome.status == GameStatus::Uncertified {
        return Err(QueryError::Uncertified { gap: outcome.gap });
    }
    Ok(RevealedGame {
        value: outcome.value,
        strategy_a: solver.strategy_a().to_vec(),
        strategy_b: solver.strategy_b().to_vec(),
        gap: outcome.gap,
        matrix,
    })
}

/// A state as text, the way the command line and the explorer's API take it: three
/// comma-separated card lists (`None`: all N cards, the start of the game) and A's score
/// minus B's so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct StateText<'t> {
    pub a: Option<&'t str>,
    pub b: Option<&'t str>,
    pub prizes: Option<&'t str>,
    pub diff: i64,
}

impl StateText<'_> {
    /// The state of the `n`-card game; `names` label A's hand, B's hand and the prizes
    /// in error messages (`--a`, or `a`).
    pub fn parse(&self, n: u8, names: [&str; 3]) -> Result<GameState, InputError> {
        let cards = |text: Option<&str>, what: &str| match text {
            Some(t) => parse_cards(t, n, what),
            None => Ok(CardSet::full(n)),
        };
        GameState::new(
            n,
            cards(self.a, names[0])?,
            cards(self.b, names[1])?,
            cards(self.prizes, names[2])?,
            self.diff,
        )
    }
}

/// `upcard` as a card of `state`'s prizes.
pub fn parse_upcard(state: &GameState, upcard: i64) -> Result<u8, InputError> {
    u8::try_from(upcard)
        .ok()
        .filter(|&c| state.prizes.contains(c))
        .ok_or(InputError::UpcardNotInPrizes {
            upcard,
            prizes: state.prizes,
        })
}

/// The answer of `gops value --json`: `{"n","objective","a","b","prizes","diff","value"}`.
pub fn value_json(objective: Objective, state: &GameState, value: f64) -> Value {
    json!({
        "n": state.n,
        "objective": objective.name(),
        "a": state.a.to_vec(),
        "b": state.b.to_vec(),
        "prizes": state.prizes.to_vec(),
        "diff": state.diff,
        "value": value,
    })
}

/// The answer of `gops strategy --json`: [`value_json`] with the value after the reveal,
/// plus `"upcard"`, `"strategy_a"`, `"strategy_b"` and `"gap"`.
pub fn strategy_json(
    objective: Objective,
    state: &GameState,
    upcard: u8,
    game: &RevealedGame,
) -> Value {
    let mut object = value_json(objective, state, game.value);
    object["upcard"] = json!(upcard);
    object["strategy_a"] = json!(game.strategy_a);
    object["strategy_b"] = json!(game.strategy_b);
    object["gap"] = json!(game.gap);
    object
}
