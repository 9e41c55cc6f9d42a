//! A `win` slice computed upcard by upcard (DESIGN §3). Walked pattern by pattern, each
//! pattern reads its children in all k slices below at once, and a layer's k slices below
//! (140-170 MB at layer 9 of the 13-card game) do not fit the last-level cache. Here every
//! pattern's window of score differences is found first, from the children's windows
//! alone; then, for one upcard after the other, every pattern's games under that upcard
//! are filled from that one slice below and solved, and their values added to the
//! pattern's totals. The totals add the same game values in the same (upcard) order as
//! pattern by pattern, so every value, gap and count is the same, bit for bit.

use rayon::prelude::*;

use super::scratch::{RUN, StateScratch};
use super::{EngineError, LayerEngine, PATTERNS_PER_TASK, bisect_window, settle_outside};
use crate::cards::CardSet;
use crate::kernel::{GameOutcome, GameSolver};
use crate::matrix_fill::{self, WinEntry};
use crate::reach::Reach;
use crate::slice::{Slice, UNREACHABLE};

/// What the first pass found for a canonical pattern.
#[derive(Clone, Copy, Debug)]
enum Plan {
    /// Games to solve at the score differences `lo..hi` (the pattern's totals there);
    /// -1 below, +1 from `hi` on, set already.
    Window { lo: i32, hi: i32 },
    /// Its entries could not be prepared (a slice below too large for 32-bit positions):
    /// solved alone, pattern by pattern, at the end.
    Alone,
}

/// What the second pass works in, kept from pattern to pattern: the solver, one game's
/// entries under the current upcard, [`RUN`] matrices, and the game left without a
/// partner by the last run (its matrix and its place in the pattern's totals).
#[derive(Default)]
struct UpcardWork {
    solver: GameSolver,
    entries: Vec<WinEntry>,
    matrices: Vec<f64>,
    waiting: Vec<f64>,
}

/// The slice being computed: its prize set, the slices below by upcard, the score
/// differences that can occur, and its values' layout (`width` per canonical pattern,
/// score differences `-diff_range..=diff_range`).
pub(super) struct SliceInProgress<'a> {
    pub(super) prizes: CardSet,
    pub(super) views: &'a [(u8, &'a Slice)],
    pub(super) reach: &'a Reach,
    pub(super) width: usize,
    pub(super) diff_range: i32,
}

impl LayerEngine {
    /// Whether [`LayerEngine::solve_win_by_upcard`] computes this slice: `win` with the
    /// windows searched, every slice below windowed (every layer but the first).
    pub(super) fn by_upcard(&self, views: &[(u8, &Slice)]) -> bool {
        self.objective == crate::objective::Objective::Win
            && self.diff_search == super::DiffSearch::Bisect
            && views.iter().all(|(_, view)| view.windows.is_some())
    }

    /// Fills `dense` (the slice's values, every reachable score difference of every
    /// canonical pattern) upcard by upcard; the largest certificate gap and the games
    /// solved.
    pub(super) fn solve_win_by_upcard(
        &self,
        slice: &SliceInProgress,
        dense: &mut [f64],
    ) -> Result<(f64, u64), EngineError> {
        self.solve_win_by_upcard_leaving(slice, dense, &|_| false)
    }

    /// [`LayerEngine::solve_win_by_upcard`], with the patterns `alone(p)` solved alone
    /// as if their entries could not be prepared: the tests' way to the [`Plan::Alone`]
    /// path, which a whole game reaches only past 32-bit positions in a slice below.
    pub(super) fn solve_win_by_upcard_leaving(
        &self,
        slice: &SliceInProgress,
        dense: &mut [f64],
        alone: &(dyn Fn(usize) -> bool + Sync),
    ) -> Result<(f64, u64), EngineError> {
        let chunk = PATTERNS_PER_TASK * slice.width;
        let mut plans = vec![Plan::Alone; self.layout.canonical_count()];
        // 1: each pattern's window, -1 below it and +1 above
        dense
            .par_chunks_mut(chunk)
            .zip(plans.par_chunks_mut(PATTERNS_PER_TASK))
            .enumerate()
            .for_each_init(StateScratch::default, |scratch, (task, (out, plans))| {
                let patterns = out.chunks_exact_mut(slice.width).zip(plans);
                for (offset, (values, plan)) in patterns.enumerate() {
                    let p = task * PATTERNS_PER_TASK + offset;
                    *plan = if alone(p) {
                        Plan::Alone
                    } else {
                        self.plan(scratch, p, values, slice)
                    };
                }
            });
        // 2: upcard after upcard, every pattern's games under it, added to its totals
        let mut max_gap = 0.0f64;
        for &(upcard, view) in slice.views {
            let gap = dense
                .par_chunks_mut(chunk)
                .zip(plans.par_chunks(PATTERNS_PER_TASK))
                .enumerate()
                .map_init(UpcardWork::default, |work, (task, (out, plans))| {
                    let mut max_gap = 0.0f64;
                    let patterns = out.chunks_exact_mut(slice.width).zip(plans);
                    for (offset, (values, &plan)) in patterns.enumerate() {
                        let Plan::Window { lo, hi } = plan else {
                            continue;
                        };
                        let p = task * PATTERNS_PER_TASK + offset;
                        let inside =
                            &mut values[(lo + slice.diff_range) as usize..][..(hi - lo) as usize];
                        let gap = self.add_upcard(work, p, lo, inside, (upcard, view), slice)?;
                        max_gap = max_gap.max(gap);
                    }
                    Ok(max_gap)
                })
                .try_reduce(|| 0.0, |a, b| Ok(a.max(b)))?;
            max_gap = max_gap.max(gap);
        }
        // 3: the means, the mirrored half of symmetric patterns, the unreachable d; the
        // patterns left alone solved pattern by pattern
        let (gap, games) = dense
            .par_chunks_mut(chunk)
            .zip(plans.par_chunks(PATTERNS_PER_TASK))
            .enumerate()
            .map_init(
                || (GameSolver::new(), StateScratch::default()),
                |(solver, scratch), (task, (out, plans))| {
                    let (mut max_gap, mut games) = (0.0f64, 0u64);
                    let patterns = out.chunks_exact_mut(slice.width).zip(plans);
                    for (offset, (values, &plan)) in patterns.enumerate() {
                        let p = task * PATTERNS_PER_TASK + offset;
                        let (gap, n) = self.finish(solver, scratch, p, values, plan, slice)?;
                        max_gap = max_gap.max(gap);
                        games += n;
                    }
                    Ok((max_gap, games))
                },
            )
            .try_reduce(|| (0.0, 0), |a, b| Ok((a.0.max(b.0), a.1 + b.1)))?;
        Ok((max_gap.max(gap), games))
    }

    /// The first pass over pattern `p`: its window, read off its children's windows, with
    /// -1 below and +1 from its end written into `values` and 0 inside (the totals).
    fn plan(
        &self,
        scratch: &mut StateScratch,
        p: usize,
        values: &mut [f64],
        slice: &SliceInProgress,
    ) -> Plan {
        let first_d = self.first_d(p, slice.diff_range);
        let (rows, cols, children, signs) = self.children.of(p);
        scratch.prepare_win(p, children, signs, slice.views);
        let Some(window) = scratch.unsettled_window(p, rows, cols) else {
            return Plan::Alone;
        };
        let range = &mut values[(first_d + slice.diff_range) as usize..];
        let (lo, inside) = settle_outside(range, first_d, window);
        inside.fill(0.0);
        Plan::Window {
            lo,
            hi: lo + inside.len() as i32,
        }
    }

    /// The games of pattern `p` under `upcard` (the slice below `view`) at the score
    /// differences `first..`, filled [`RUN`] at a time and solved where reachable, in
    /// pairs (the pattern's last odd game alone); each game's value added to its d's
    /// total in `totals`. The largest gap.
    fn add_upcard(
        &self,
        work: &mut UpcardWork,
        p: usize,
        first: i32,
        totals: &mut [f64],
        (upcard, view): (u8, &Slice),
        slice: &SliceInProgress,
    ) -> Result<f64, EngineError> {
        let UpcardWork {
            solver,
            entries,
            matrices,
            waiting,
        } = work;
        solver.set_start(self.start);
        let (rows, cols, children, signs) = self.children.of(p);
        let size = rows * cols;
        let windows = view
            .windows
            .as_ref()
            .expect("by_upcard: every view is windowed");
        entries.clear();
        for (&child, &sign) in children.iter().zip(signs) {
            let window = windows[child.canonical()];
            let entry = WinEntry::new(
                child,
                sign,
                upcard,
                view.diff_range,
                window,
                view.values.len(),
            )
            .expect("the first pass prepared this pattern's entries");
            entries.push(entry);
        }
        if matrices.len() < RUN * size {
            matrices.resize(RUN * size, 0.0);
        }
        waiting.resize(size, 0.0);
        let games = totals.len();
        let mut max_gap = 0.0f64;
        let mut add = |at: usize, outcome: GameOutcome| {
            let d = first + at as i32;
            let outcome = self.certified(outcome, slice.prizes, p, upcard, d)?;
            totals[at] += outcome.value;
            max_gap = max_gap.max(outcome.gap);
            Ok::<(), EngineError>(())
        };
        // the games are solved in pairs, a run's odd one with the next run's first
        // (each total gets one value an upcard, so the order of the solves changes
        // no bit)
        let mut waiting_at: Option<usize> = None;
        for run in 0..games.div_ceil(RUN) {
            let start = run * RUN;
            let len = RUN.min(games - start);
            let d0 = first + start as i32;
            let mut reachable = [0usize; RUN];
            let mut count = 0;
            for j in 0..len {
                if slice.reach.contains_diff(d0 + j as i32) {
                    reachable[count] = j;
                    count += 1;
                }
            }
            if count == 0 {
                continue;
            }
            let matrices = &mut matrices[..len * size];
            matrix_fill::fill_win_run(matrices, entries, d0, &view.values);
            let matrix = |j: usize| &matrices[j * size..][..size];
            let mut reachable = &reachable[..count];
            if let Some(at) = waiting_at.take() {
                let j = reachable[0];
                let [o0, o1] = solver.solve_pair(waiting, matrix(j), rows, cols);
                add(at, o0)?;
                add(start + j, o1)?;
                reachable = &reachable[1..];
            }
            let mut pairs = reachable.chunks_exact(2);
            for pair in &mut pairs {
                let [o0, o1] = solver.solve_pair(matrix(pair[0]), matrix(pair[1]), rows, cols);
                add(start + pair[0], o0)?;
                add(start + pair[1], o1)?;
            }
            if let [j] = *pairs.remainder() {
                waiting.copy_from_slice(matrix(j));
                waiting_at = Some(start + j);
            }
        }
        if let Some(at) = waiting_at {
            add(at, solver.solve(waiting, rows, cols))?;
        }
        Ok(max_gap)
    }

    /// The last pass over pattern `p`: the means of its totals (or, left alone, its
    /// values solved pattern by pattern), the mirrored half of a symmetric pattern,
    /// [`UNREACHABLE`] at the d that cannot occur. Its largest gap and games solved.
    fn finish(
        &self,
        solver: &mut GameSolver,
        scratch: &mut StateScratch,
        p: usize,
        values: &mut [f64],
        plan: Plan,
        slice: &SliceInProgress,
    ) -> Result<(f64, u64), EngineError> {
        let (k, diff_range) = (self.layout.k as usize, slice.diff_range);
        let (mut max_gap, mut games) = (0.0f64, 0u64);
        match plan {
            Plan::Window { lo, hi } => {
                let inside = &mut values[(lo + diff_range) as usize..][..(hi - lo) as usize];
                for (total, d) in inside.iter_mut().zip(lo..) {
                    if slice.reach.contains_diff(d) {
                        *total /= k as f64;
                        games += slice.views.len() as u64;
                    } else {
                        *total = UNREACHABLE;
                    }
                }
            }
            Plan::Alone => {
                let first_d = self.first_d(p, diff_range);
                let range = &mut values[(first_d + diff_range) as usize..];
                bisect_window(
                    range,
                    first_d,
                    &|d| slice.reach.contains_diff(d),
                    &mut |d| {
                        let (v, gap, n) =
                            self.solve_state(solver, scratch, p, d, slice.views, slice.prizes)?;
                        max_gap = max_gap.max(gap);
                        games += n;
                        Ok(v)
                    },
                )?;
            }
        }
        self.complete_pattern(p, values, diff_range, Some(slice.reach));
        Ok((max_gap, games))
    }
}
