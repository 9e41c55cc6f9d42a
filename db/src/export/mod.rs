//! The strategy database as rows, for `gops export`: per state, one row with its value
//! before the reveal and one row per upturned prize with that game's value, both optimal
//! strategies (re-derived from the layer below, DESIGN §4) and the certificate. Rows are
//! produced a batch of prize sets at a time, in parallel, and handed in order to a
//! [`RowSink`] (the file formats are in [`files`]), so memory stays bounded whatever
//! the size of the game.

use std::ops::RangeInclusive;
use std::sync::Arc;

use gops_common::binomial::binomial;
use gops_common::cache::SliceCache;
use gops_common::cards::CardSet;
use gops_common::engine::fill_matrix;
use gops_common::kernel::{GameSolver, GameStatus};
use gops_common::layout::{LayerLayout, Oriented, full_game};
use gops_common::objective::Objective;
use gops_common::pattern::Pattern;
use gops_common::prizes::{prize_rank, prize_set_count, prize_unrank};
use gops_common::slice::Slice;
use rayon::prelude::*;

use crate::read::{QueryError, complete_slice};
use crate::store::{Store, StoreError};

#[cfg(feature = "export-files")]
pub mod arrow;
#[cfg(feature = "export-files")]
pub mod files;

/// One exported row. `upcard` is `None` on the row of a state before the reveal; that
/// row has no strategies and no gap.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportRow {
    /// Cards left per hand.
    pub k: u8,
    /// The merged pattern of the two hands (`A`, `B`, `S` per card, lowest first).
    pub pattern: String,
    pub a: CardSet,
    pub b: CardSet,
    pub prizes: CardSet,
    /// A's score minus B's so far (always 0 for `points`, whose values do not depend
    /// on it).
    pub diff: i32,
    pub upcard: Option<u8>,
    pub value: f64,
    /// Probability of each of A's cards, ascending (empty before the reveal).
    pub strategy_a: Vec<f64>,
    pub strategy_b: Vec<f64>,
    pub gap: Option<f64>,
}

/// Where rows go: one implementation per file format.
pub trait RowSink {
    /// Takes the next rows, in export order.
    fn write_rows(&mut self, rows: &[ExportRow]) -> Result<(), String>;
}

#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// The layers (cards left) to export.
    pub layers: RangeInclusive<u8>,
    /// Expand each canonical state to every concrete `(A, B)` it stands for, both
    /// orientations.
    pub concrete: bool,
    /// For `win`: every live score difference, not only those whose value is not
    /// exactly -1 or +1.
    pub all_diffs: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("layers {first}..{last} are outside this {n}-card game's 1..{n}")]
    BadLayers { first: u8, last: u8, n: u8 },
    #[error("writing the export failed: {0}")]
    Sink(String),
    #[error(
        "game of state {pattern} prizes {{{prizes}}} upcard {upcard} d {diff} is not certified (gap {gap:e})"
    )]
    Uncertified {
        pattern: String,
        prizes: CardSet,
        upcard: u8,
        diff: i32,
        gap: f64,
    },
    #[error("export interrupted")]
    Interrupted,
}

impl ExportError {
    pub fn is_usage(&self) -> bool {
        match self {
            ExportError::Query(e) => e.is_usage(),
            ExportError::Store(e) => e.is_usage(),
            ExportError::BadLayers { .. } => true,
            _ => false,
        }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportSummary {
    pub rows: u64,
    pub slices: u64,
}

/// States per task handed to the thread pool.
const STATES_PER_TASK: usize = 64;
/// Bytes of layer k-1 slices kept while exporting layer k.
const CACHE_BYTES: usize = 256 << 20;

/// Prize sets in the chosen layers: the progress total.
pub fn slices_in(n: u8, layers: &RangeInclusive<u8>) -> u64 {
    layers.clone().map(|k| prize_set_count(n, k) as u64).sum()
}

/// Exports the chosen layers of `store` into `sink`. `progress` is told the number of
/// prize sets done after every batch; it returns false to stop the export.
pub fn export(
    store: &Store,
    options: &ExportOptions,
    sink: &mut dyn RowSink,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<ExportSummary, ExportError> {
    let n = store.n();
    let (first, last) = (*options.layers.start(), *options.layers.end());
    if first == 0 || first > last || last > n {
        return Err(ExportError::BadLayers { first, last, n });
    }
    for k in options.layers.clone() {
        crate::read::check_stored(store, k)?;
        // a book's rows read the layer below each one exported, for their strategies
        if k > 1 && store.book().is_some() {
            crate::read::check_stored(store, k - 1)?;
        }
    }
    let mut summary = ExportSummary::default();
    let start = store.pivot_start();
    for k in options.layers.clone() {
        let layer = LayerExport::new(store, k, options);
        let mut below_cache = SliceCache::new(CACHE_BYTES);
        for rank in 0..prize_set_count(n, k) as u32 {
            let input = layer.inputs(store, rank, &mut below_cache)?;
            // the states of one prize set are split over the threads; memory holds the
            // rows of one prize set at a time
            let rows = layer
                .states
                .par_chunks(STATES_PER_TASK)
                .map_init(
                    || GameSolver::with_start(start),
                    |solver, states| layer.rows(&input, states, solver),
                )
                .collect::<Result<Vec<_>, ExportError>>()?;
            for chunk in &rows {
                sink.write_rows(chunk).map_err(ExportError::Sink)?;
                summary.rows += chunk.len() as u64;
            }
            summary.slices += 1;
            if !progress(summary.slices) {
                return Err(ExportError::Interrupted);
            }
        }
    }
    Ok(summary)
}

/// What the rows of one prize set are made from.
struct SliceInputs {
    prizes: CardSet,
    slice: Slice,
    /// The slice of `prizes - upcard` in the layer below, per upcard ascending.
    below: Vec<(u8, Arc<Slice>)>,
}

/// One layer's layouts and the states whose rows it writes.
struct LayerExport {
    k: u8,
    objective: Objective,
    all_diffs: bool,
    /// Each exported pattern with where its value is stored, its full game in the
    /// layer below, and the hands it is written as.
    states: Vec<ExportedPattern>,
}

struct ExportedPattern {
    letters: String,
    at: Oriented,
    children: Vec<Oriented>,
    signs: Vec<i8>,
    hands: Vec<(CardSet, CardSet)>,
}

impl LayerExport {
    fn new(store: &Store, k: u8, options: &ExportOptions) -> LayerExport {
        let n = store.n();
        let layout = LayerLayout::new(n, k);
        let below_layout = LayerLayout::new(n, k - 1);
        let patterns: Vec<(Pattern, Oriented)> = if options.concrete {
            (0..layout.pattern_count() as u32)
                .map(|rank| (layout.index.unrank(rank), layout.orientation[rank as usize]))
                .collect()
        } else {
            (0..layout.canonical_count())
                .map(|i| (layout.canonical[i], Oriented::new(i as u32, false)))
                .collect()
        };
        let states = patterns
            .into_iter()
            .map(|(pattern, at)| {
                let (children, signs) = full_game(pattern, &below_layout);
                let length = pattern.len();
                let hands = if options.concrete {
                    (0..binomial(u32::from(n), length))
                        .map(|rank| pattern.place(prize_unrank(rank as u32, length as u8)))
                        .collect()
                } else {
                    vec![pattern.place(CardSet::full(length as u8))]
                };
                ExportedPattern {
                    letters: pattern.letters(),
                    at,
                    children,
                    signs,
                    hands,
                }
            })
            .collect();
        LayerExport {
            k,
            objective: store.objective(),
            all_diffs: options.all_diffs,
            states,
        }
    }

    fn inputs(
        &self,
        store: &Store,
        rank: u32,
        below_cache: &mut SliceCache,
    ) -> Result<SliceInputs, ExportError> {
        let prizes = prize_unrank(rank, self.k);
        let slice = complete_slice(store, self.k, rank)?;
        let below = prizes
            .iter()
            .map(|upcard| {
                let below_rank = prize_rank(prizes.without(upcard));
                let slice = below_cache.get_or_load(self.k - 1, below_rank, || {
                    complete_slice(store, self.k - 1, below_rank)
                })?;
                Ok((upcard, slice))
            })
            .collect::<Result<_, ExportError>>()?;
        Ok(SliceInputs {
            prizes,
            slice,
            below,
        })
    }

    /// The score differences exported for a state: 0 for `points` (every state, whatever
    /// its value); for `win`, the live ones that can occur, less those whose value is
    /// exactly -1 or +1 unless every one is asked for.
    fn diffs(&self, input: &SliceInputs, at: Oriented) -> Vec<i32> {
        if self.objective == Objective::Points {
            return vec![0];
        }
        let range = self.objective.diff_range(input.prizes);
        let reach = input.slice.reach;
        (-range..=range)
            .filter(|&d| reach.is_none_or(|r| r.contains_diff(d)))
            .filter(|&d| self.all_diffs || input.slice.value(at, d).abs() != 1.0)
            .collect()
    }

    fn rows(
        &self,
        input: &SliceInputs,
        states: &[ExportedPattern],
        solver: &mut GameSolver,
    ) -> Result<Vec<ExportRow>, ExportError> {
        let size = usize::from(self.k);
        let mut matrix = vec![0.0; size * size];
        let mut rows = Vec::new();
        for state in states {
            for d in self.diffs(input, state.at) {
                let value = input.slice.value(state.at, d);
                let mut games = Vec::with_capacity(size);
                for (upcard, below) in &input.below {
                    fill_matrix(
                        self.objective,
                        &mut matrix,
                        &state.children,
                        &state.signs,
                        d,
                        *upcard,
                        below,
                    );
                    let outcome = solver.solve(&matrix, size, size);
                    if outcome.status == GameStatus::Uncertified {
                        return Err(ExportError::Uncertified {
                            pattern: state.letters.clone(),
                            prizes: input.prizes,
                            upcard: *upcard,
                            diff: d,
                            gap: outcome.gap,
                        });
                    }
                    games.push((
                        *upcard,
                        outcome.value,
                        solver.strategy_a().to_vec(),
                        solver.strategy_b().to_vec(),
                        outcome.gap,
                    ));
                }
                for &(a, b) in &state.hands {
                    let row = |upcard, value, strategy_a, strategy_b, gap| ExportRow {
                        k: self.k,
                        pattern: state.letters.clone(),
                        a,
                        b,
                        prizes: input.prizes,
                        diff: d,
                        upcard,
                        value,
                        strategy_a,
                        strategy_b,
                        gap,
                    };
                    rows.push(row(None, value, Vec::new(), Vec::new(), None));
                    for (upcard, value, strategy_a, strategy_b, gap) in &games {
                        rows.push(row(
                            Some(*upcard),
                            *value,
                            strategy_a.clone(),
                            strategy_b.clone(),
                            Some(*gap),
                        ));
                    }
                }
            }
        }
        Ok(rows)
    }
}
