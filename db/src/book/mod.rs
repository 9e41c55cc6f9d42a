//! Books: a db opened to be read, whole or in part. [`Book`] is what every reader opens
//! (the command line's queries, the explorer, the arena, verify, Python): the db's store,
//! the layers' layouts its readers share, and, for a book that keeps only the top layers
//! of its game, the solver of the layers below them ([`on_demand`]), bounded by the
//! options given at the door ([`ReadOptions`]).
//!
//! A book of layers K..N is a db directory holding those layers' sealed files, copied as
//! they are from a complete db ([`write`]), and a manifest that says K and carries every
//! layer's record from the full db. It reads like a sealed db (any number of readers,
//! read-only media, nothing written); the states below layer K are solved on demand, bit
//! for bit what the full db holds. A full db is the book of all its layers.

use std::path::Path;
use std::sync::Arc;

use gops_common::kernel::PivotStart;
use gops_common::layout::{LayerLayout, Layouts};
use gops_common::objective::Objective;
use gops_common::state::GameState;

use crate::read::{QueryError, Reader, RevealedGame, WholeReads};
use crate::store::{Store, StoreError};
use on_demand::{Fault, OnDemand, OnDemandLimits, SolveObserver};

pub mod on_demand;
pub mod write;

pub use write::{BookError, BookWritten, write_book};

/// What a reader sets when it opens a db: the limits of what a book solves on demand,
/// and who hears of each solve.
#[derive(Clone, Default)]
pub struct ReadOptions {
    pub limits: OnDemandLimits,
    pub observer: Option<Arc<dyn SolveObserver>>,
    /// A test hook ([`Fault`]).
    #[doc(hidden)]
    pub fault: Fault,
}

/// A db opened to be read: its store and, for a book, the solver of the layers below
/// the ones it keeps.
pub struct Book {
    store: Store,
    layouts: Arc<Layouts>,
    /// A book's solver of the layers below its lowest; `None` for a full db.
    below: Option<OnDemand>,
}

impl Book {
    /// Opens the db at `path` to read it, as [`Store::open_existing`] does (sealed
    /// layers without a lock, nothing written), with `options` for what a book solves
    /// below its layers.
    pub fn open(path: &Path, options: &ReadOptions) -> Result<Book, StoreError> {
        Ok(Book::of(Store::open_existing(path)?, options))
    }

    /// `store` read as a book: with the solver of the layers below when its manifest
    /// says it is one.
    pub fn of(store: Store, options: &ReadOptions) -> Book {
        let layouts = Arc::new(Layouts::new(store.n()));
        let below = store.book().map(|info| {
            let layouts = Arc::clone(&layouts);
            let start = store.pivot_start();
            OnDemand::new(store.objective(), start, info.from_layer, layouts, options)
        });
        Book {
            store,
            layouts,
            below,
        }
    }

    /// The db a solve has just completed, from the solve's own handle: a rolling
    /// solve's db (a book now, its released layers solved on demand) opened again as
    /// every reader opens it, since the writer's handle does not know the book it has
    /// become; any other read through the handle.
    pub fn after_solve(store: Store, options: &ReadOptions) -> Result<Book, StoreError> {
        if store.keep_from_layer().is_none() {
            return Ok(Book::of(store, options));
        }
        let path = store.path().to_path_buf();
        drop(store);
        Book::open(&path, options)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The solver of the layers below a book's; `None` for a full db.
    pub fn below(&self) -> Option<&OnDemand> {
        self.below.as_ref()
    }

    pub fn n(&self) -> u8 {
        self.store.n()
    }

    pub fn objective(&self) -> Objective {
        self.store.objective()
    }

    /// The kernel's arithmetic of the db's values.
    pub fn pivot_start(&self) -> PivotStart {
        self.store.pivot_start()
    }

    /// The layout of layer `k`, made once and shared by every reader.
    pub fn layout(&self, k: u8) -> Arc<LayerLayout> {
        self.layouts.get(k)
    }

    /// The value for A of `state` before its next prize is turned up (slices read
    /// whole, nothing kept: one question).
    pub fn value(&self, state: &GameState) -> Result<f64, QueryError> {
        Reader::new(self, WholeReads).value(state)
    }

    /// The game of `state` once `upcard` is turned up (slices read whole, nothing
    /// kept: one question).
    pub fn revealed(&self, state: &GameState, upcard: u8) -> Result<RevealedGame, QueryError> {
        Reader::new(self, WholeReads).revealed(state, upcard)
    }
}

#[cfg(test)]
mod tests;
