//! The layer engine (DESIGN §3): computes the slices of layer `k` (one per prize set) from
//! the slices of layer `k - 1`. For a prize set `C`, every canonical pattern, every live
//! score difference and every upcard `c` gives one matrix game whose entries are read from
//! the slice `C - c` below; the state's value is the mean of the k game values.

mod by_upcard;
mod fill;
mod games;
mod scratch;

pub use fill::fill_matrix;
use rayon::prelude::*;
use scratch::StateScratch;

use crate::cards::CardSet;
use crate::kernel::{GameOutcome, GameSolver, GameStatus, PivotStart};
use crate::layout::{ChildTable, LayerLayout};
use crate::matrix_fill;
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
    /// `win`, solving on demand: the root `(prizes, d)` of the subtree this layer is
    /// part of, whose score differences ([`Reach::within_subtree`]) are the only ones
    /// solved; `None` in a whole game's solve.
    subtree: Option<(CardSet, i32)>,
}

/// Canonical patterns per parallel work item.
const PATTERNS_PER_TASK: usize = 64;

impl LayerEngine {
    /// The engine for layer `k >= 1` of the `n`-card game.
    pub fn new(n: u8, k: u8, objective: Objective) -> LayerEngine {
        assert!(k >= 1 && k <= n);
        LayerEngine::between(
            objective,
            LayerLayout::new(n, k),
            LayerLayout::new(n, k - 1),
        )
    }

    /// The engine for the patterns of `layout` over those of `below`, the layer under it
    /// (whole layers, or the [`LayerLayout::restricted`] layers of a subtree, closed
    /// under children: every child of a pattern of `layout` is in `below`).
    pub fn between(objective: Objective, layout: LayerLayout, below: LayerLayout) -> LayerEngine {
        assert!(layout.k >= 1 && layout.k <= layout.n && below.k + 1 == layout.k);
        let children = ChildTable::new(&layout, &below);
        LayerEngine {
            objective,
            diff_search: DiffSearch::Bisect,
            start: PivotStart::default(),
            layout,
            below,
            children,
            every_diff: false,
            subtree: None,
        }
    }

    /// The engine for one layer of a subtree solved on demand ([`LayerEngine::between`]
    /// its restricted layers), whose root is the state of prizes and score difference
    /// `root`: under `win` it solves only the score differences the root can reach.
    pub fn within_subtree(
        objective: Objective,
        layout: LayerLayout,
        below: LayerLayout,
        root: (CardSet, i32),
    ) -> LayerEngine {
        LayerEngine {
            subtree: (objective == Objective::Win).then_some(root),
            ..LayerEngine::between(objective, layout, below)
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
        let (max_gap, games) = if self.by_upcard(&views) {
            let slice = by_upcard::SliceInProgress {
                prizes,
                views: &views,
                reach: &run_reach,
                width,
                diff_range,
            };
            self.solve_win_by_upcard(&slice, &mut dense)?
        } else {
            self.solve_by_pattern(&mut dense, &views, prizes, reach.as_ref(), &run_reach)?
        };
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

    /// [`LayerEngine::solve_slice`]'s values pattern by pattern, each pattern's games
    /// under every upcard in turn: `points`, the first layer, and the exhaustive search.
    fn solve_by_pattern(
        &self,
        dense: &mut [f64],
        views: &[(u8, &Slice)],
        prizes: CardSet,
        reach: Option<&Reach>,
        run_reach: &Reach,
    ) -> Result<(f64, u64), EngineError> {
        let width = self.objective.slice_width(prizes);
        let diff_range = self.objective.diff_range(prizes);
        dense
            .par_chunks_mut(PATTERNS_PER_TASK * width)
            .enumerate()
            .map_init(
                || (GameSolver::new(), StateScratch::default()),
                |(solver, scratch), (task, out)| {
                    let mut max_gap = 0.0f64;
                    let mut games = 0u64;
                    for (offset, values) in out.chunks_exact_mut(width).enumerate() {
                        let p = task * PATTERNS_PER_TASK + offset;
                        let first_d = self.first_d(p, diff_range);
                        let range = &mut values[(first_d + diff_range) as usize..];
                        // for win with the bisection: the window of d that needs solving,
                        // read off the children's windows where they are prepared
                        let mut window = None;
                        if self.objective == Objective::Win {
                            let (rows, cols, children, signs) = self.children.of(p);
                            scratch.prepare_win(p, children, signs, views);
                            if self.diff_search == DiffSearch::Bisect {
                                window = scratch.unsettled_window(p, rows, cols);
                            }
                        }
                        let mut solve_at = |d: i32| -> Result<f64, EngineError> {
                            let (v, gap, n) =
                                self.solve_state(solver, scratch, p, d, views, prizes)?;
                            max_gap = max_gap.max(gap);
                            games += n;
                            Ok(v)
                        };
                        match (self.objective, self.diff_search) {
                            (Objective::Win, DiffSearch::Bisect) => match window {
                                Some(window) => {
                                    let (lo, inside) = settle_outside(range, first_d, window);
                                    for (slot, d) in inside.iter_mut().zip(lo..) {
                                        *slot = match run_reach.contains_diff(d) {
                                            true => solve_at(d)?,
                                            false => UNREACHABLE,
                                        };
                                    }
                                }
                                None => bisect_window(
                                    range,
                                    first_d,
                                    &|d| run_reach.contains_diff(d),
                                    &mut solve_at,
                                )?,
                            },
                            _ => {
                                for (slot, d) in range.iter_mut().zip(first_d..) {
                                    if reach.is_none_or(|r| r.contains_diff(d)) {
                                        *slot = solve_at(d)?;
                                    }
                                }
                            }
                        }
                        self.complete_pattern(p, values, diff_range, reach);
                    }
                    Ok((max_gap, games))
                },
            )
            .try_reduce(|| (0.0, 0), |a, b| Ok((a.0.max(b.0), a.1 + b.1)))
    }

    /// For `win`, the score differences that can occur with `prizes` left (the only
    /// ones solved and stored); `None` for `points`.
    fn reach(&self, prizes: CardSet) -> Option<Reach> {
        (self.objective == Objective::Win && !self.every_diff).then(|| match self.subtree {
            Some((root, root_diff)) => Reach::within_subtree(root, root_diff, prizes),
            None => Reach::of(self.layout.n, prizes),
        })
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
}

impl LayerEngine {
    /// The first score difference solved for canonical pattern `p`: 1 for a symmetric
    /// pattern (a fair game: W(P,C,d) = -W(P,C,-d), so 0 at d = 0 and the rest mirrored),
    /// else the lowest.
    fn first_d(&self, p: usize, diff_range: i32) -> i32 {
        let pattern = self.layout.canonical[p];
        if pattern == pattern.swapped() {
            1
        } else {
            -diff_range
        }
    }

    /// Completes canonical pattern `p`'s values once those from [`LayerEngine::first_d`]
    /// on are solved: a symmetric pattern's 0 at d = 0 and its mirrored half, and
    /// [`UNREACHABLE`] wherever `reach` leaves d out.
    fn complete_pattern(
        &self,
        p: usize,
        values: &mut [f64],
        diff_range: i32,
        reach: Option<&Reach>,
    ) {
        if self.first_d(p, diff_range) == 1 {
            values[diff_range as usize] = 0.0;
            for d in 1..=diff_range {
                values[(diff_range - d) as usize] = -values[(diff_range + d) as usize];
            }
        }
        if let Some(reach) = reach {
            for (pos, value) in values.iter_mut().enumerate() {
                if !reach.contains(pos) {
                    *value = UNREACHABLE;
                }
            }
        }
    }
}

/// A `win` pattern's values from `first_d` on (`range`) outside its unsettled `window`
/// (clamped to them): -1 below it, +1 from its end. The window's first d and the values
/// inside it, left to solve.
fn settle_outside(range: &mut [f64], first_d: i32, (lo, hi): (i32, i32)) -> (i32, &mut [f64]) {
    let last_d = first_d + range.len() as i32;
    let (lo, hi) = (lo.clamp(first_d, last_d), hi.clamp(first_d, last_d));
    let (below, rest) = range.split_at_mut((lo - first_d) as usize);
    let (inside, above) = rest.split_at_mut((hi - lo) as usize);
    below.fill(-1.0);
    above.fill(1.0);
    (lo, inside)
}

/// A state re-solved by [`LayerEngine::recompute_value`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recomputed {
    pub value: f64,
    /// The largest certificate gap of the state's games.
    pub gap: f64,
}

/// Fills `out[i]`, the value at score difference `first_d + i`, for a value that is
/// nondecreasing in d with -1 and +1 as its floor and ceiling: bisection over the d that
/// can occur (`reachable`) finds the first above -1 and the last below +1; only the d
/// between them (and those the search probed) are solved. The d that cannot occur are
/// never solved (their children's values are placeholders) and are left NaN, for
/// [`LayerEngine::complete_pattern`] to mark.
fn bisect_window(
    out: &mut [f64],
    first_d: i32,
    reachable: &dyn Fn(i32) -> bool,
    solve_at: &mut dyn FnMut(i32) -> Result<f64, EngineError>,
) -> Result<(), EngineError> {
    out.fill(f64::NAN);
    let live: Vec<usize> = (0..out.len())
        .filter(|&i| reachable(first_d + i as i32))
        .collect();
    let mut value = |out: &mut [f64], j: usize| -> Result<f64, EngineError> {
        let i = live[j];
        if out[i].is_nan() {
            out[i] = solve_at(first_d + i as i32)?;
        }
        Ok(out[i])
    };
    // lo: the first live index whose value is above -1 (live.len() if none)
    let (mut a, mut b) = (0, live.len());
    while a < b {
        let m = a + (b - a) / 2;
        if value(out, m)? > -1.0 {
            b = m
        } else {
            a = m + 1
        }
    }
    let lo = a;
    // hi: one past the last live index whose value is below +1, at least lo
    let (mut a, mut b) = (lo, live.len());
    while a < b {
        let m = a + (b - a) / 2;
        if value(out, m)? >= 1.0 {
            b = m
        } else {
            a = m + 1
        }
    }
    let hi = a;
    for &i in &live[..lo] {
        out[i] = -1.0;
    }
    for &i in &live[hi..] {
        out[i] = 1.0;
    }
    for j in lo..hi {
        value(out, j)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
