//! Answers about a solved game, read from the store: a state's value, the optimal
//! strategies of the game after an upcard is revealed (re-derived from the layer below,
//! DESIGN §4), and the run's status.

use gops_common::cards::{CardSet, InputError};
use gops_common::engine::terminal_slice;
use gops_common::kernel::{GameSolver, GameStatus};
use gops_common::layout::LayerLayout;
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_common::state::GameState;
use serde::Serialize;

use crate::plan::LayerSize;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "layer {k} ({k} cards left) is not solved yet in this database: run `gops solve` to finish it"
    )]
    NotSolved { k: u8 },
    #[error("the matrix game could not be certified (gap {gap:e})")]
    Uncertified { gap: f64 },
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

/// The slice of `prizes` in layer `k`, if that layer is complete.
pub fn complete_slice(store: &Store, k: u8, rank: u32) -> Result<Slice, QueryError> {
    if k == 0 {
        return Ok(terminal_slice());
    }
    if store.layer(k)?.is_none() {
        return Err(QueryError::NotSolved { k });
    }
    store.slice(k, rank)?.map(|r| r.slice).ok_or_else(|| {
        StoreError::Corrupt(format!("layer {k} is complete but slice {rank} is missing")).into()
    })
}

/// The value for A of a state, before the next prize is turned up.
pub fn state_value(store: &Store, state: &GameState) -> Result<f64, QueryError> {
    let k = state.k();
    let objective = store.objective();
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
}

pub fn revealed_game(
    store: &Store,
    state: &GameState,
    upcard: u8,
) -> Result<RevealedGame, QueryError> {
    let below_prizes = check_upcard(state, upcard)?;
    let k = state.k();
    let below = complete_slice(store, k - 1, prize_rank(below_prizes))?;
    let layout = LayerLayout::new(store.n(), k - 1);
    solve_revealed(
        store.objective(),
        state,
        upcard,
        &layout,
        &below,
        &mut GameSolver::new(),
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
    })
}

/// One layer in `status` (DESIGN §6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerStatus {
    pub k: u8,
    pub slices: usize,
    pub done: usize,
    pub states: u64,
    /// Set once the layer is complete.
    pub checksum: Option<String>,
    pub max_gap: Option<f64>,
    pub complete: bool,
    /// Set once the layer is complete: values stored (for `win`, only the windows).
    pub stored_values: Option<u64>,
    /// Values a dense layout would store.
    pub dense_values: u64,
}

/// The run's status (DESIGN §6 `status --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunStatus {
    pub n: u8,
    pub objective: String,
    pub complete: bool,
    pub layers: Vec<LayerStatus>,
    pub db: String,
    pub format_version: u32,
}

pub fn run_status(store: &Store) -> Result<RunStatus, StoreError> {
    let (n, objective) = (store.n(), store.objective());
    let mut layers = Vec::new();
    for k in 1..=n {
        let size = LayerSize::of(n, k, objective);
        let record = store.layer(k)?;
        layers.push(LayerStatus {
            k,
            slices: size.slices,
            done: match &record {
                Some(r) => r.slices,
                None => store.stored_count(k)?,
            },
            states: size.states,
            complete: record.is_some(),
            checksum: record.as_ref().map(|r| r.checksum.clone()),
            max_gap: record.as_ref().map(|r| r.max_gap),
            stored_values: record.as_ref().map(|r| r.stored_values),
            dense_values: size.dense_values,
        });
    }
    Ok(RunStatus {
        n,
        objective: objective_name(objective),
        complete: layers.iter().all(|l| l.complete),
        layers,
        db: store.path().display().to_string(),
        format_version: store.manifest().format_version,
    })
}

fn objective_name(objective: Objective) -> String {
    objective.name().to_string()
}
