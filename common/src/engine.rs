//! The layer engine (DESIGN §3): computes the slices of layer `k` (one per prize set) from
//! the slices of layer `k - 1`. For a prize set `C`, every canonical pattern, every live
//! score difference and every upcard `c` gives one matrix game whose entries are read from
//! the slice `C - c` below; the state's value is the mean of the k game values.

use rayon::prelude::*;

use crate::cards::CardSet;
use crate::kernel::{GameOutcome, GameSolver, GameStatus, MAX_STRATEGIES, PivotStart};
use crate::layout::{ChildTable, LayerLayout, Oriented};
use crate::matrix_fill::{self, WinEntry};
use crate::objective::Objective;
use crate::prizes::{prize_rank, prize_unrank};
use crate::reach::Reach;
use crate::slice::{Slice, SliceBytes, UNREACHABLE};

/// The only slice of layer 0: the empty pattern, no prizes, value 0 at d = 0 (and,
/// for `win`, ±1 at any other d through [`Slice::value`]).
pub fn terminal_slice() -> Slice {
    Slice::dense(0, vec![0.0])
}

/// A computed slice with its certificate maximum.
#[derive(Clone, Debug, PartialEq)]
pub struct SolvedSlice {
    pub prize_rank: u32,
    pub slice: Slice,
    /// The largest certificate gap of the slice's matrix games.
    pub max_gap: f64,
    /// Matrix games solved.
    pub games: u64,
}

impl SolvedSlice {
    /// The slice as stored and sent.
    pub fn to_bytes(&self) -> SliceBytes {
        SliceBytes::of(&self.slice, self.max_gap, self.games)
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error(
        "matrix game not certified: layer {k}, prizes {{{prizes}}}, pattern {pattern}, upcard {upcard}, d {d}: gap {gap:e}"
    )]
    Uncertified {
        k: u8,
        prizes: CardSet,
        pattern: usize,
        upcard: u8,
        d: i32,
        gap: f64,
    },
    #[error(
        "dependency slice of prizes {{{prizes}}} covers {got} patterns and d range {got_range}, expected {want} and {want_range}"
    )]
    BadDependency {
        prizes: CardSet,
        got: usize,
        want: usize,
        got_range: i32,
        want_range: i32,
    },
}

/// How a `win` slice finds the score differences whose values are exactly ±1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffSearch {
    /// Solve every score difference.
    Exhaustive,
    /// W is nondecreasing in d: find the last d with W = -1 and the first with W = +1,
    /// and solve only between them. Values of exactly ±1 are exact (they come from pure
    /// saddle points), so the search is exact too. Where the slices below are windowed
    /// (every layer but the first) the two ends are read off the children's windows
    /// without solving (`StateScratch::unsettled_window`); otherwise by bisection.
    Bisect,
}

/// Everything needed to compute slices of one layer: built once per layer.
pub struct LayerEngine {
    pub objective: Objective,
    pub diff_search: DiffSearch,
    /// How the kernel starts each simplex: the db's arithmetic (see [`PivotStart`]).
    pub start: PivotStart,
    pub layout: LayerLayout,
    pub below: LayerLayout,
    pub children: ChildTable,
    /// `win`: solve every live score difference, those that cannot occur too, as db
    /// formats before 6 did (no [`Reach`] in the slices): kept to compare against in
    /// tests and benchmarks. `false` everywhere else.
    pub every_diff: bool,
}

/// Canonical patterns per parallel work item.
const PATTERNS_PER_TASK: usize = 64;

impl LayerEngine {
    /// The engine for layer `k >= 1` of the `n`-card game.
    pub fn new(n: u8, k: u8, objective: Objective) -> LayerEngine {
        assert!(k >= 1 && k <= n);
        let layout = LayerLayout::new(n, k);
        let below = LayerLayout::new(n, k - 1);
        let children = ChildTable::new(&layout, &below);
        LayerEngine {
            objective,
            diff_search: DiffSearch::Bisect,
            start: PivotStart::default(),
            layout,
            below,
            children,
            every_diff: false,
        }
    }

    /// This engine with the kernel started as `start` says (a db's arithmetic).
    pub fn with_start(mut self, start: PivotStart) -> LayerEngine {
        self.start = start;
        self
    }

    pub fn k(&self) -> u8 {
        self.layout.k
    }

    /// The prize sets of layer `k - 1` that the slice of `prizes` reads, by upcard.
    pub fn dependencies(prizes: CardSet) -> impl Iterator<Item = (u8, CardSet)> {
        prizes.iter().map(move |c| (c, prizes.without(c)))
    }

    /// The prize ranks of layer `k - 1` that the slice of prize rank `rank` of layer `k`
    /// reads: what a worker fetches and what the coordinator loads to check it.
    pub fn dependency_ranks(rank: u32, k: u8) -> impl Iterator<Item = u32> {
        Self::dependencies(prize_unrank(rank, k)).map(|(_, below)| prize_rank(below))
    }

    /// The prize ranks of layer `k - 1` that the slices `ranks` of layer `k` read (a
    /// shard's dependencies), each once, ascending.
    pub fn shard_dependency_ranks(ranks: &[u32], k: u8) -> Vec<u32> {
        let needed: std::collections::BTreeSet<u32> = ranks
            .iter()
            .flat_map(|&r| Self::dependency_ranks(r, k))
            .collect();
        needed.into_iter().collect()
    }

    /// Computes the slice of prize-set rank `prize_rank`. `dependency` gives the slices
    /// of layer `k - 1` (for k = 1, [`terminal_slice`]). Runs on the current rayon pool.
    pub fn solve_slice<'d>(
        &self,
        prize_rank: u32,
        dependency: &(dyn Fn(CardSet) -> &'d Slice + Sync),
    ) -> Result<SolvedSlice, EngineError> {
        let k = self.layout.k;
        let prizes = prize_unrank(prize_rank, k);
        let mut views: Vec<(u8, &'d Slice)> = Vec::with_capacity(k as usize);
        for (upcard, rest) in Self::dependencies(prizes) {
            let slice = dependency(rest);
            let (want, want_range) = (
                self.below.canonical_count(),
                self.objective.diff_range(rest),
            );
            if slice.patterns() != want || slice.diff_range != want_range {
                return Err(EngineError::BadDependency {
                    prizes: rest,
                    got: slice.patterns(),
                    want,
                    got_range: slice.diff_range,
                    want_range,
                });
            }
            views.push((upcard, slice));
        }
        let width = self.objective.slice_width(prizes);
        let diff_range = self.objective.diff_range(prizes);
        // win: only the score differences that can occur are solved (and stored)
        let reach = self.reach(prizes);
        let run_reach = reach.unwrap_or_else(|| Reach::full(diff_range));
        let mut dense = vec![0.0; self.layout.canonical_count() * width];
        let (max_gap, games) = dense
            .par_chunks_mut(PATTERNS_PER_TASK * width)
            .enumerate()
            .map_init(
                || (GameSolver::new(), StateScratch::default()),
                |(solver, scratch), (task, out)| {
                    let mut max_gap = 0.0f64;
                    let mut games = 0u64;
                    for (offset, values) in out.chunks_exact_mut(width).enumerate() {
                        let p = task * PATTERNS_PER_TASK + offset;
                        let pattern = self.layout.canonical[p];
                        let symmetric = pattern == pattern.swapped();
                        // a symmetric pattern is a fair game: W(P,C,d) = -W(P,C,-d), V = 0
                        let first_d = if symmetric { 1 } else { -diff_range };
                        if symmetric {
                            values[diff_range as usize] = 0.0;
                        }
                        let range = &mut values[(first_d + diff_range) as usize..];
                        // for win with the bisection: the window of d that needs solving,
                        // read off the children's windows where they are prepared
                        let mut window = None;
                        if self.objective == Objective::Win {
                            let (rows, cols, children, signs) = self.children.of(p);
                            scratch.prepare_win(p, children, signs, &views);
                            if self.diff_search == DiffSearch::Bisect {
                                window = scratch.unsettled_window(p, rows, cols);
                            }
                        }
                        let mut solve_at = |d: i32| -> Result<f64, EngineError> {
                            let (v, gap, n) =
                                self.solve_state(solver, scratch, p, d, &views, prizes)?;
                            max_gap = max_gap.max(gap);
                            games += n;
                            Ok(v)
                        };
                        match (self.objective, self.diff_search) {
                            (Objective::Win, DiffSearch::Bisect) => match window {
                                Some((lo, hi)) => {
                                    // -1 below the window, +1 from its end, solved inside
                                    let last_d = first_d + range.len() as i32;
                                    let (lo, hi) =
                                        (lo.clamp(first_d, last_d), hi.clamp(first_d, last_d));
                                    let (below, rest) = range.split_at_mut((lo - first_d) as usize);
                                    let (inside, above) = rest.split_at_mut((hi - lo) as usize);
                                    below.fill(-1.0);
                                    above.fill(1.0);
                                    let (gap, n) = self.solve_win_run(
                                        solver, scratch, p, lo, inside, &views, prizes, &run_reach,
                                    )?;
                                    max_gap = max_gap.max(gap);
                                    games += n;
                                }
                                None => bisect_window(range, first_d, &mut solve_at)?,
                            },
                            _ => {
                                for (slot, d) in range.iter_mut().zip(first_d..) {
                                    if reach.is_none_or(|r| r.contains_diff(d)) {
                                        *slot = solve_at(d)?;
                                    }
                                }
                            }
                        }
                        if symmetric {
                            for d in 1..=diff_range {
                                values[(diff_range - d) as usize] =
                                    -values[(diff_range + d) as usize];
                            }
                        }
                        if let Some(reach) = &reach {
                            for (pos, value) in values.iter_mut().enumerate() {
                                if !reach.contains(pos) {
                                    *value = UNREACHABLE;
                                }
                            }
                        }
                    }
                    Ok((max_gap, games))
                },
            )
            .try_reduce(|| (0.0, 0), |a, b| Ok((a.0.max(b.0), a.1 + b.1)))?;
        let slice = match self.objective {
            Objective::Points => Slice::dense(diff_range, dense),
            Objective::Win => Slice::windowed(diff_range, &dense, reach),
        };
        Ok(SolvedSlice {
            prize_rank,
            slice,
            max_gap,
            games,
        })
    }

    /// For `win`, the score differences that can occur with `prizes` left (the only
    /// ones solved and stored); `None` for `points`.
    fn reach(&self, prizes: CardSet) -> Option<Reach> {
        (self.objective == Objective::Win && !self.every_diff)
            .then(|| Reach::of(self.layout.n, prizes))
    }

    /// The value [`LayerEngine::solve_slice`] stores for canonical pattern `p` at score
    /// difference `d` of the slice of `prize_rank`, recomputed on its own by the same
    /// path (antisymmetry for symmetric patterns included), so it is bit-identical: a
    /// coordinator re-solves a sample of a worker's states with this. Also the largest
    /// certificate gap of the state's games, which `solve_slice` counted in the slice's
    /// `max_gap` whenever it solved the state (always for `points`; for `win`, at least
    /// every state whose value is not exactly -1 or +1).
    pub fn recompute_value<'d>(
        &self,
        solver: &mut GameSolver,
        prize_rank: u32,
        p: usize,
        d: i32,
        dependency: &(dyn Fn(CardSet) -> &'d Slice + Sync),
    ) -> Result<Recomputed, EngineError> {
        let prizes = prize_unrank(prize_rank, self.layout.k);
        let views: Vec<(u8, &Slice)> = Self::dependencies(prizes)
            .map(|(upcard, rest)| (upcard, dependency(rest)))
            .collect();
        if self.reach(prizes).is_some_and(|r| !r.contains_diff(d)) {
            // what the slice holds there: no game is solved at a score difference that
            // cannot occur
            return Ok(Recomputed {
                value: UNREACHABLE,
                gap: 0.0,
            });
        }
        let pattern = self.layout.canonical[p];
        let scratch = &mut StateScratch::default();
        let recomputed = |(value, gap, _games): (f64, f64, u64), sign: f64| Recomputed {
            value: sign * value,
            gap,
        };
        if pattern == pattern.swapped() {
            return Ok(match d.signum() {
                0 => Recomputed {
                    value: 0.0,
                    gap: 0.0,
                },
                1 => recomputed(
                    self.solve_state(solver, scratch, p, d, &views, prizes)?,
                    1.0,
                ),
                _ => recomputed(
                    self.solve_state(solver, scratch, p, -d, &views, prizes)?,
                    -1.0,
                ),
            });
        }
        Ok(recomputed(
            self.solve_state(solver, scratch, p, d, &views, prizes)?,
            1.0,
        ))
    }

    /// The value of canonical pattern `p` at score difference `d`: the mean over upcards
    /// of the value of the matrix game after the reveal. The games are solved two at a
    /// time ([`GameSolver::solve_pair`], the same bits as one by one) and added in
    /// upcard order.
    fn solve_state(
        &self,
        solver: &mut GameSolver,
        scratch: &mut StateScratch,
        p: usize,
        d: i32,
        views: &[(u8, &Slice)],
        prizes: CardSet,
    ) -> Result<(f64, f64, u64), EngineError> {
        let k = self.layout.k as usize;
        // whoever made the solver, this layer's values are computed as its db's are
        solver.set_start(self.start);
        let (rows, cols, children, signs) = self.children.of(p);
        let size = rows * cols;
        let [first, second] = &mut scratch.matrices;
        let (first, second) = (&mut first[..size], &mut second[..size]);
        let prepared = (scratch.prepared == Some(p)).then_some(&scratch.win[..]);
        // a prepared win pattern from its entries, anything else by `fill_matrix`
        let fill = |matrix: &mut [f64], game: usize, upcard: u8, view: &Slice| match prepared {
            Some(entries) => {
                matrix_fill::fill_win(matrix, &entries[game * size..][..size], d, &view.values)
            }
            None => fill_matrix(self.objective, matrix, children, signs, d, upcard, view),
        };
        let mut total = 0.0;
        let mut max_gap = 0.0f64;
        let mut add = |upcard: u8, outcome: GameOutcome| {
            let outcome = self.certified(outcome, prizes, p, upcard, d)?;
            total += outcome.value;
            max_gap = max_gap.max(outcome.gap);
            Ok(())
        };
        let mut pairs = views.chunks_exact(2);
        for (i, pair) in (&mut pairs).enumerate() {
            let [(c0, view0), (c1, view1)] = [pair[0], pair[1]];
            fill(first, 2 * i, c0, view0);
            fill(second, 2 * i + 1, c1, view1);
            let [o0, o1] = solver.solve_pair(first, second, rows, cols);
            add(c0, o0)?;
            add(c1, o1)?;
        }
        if let [(upcard, view)] = *pairs.remainder() {
            fill(first, views.len() - 1, upcard, view);
            add(upcard, solver.solve(first, rows, cols))?;
        }
        Ok((total / k as f64, max_gap, views.len() as u64))
    }

    /// `outcome`, the game under `upcard` of pattern `p` at score difference `d` in the
    /// slice of `prizes`, if certified; else the error that names it.
    fn certified(
        &self,
        outcome: GameOutcome,
        prizes: CardSet,
        p: usize,
        upcard: u8,
        d: i32,
    ) -> Result<GameOutcome, EngineError> {
        if outcome.status == GameStatus::Uncertified {
            return Err(EngineError::Uncertified {
                k: self.layout.k,
                prizes,
                pattern: p,
                upcard,
                d,
                gap: outcome.gap,
            });
        }
        Ok(outcome)
    }

    /// The values of the prepared `win` pattern `p` at the score differences `first..`,
    /// one per slot of `out` ([`UNREACHABLE`] where `reach` leaves d out), and the
    /// largest certificate gap and the games solved: what [`LayerEngine::solve_state`]
    /// gives at each reachable d, bit for bit, with the work reordered. Upcard after
    /// upcard, its game is filled at [`RUN`] consecutive d at a time
    /// ([`matrix_fill::fill_win_run`]) and solved at the reachable ones, in pairs, and
    /// each game's value is added to its d's total, so every total adds the same values
    /// in the same (upcard) order.
    #[allow(clippy::too_many_arguments)]
    fn solve_win_run(
        &self,
        solver: &mut GameSolver,
        scratch: &mut StateScratch,
        p: usize,
        first: i32,
        out: &mut [f64],
        views: &[(u8, &Slice)],
        prizes: CardSet,
        reach: &Reach,
    ) -> Result<(f64, u64), EngineError> {
        debug_assert_eq!(scratch.prepared, Some(p));
        solver.set_start(self.start);
        let (rows, cols, _, _) = self.children.of(p);
        let size = rows * cols;
        if scratch.run_matrices.len() < RUN * size {
            scratch.run_matrices.resize(RUN * size, 0.0);
        }
        out.fill(0.0);
        let live = (first..first + out.len() as i32)
            .filter(|&d| reach.contains_diff(d))
            .count();
        let mut max_gap = 0.0f64;
        for (game, &(upcard, view)) in views.iter().enumerate() {
            let entries = &scratch.win[game * size..][..size];
            for (run, totals) in out.chunks_mut(RUN).enumerate() {
                let d0 = first + (run * RUN) as i32;
                let mut reachable = [0usize; RUN];
                let mut count = 0;
                for j in 0..totals.len() {
                    if reach.contains_diff(d0 + j as i32) {
                        reachable[count] = j;
                        count += 1;
                    }
                }
                if count == 0 {
                    continue;
                }
                let matrices = &mut scratch.run_matrices[..totals.len() * size];
                matrix_fill::fill_win_run(matrices, entries, d0, &view.values);
                let mut add = |j: usize, outcome: GameOutcome| {
                    let outcome = self.certified(outcome, prizes, p, upcard, d0 + j as i32)?;
                    totals[j] += outcome.value;
                    max_gap = max_gap.max(outcome.gap);
                    Ok(())
                };
                let matrix = |j: usize| &matrices[j * size..][..size];
                let mut pairs = reachable[..count].chunks_exact(2);
                for pair in &mut pairs {
                    let [o0, o1] = solver.solve_pair(matrix(pair[0]), matrix(pair[1]), rows, cols);
                    add(pair[0], o0)?;
                    add(pair[1], o1)?;
                }
                if let [j] = *pairs.remainder() {
                    add(j, solver.solve(matrix(j), rows, cols))?;
                }
            }
        }
        let k = self.layout.k as usize;
        for (total, d) in out.iter_mut().zip(first..) {
            if reach.contains_diff(d) {
                *total /= k as f64;
            } else {
                *total = UNREACHABLE;
            }
        }
        Ok((max_gap, (live * views.len()) as u64))
    }
}

/// How many consecutive score differences [`LayerEngine::solve_win_run`] fills a game at
/// at once.
const RUN: usize = 4;

/// What [`LayerEngine::solve_state`] works in, kept from state to state: its two payoff
/// matrices (a fresh pair would be zeroed each time: 4 KB a state) and, for `win`, the
/// current pattern's entries prepared for every score difference.
struct StateScratch {
    matrices: [[f64; MAX_STRATEGIES * MAX_STRATEGIES]; 2],
    /// [`LayerEngine::solve_win_run`]'s matrices, [`RUN`] of them (grown to the largest
    /// game seen).
    run_matrices: Vec<f64>,
    /// The `rows x cols` entries of each upcard's game, upcard after upcard, when
    /// `prepared` names the pattern they were prepared for.
    win: Vec<WinEntry>,
    prepared: Option<usize>,
}

impl Default for StateScratch {
    fn default() -> Self {
        StateScratch {
            matrices: [[0.0; MAX_STRATEGIES * MAX_STRATEGIES]; 2],
            run_matrices: Vec::new(),
            win: Vec::new(),
            prepared: None,
        }
    }
}

impl StateScratch {
    /// Prepares the entries of pattern `p`'s games (its `children` and bid `signs`, one
    /// game per view) when every view is a windowed `win` slice; otherwise leaves the
    /// pattern to [`fill_matrix`].
    fn prepare_win(
        &mut self,
        p: usize,
        children: &[Oriented],
        signs: &[i8],
        views: &[(u8, &Slice)],
    ) {
        self.prepared = None;
        self.win.clear();
        for &(upcard, view) in views {
            let Some(windows) = &view.windows else {
                return;
            };
            for (&child, &sign) in children.iter().zip(signs) {
                let window = windows[child.canonical()];
                let values = view.values.len();
                let entry = WinEntry::new(child, sign, upcard, view.diff_range, window, values);
                let Some(entry) = entry else {
                    return;
                };
                self.win.push(entry);
            }
        }
        self.prepared = Some(p);
    }

    /// For the pattern `p` prepared (`rows x cols` games), the score differences
    /// `lo..hi` outside which its value is exactly -1 (below) or +1 (from `hi` on),
    /// found from the children's windows alone, without a matrix or a solve. An entry is
    /// -1 exactly for d below a threshold (its child's position is below the window, or
    /// for a mirrored child above it) and +1 exactly from another on; a game is exactly
    /// -1 when one of B's columns is all -1 (a saddle point at -1: every entry is at
    /// least -1), exactly +1 when one of A's rows is all +1, and otherwise strictly
    /// between (game values are rationals far from ±1 unless equal); the state is -1
    /// when every game is, +1 when every game is. These are the d the bisection used to
    /// probe one by one: `reference_values.rs` checks the slices bit for bit against
    /// solving every d. `None` when `p` is not prepared.
    fn unsettled_window(&self, p: usize, rows: usize, cols: usize) -> Option<(i32, i32)> {
        if self.prepared != Some(p) {
            return None;
        }
        let size = rows * cols;
        let (mut lo, mut hi) = (i32::MAX, i32::MIN);
        for game in self.win.chunks_exact(size) {
            // the game is -1 for d < max over columns of min over rows of the entry's
            // threshold, +1 for d >= min over rows of max over columns of its other one
            let mut lost_below = i32::MIN;
            for j in 0..cols {
                let column = game[j..].iter().step_by(cols).take(rows);
                lost_below = lost_below.max(column.map(WinEntry::lost_below).min()?);
            }
            let won_from = game
                .chunks_exact(cols)
                .map(|row| row.iter().map(WinEntry::won_from).max())
                .min()??;
            lo = lo.min(lost_below);
            hi = hi.max(won_from);
        }
        Some((lo, hi.max(lo)))
    }
}

/// A state re-solved by [`LayerEngine::recompute_value`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recomputed {
    pub value: f64,
    /// The largest certificate gap of the state's games.
    pub gap: f64,
}

/// Fills `out[i]`, the value at score difference `first_d + i`, for a value that is
/// nondecreasing in d with -1 and +1 as its floor and ceiling: bisection finds the first
/// d above -1 and the last d below +1; only the d between them (and those the search
/// probed) are solved.
fn bisect_window(
    out: &mut [f64],
    first_d: i32,
    solve_at: &mut dyn FnMut(i32) -> Result<f64, EngineError>,
) -> Result<(), EngineError> {
    out.fill(f64::NAN);
    let mut value = |out: &mut [f64], i: usize| -> Result<f64, EngineError> {
        if out[i].is_nan() {
            out[i] = solve_at(first_d + i as i32)?;
        }
        Ok(out[i])
    };
    // lo: first index whose value is above -1 (out.len() if none)
    let (mut a, mut b) = (0, out.len());
    while a < b {
        let m = a + (b - a) / 2;
        if value(out, m)? > -1.0 {
            b = m
        } else {
            a = m + 1
        }
    }
    let lo = a;
    // hi: one past the last index whose value is below +1, at least lo
    let (mut a, mut b) = (lo, out.len());
    while a < b {
        let m = a + (b - a) / 2;
        if value(out, m)? >= 1.0 {
            b = m
        } else {
            a = m + 1
        }
    }
    let hi = a;
    out[..lo].fill(-1.0);
    out[hi..].fill(1.0);
    for i in lo..hi {
        value(out, i)?;
    }
    Ok(())
}

/// The payoff matrix of a state at score difference `d` once `upcard` is revealed:
/// `M[i][j]` when A bids its i-th lowest card and B its j-th, from the children of the
/// state (located in the layer below) and the signs of the bid comparisons.
///
/// Bit for bit what [`Slice::value`] gives entry by entry, with its branches folded for
/// the two layouts a solve reads (dense `points` slices with one value per pattern,
/// windowed `win` slices): for `win`, position `p = d' + diff_range - lo` in a pattern's
/// window is -1 below 0, +1 from `len` on (which covers `d'` beyond the live range),
/// else the stored value; mirrored children read `-d'` and negate. The dense branch is
/// [`matrix_fill::fill_points`] (gathered where the CPU has AVX2).
pub fn fill_matrix(
    objective: Objective,
    matrix: &mut [f64],
    children: &[Oriented],
    signs: &[i8],
    d: i32,
    upcard: u8,
    below: &Slice,
) {
    let c = i32::from(upcard);
    let entries = matrix.iter_mut().zip(children).zip(signs);
    match (objective, &below.windows) {
        (Objective::Points, None) if below.diff_range == 0 => {
            matrix_fill::fill_points(matrix, children, signs, upcard, &below.values)
        }
        (Objective::Win, Some(windows)) => {
            let range = below.diff_range;
            for ((m, &child), &s) in entries {
                let shifted = child.orient_diff(d + c * i32::from(s));
                let w = windows[child.canonical()];
                let at = shifted + range - i32::from(w.lo);
                let v = if at < 0 {
                    -1.0
                } else if at >= i32::from(w.len) {
                    1.0
                } else {
                    below.values[w.start as usize + at as usize]
                };
                *m = child.orient(v);
            }
        }
        (Objective::Points, _) => {
            for ((m, &child), &s) in entries {
                *m = f64::from(c * i32::from(s)) + below.value(child, 0);
            }
        }
        (Objective::Win, None) => {
            for ((m, &child), &s) in entries {
                *m = below.value(child, d + c * i32::from(s));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reach::is_reachable;
    use crate::solution::InMemorySolution;

    /// The slices of `below` that the slice of `prizes` reads, by upcard.
    fn views_of(prizes: CardSet, below: &[Slice]) -> Vec<(u8, &Slice)> {
        LayerEngine::dependencies(prizes)
            .map(|(c, rest)| (c, &below[prize_rank(rest) as usize]))
            .collect()
    }

    /// Calls `visit(engine, scratch, prizes, views, range, p)` for every pattern `p` of 8
    /// slices (of prize set `prizes`, reading `views`, live score differences up to
    /// `range`) of every layer from 2 on of the solved `n`-card win game, with `scratch`
    /// prepared for it (every such pattern is: its slices below are windowed).
    fn for_sampled_win_patterns(
        n: u8,
        mut visit: impl FnMut(&LayerEngine, &mut StateScratch, CardSet, &[(u8, &Slice)], i32, usize),
    ) {
        let solution = InMemorySolution::solve(n, Objective::Win).expect("solves");
        let mut scratch = StateScratch::default();
        for k in 2..=n {
            let engine = LayerEngine::new(n, k, Objective::Win);
            let slices = solution.layers[k as usize].len();
            for rank in (0..slices).step_by(slices.div_ceil(8)) {
                let prizes = prize_unrank(rank as u32, k);
                let views = views_of(prizes, &solution.layers[k as usize - 1]);
                let range = Objective::Win.diff_range(prizes);
                for p in 0..engine.layout.canonical_count() {
                    let (_, _, children, signs) = engine.children.of(p);
                    scratch.prepare_win(p, children, signs, &views);
                    assert_eq!(scratch.prepared, Some(p), "k={k}: windowed slices below");
                    visit(&engine, &mut scratch, prizes, &views, range, p);
                }
            }
        }
    }

    fn bits(m: &[f64]) -> Vec<u64> {
        m.iter().map(|v| v.to_bits()).collect()
    }

    /// The prepared `win` fill, on both paths, gives, bit for bit, the matrices of
    /// [`fill_matrix`]: every sampled pattern of the 7-card game, every upcard, every
    /// live score difference that can occur and some beyond; each entry is exactly -1
    /// below its [`WinEntry::lost_below`] and exactly +1 from its [`WinEntry::won_from`]
    /// on, and nowhere else.
    #[test]
    fn prepared_win_fill_equals_fill_matrix_bit_for_bit() {
        let mut matrices = 0u64;
        for_sampled_win_patterns(7, |engine, scratch, prizes, views, range, p| {
            let (k, (rows, cols, children, signs)) = (engine.layout.k, engine.children.of(p));
            let size = rows * cols;
            let (mut got, mut want) = (vec![f64::NAN; size], vec![f64::NAN; size]);
            let reachable = (-range - 2..=range + 2).filter(|&d| is_reachable(7, prizes, d));
            for d in reachable {
                for (game, &(c, view)) in views.iter().enumerate() {
                    let entries = &scratch.win[game * size..][..size];
                    fill_matrix(Objective::Win, &mut want, children, signs, d, c, view);
                    // the portable path, and the AVX2 one where the CPU has it
                    matrix_fill::fill_win_portable(&mut got, entries, d, &view.values);
                    assert_eq!(bits(&got), bits(&want), "k={k} p={p} d={d} c={c}");
                    matrix_fill::fill_win(&mut got, entries, d, &view.values);
                    assert_eq!(bits(&got), bits(&want), "k={k} p={p} d={d} c={c}");
                    // and each entry is exactly -1 / +1 where its thresholds say
                    for (&v, e) in got.iter().zip(entries) {
                        assert_eq!(v == -1.0, d < e.lost_below(), "{e:?} d={d}: {v}");
                        assert_eq!(v == 1.0, d >= e.won_from(), "{e:?} d={d}: {v}");
                    }
                    matrices += 1;
                }
            }
        });
        assert!(matrices > 100_000, "{matrices} matrices");
    }

    /// The `win` run fill gives, game by game, [`fill_matrix`]'s matrices bit for bit at
    /// the score differences that can occur (the others read placeholders, and are not
    /// solved): runs of four (the AVX2 path where the CPU has it) and three (one by one)
    /// and the portable run of four, from every start around the live score
    /// differences, every sampled pattern of the 7-card game.
    #[test]
    fn win_run_fill_equals_fill_matrix_bit_for_bit() {
        let mut matrices = 0u64;
        for_sampled_win_patterns(7, |engine, scratch, prizes, views, range, p| {
            let (k, (rows, cols, children, signs)) = (engine.layout.k, engine.children.of(p));
            let size = rows * cols;
            let mut want = vec![f64::NAN; size];
            for (game, &(c, view)) in views.iter().enumerate() {
                let entries = &scratch.win[game * size..][..size];
                for (d0, run) in (-range - 5..=range + 2).flat_map(|d0| [(d0, 4), (d0, 3)]) {
                    let (mut got, mut portable) =
                        (vec![f64::NAN; run * size], vec![f64::NAN; run * size]);
                    matrix_fill::fill_win_run(&mut got, entries, d0, &view.values);
                    matrix_fill::fill_win_run_portable(&mut portable, entries, d0, &view.values);
                    let games = got.chunks_exact(size).zip(portable.chunks_exact(size));
                    for ((got, portable), d) in games.zip(d0..) {
                        if !is_reachable(7, prizes, d) {
                            continue;
                        }
                        fill_matrix(Objective::Win, &mut want, children, signs, d, c, view);
                        assert_eq!(bits(got), bits(&want), "k={k} p={p} d={d} run {run}");
                        assert_eq!(bits(portable), bits(&want), "k={k} p={p} d={d}");
                        matrices += 1;
                    }
                }
            }
        });
        assert!(matrices > 100_000, "{matrices} matrices");
    }

    /// [`LayerEngine::solve_win_run`] gives, bit for bit, the values and the largest gap
    /// of [`LayerEngine::solve_state`] at every d that can occur (the values it stores,
    /// and those the coordinator's checks and `verify` recompute), and the placeholder
    /// [`UNREACHABLE`] at the others, where it solves nothing: every sampled pattern of
    /// the 7-card win game, a run over every live d.
    #[test]
    fn win_runs_equal_states_solved_one_by_one() {
        let mut solver = GameSolver::new();
        let (mut states, mut skipped) = (0u64, 0u64);
        for_sampled_win_patterns(7, |engine, scratch, prizes, views, range, p| {
            let k = engine.layout.k;
            let reach = Reach::of(7, prizes);
            let first = -range;
            let mut run = vec![0.0; (2 * range + 1) as usize];
            let (run_gap, games) = engine
                .solve_win_run(
                    &mut solver,
                    scratch,
                    p,
                    first,
                    &mut run,
                    views,
                    prizes,
                    &reach,
                )
                .expect("certified");
            assert_eq!(games, reach.count() as u64 * u64::from(k));
            let mut gap = 0.0f64;
            for (&got, d) in run.iter().zip(first..) {
                if !reach.contains_diff(d) {
                    assert_eq!(got.to_bits(), UNREACHABLE.to_bits(), "k={k} p={p} d={d}");
                    skipped += 1;
                    continue;
                }
                let (want, state_gap, _) = engine
                    .solve_state(&mut solver, scratch, p, d, views, prizes)
                    .expect("certified");
                assert_eq!(got.to_bits(), want.to_bits(), "k={k} p={p} d={d}");
                gap = gap.max(state_gap);
                states += 1;
            }
            assert_eq!(run_gap.to_bits(), gap.to_bits(), "k={k} p={p}");
        });
        assert!(states > 10_000, "{states} states");
        assert!(
            skipped > 1_000,
            "{skipped} score differences that cannot occur"
        );
    }

    /// The window of d read off the children's windows is exactly where the values of a
    /// 7-card win game solved at every d (no windows, no bisection) are neither -1 nor
    /// +1: -1.0 below it, +1.0 from its end on, strictly between inside (so it is tight).
    #[test]
    fn unsettled_window_is_where_exhaustive_values_are_not_exact() {
        let n = 7;
        let full = InMemorySolution::solve_with(n, Objective::Win, DiffSearch::Exhaustive)
            .expect("solves");
        let mut scratch = StateScratch::default();
        let mut states = 0u64;
        for k in 2..=n {
            let engine = LayerEngine::new(n, k, Objective::Win);
            let below = &full.layers[k as usize - 1];
            for (rank, slice) in full.layers[k as usize].iter().enumerate() {
                let prizes = prize_unrank(rank as u32, k);
                let views = views_of(prizes, below);
                let range = Objective::Win.diff_range(prizes);
                for p in 0..engine.layout.canonical_count() {
                    let (rows, cols, children, signs) = engine.children.of(p);
                    scratch.prepare_win(p, children, signs, &views);
                    let (lo, hi) = scratch.unsettled_window(p, rows, cols).expect("prepared");
                    let at = Oriented::new(p as u32, false);
                    for d in -range..=range {
                        let v = slice.value(at, d);
                        if !is_reachable(n, prizes, d) {
                            assert!(v.is_nan() || v.abs() == 1.0, "placeholder or outside");
                            continue;
                        }
                        let want = match d {
                            d if d < lo => v == -1.0,
                            d if d >= hi => v == 1.0,
                            _ => -1.0 < v && v < 1.0,
                        };
                        assert!(want, "k={k} prizes {prizes} p={p} d={d}: {v} vs {lo}..{hi}");
                        states += 1;
                    }
                }
            }
        }
        assert!(states > 100_000, "{states} states");
    }

    /// A pattern whose slices below are not windowed (layer 1 reads the dense terminal
    /// slice) is left to [`fill_matrix`].
    #[test]
    fn dense_slices_below_are_not_prepared() {
        let engine = LayerEngine::new(3, 1, Objective::Win);
        let terminal = terminal_slice();
        let (_, _, children, signs) = engine.children.of(0);
        let mut scratch = StateScratch::default();
        scratch.prepare_win(0, children, signs, &[(2, &terminal)]);
        assert_eq!(scratch.prepared, None);
    }
}
