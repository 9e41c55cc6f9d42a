//! The read side: answers about a solved game, computed from a slice in one place. A
//! [`Reader`] gives a state's value and the optimal strategies of the game after an
//! upcard is revealed (re-derived from the layer below, DESIGN §4), whoever asks: the
//! command line, the explorer, the arena, policies, verify's callers and Python. It
//! reads from a [`Book`]: a state below a book's layers from the subtree its solver
//! solves, any other from the store's slices, reached through a [`Slices`] of the
//! caller's choice: [`WholeReads`] (one question, nothing kept), [`SliceReads`] (one
//! thread's caches) or [`SharedReads`] (caches that threads share).
//!
//! Layout: [`slices`] the ways of reaching slices (large ones read only in part);
//! [`shared`] a book and its shared caches, for servers; [`text`] states from text and
//! answers as JSON; [`opening`] the value and first bids of a game.

use std::sync::Arc;

use gops_common::cards::{CardSet, InputError};
use gops_common::engine::terminal_slice;
use gops_common::kernel::{GameSolver, GameStatus};
use gops_common::layout::{LayerLayout, full_game};
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_common::state::GameState;
use serde::Serialize;

use crate::book::Book;
use crate::book::on_demand::OnDemandError;
use crate::store::{Store, StoreError};

pub mod opening;
pub mod shared;
pub mod slices;
pub mod text;

pub use shared::SharedReader;
pub use slices::{SharedReads, SliceReads, WholeReads};
pub use text::{StateText, parse_upcard, strategy_json, value_json};

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

/// How a reader reaches the slices of a book's stored layers.
pub trait Slices {
    /// Slice `rank` of layer `k` of `book` (a complete layer it stores, or layer 0),
    /// holding at least the canonical patterns `patterns` gives (asked for only when the
    /// slice is read in part).
    fn slice(
        &mut self,
        book: &Book,
        k: u8,
        rank: u32,
        patterns: &dyn Fn() -> Vec<usize>,
    ) -> Result<Arc<Slice>, QueryError>;
}

/// A concrete state and its upcard: (A, B, prizes, d, upcard).
type RevealedKey = (CardSet, CardSet, CardSet, i32, u8);

/// The one reader of a solved game: a state's value, and the game after an upcard.
pub struct Reader<'b, S> {
    book: &'b Book,
    slices: S,
    solver: GameSolver,
    /// The last revealed game asked for: both players of a simulated round ask for the
    /// same one, which is then solved once.
    last: Option<(RevealedKey, RevealedGame)>,
}

/// One thread's reader, keeping what it reads in its own caches.
pub type CachedReader<'b> = Reader<'b, SliceReads>;

impl<'b> CachedReader<'b> {
    /// A reader of `book` caching at most about `cache_bytes` of slices and tables.
    pub fn cached(book: &'b Book, cache_bytes: usize) -> CachedReader<'b> {
        Reader::new(book, SliceReads::new(cache_bytes))
    }
}

impl<'b, S: Slices> Reader<'b, S> {
    /// A reader of `book` reaching its slices through `slices`.
    pub fn new(book: &'b Book, slices: S) -> Reader<'b, S> {
        Reader {
            book,
            slices,
            solver: GameSolver::with_start(book.pivot_start()),
            last: None,
        }
    }

    pub fn n(&self) -> u8 {
        self.book.n()
    }

    /// The book it reads (for another thread's reader of the same book).
    pub fn book(&self) -> &'b Book {
        self.book
    }

    pub fn objective(&self) -> Objective {
        self.book.objective()
    }

    /// The value for A of `state` before its next prize is turned up.
    pub fn value(&mut self, state: &GameState) -> Result<f64, QueryError> {
        let objective = self.objective();
        state.check_reachable(objective)?;
        let k = state.k();
        if let Some(below) = self.book.below().filter(|b| b.answers_value(k)) {
            return Ok(below.value(state)?);
        }
        let layout = self.book.layout(k);
        let patterns = || vec![state.locate(&layout).canonical()];
        let slice = self
            .slices
            .slice(self.book, k, state.prize_rank(), &patterns)?;
        Ok(state.value_in(objective, &layout, &slice))
    }

    /// The game of `state` once `upcard` is turned up: value, both strategies,
    /// certificate, matrix.
    pub fn revealed(&mut self, state: &GameState, upcard: u8) -> Result<RevealedGame, QueryError> {
        let key = (state.a, state.b, state.prizes, state.diff, upcard);
        if let Some((_, game)) = self.last.as_ref().filter(|(last, _)| *last == key) {
            return Ok(game.clone());
        }
        let below_prizes = check_upcard(state, upcard)?;
        let k = state.k();
        let game = match self.book.below().filter(|b| b.answers_revealed(k)) {
            Some(below) => {
                state.check_reachable(self.objective())?;
                let subtree = below.subtree_after(state, upcard)?;
                let (layout, slice) = subtree.below(state, upcard).expect(
                    "the subtree holds the game after the upcard, one of the state's prizes",
                );
                self.solve_revealed(state, upcard, layout, slice)?
            }
            None => {
                let layout = self.book.layout(k - 1);
                let patterns = || children(state, &layout);
                let rank = prize_rank(below_prizes);
                let slice = self.slices.slice(self.book, k - 1, rank, &patterns)?;
                self.solve_revealed(state, upcard, &layout, &slice)?
            }
        };
        self.last = Some((key, game.clone()));
        Ok(game)
    }

    /// Solves the game of `state` after `upcard`, given the slice of the remaining
    /// prizes in the layer below (laid out by `below_layout`).
    fn solve_revealed(
        &mut self,
        state: &GameState,
        upcard: u8,
        below_layout: &LayerLayout,
        below: &Slice,
    ) -> Result<RevealedGame, QueryError> {
        let matrix = state.matrix_after(self.objective(), upcard, below_layout, below)?;
        let size = state.k() as usize;
        let outcome = self.solver.solve(&matrix, size, size);
        if outcome.status == GameStatus::Uncertified {
            return Err(QueryError::Uncertified { gap: outcome.gap });
        }
        Ok(RevealedGame {
            value: outcome.value,
            strategy_a: self.solver.strategy_a().to_vec(),
            strategy_b: self.solver.strategy_b().to_vec(),
            gap: outcome.gap,
            matrix,
        })
    }
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

/// The canonical patterns of the layer below that `state`'s game after an upcard reads
/// (the same whatever the upcard).
fn children(state: &GameState, below: &LayerLayout) -> Vec<usize> {
    let (children, _) = full_game(state.pattern(), below);
    children.iter().map(|c| c.canonical()).collect()
}
