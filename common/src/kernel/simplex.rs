//! The pivot loop of the condensed-tableau simplex: one game's run under Dantzig's or
//! Bland's rule ([`Game::run`]), and two games' Dantzig runs interleaved pivot by pivot
//! ([`run_pair`], driven by [`solve_pair`]), each game making the same pivots as alone.

use super::lanes::Isa;
use super::{
    B_LABEL, BLOCKS, Game, GameOutcome, LANES, Next, PIVOT_EPS, PivotRule, PivotStart, Prelude,
};

/// [`super::GameSolver::solve_pair`] on `isa`: both games' preludes, then their
/// simplex runs interleaved ([`run_pair`]) when both need one.
#[inline(always)]
pub(super) fn solve_pair<I: Isa>(
    isa: I,
    games: &mut [Game; 2],
    start: PivotStart,
    m: [&[f64]; 2],
    rows: usize,
    cols: usize,
) -> [GameOutcome; 2] {
    let [first, second] = games;
    let preludes = [
        first.prelude(isa, m[0], rows, cols),
        second.prelude(isa, m[1], rows, cols),
    ];
    let [
        Prelude::Range { lo: lo0, hi: hi0 },
        Prelude::Range { lo: lo1, hi: hi1 },
    ] = preludes
    else {
        // at most one simplex: nothing to interleave
        let [p0, p1] = preludes;
        return [
            first.conclude(isa, m[0], p0, start),
            second.conclude(isa, m[1], p1, start),
        ];
    };
    let ranges = [(lo0, hi0 - lo0), (lo1, hi1 - lo1)];
    let converged = match (rows + 1).div_ceil(LANES) {
        1 => run_pair::<I, 1>(isa, first, second, m, ranges, start),
        2 => run_pair::<I, 2>(isa, first, second, m, ranges, start),
        3 => run_pair::<I, 3>(isa, first, second, m, ranges, start),
        4 => run_pair::<I, 4>(isa, first, second, m, ranges, start),
        _ => run_pair::<I, BLOCKS>(isa, first, second, m, ranges, start),
    };
    let o0 = first.after_run(m[0], lo0, hi0 - lo0, converged[0]);
    let o1 = second.after_run(m[1], lo1, hi1 - lo1, converged[1]);
    [
        first.finish(m[0], lo0, hi0, o0),
        second.finish(m[1], lo1, hi1, o1),
    ]
}

/// Both games' Dantzig runs, a pivot of each in turn (both choices first, then both
/// pivots, so that one game's choice overlaps the other's pivot), then whichever is
/// still running on its own. Each game makes exactly the pivots [`Game::run`] makes.
#[inline(always)]
pub(super) fn run_pair<I: Isa, const B: usize>(
    isa: I,
    first: &mut Game,
    second: &mut Game,
    m: [&[f64]; 2],
    ranges: [(f64, f64); 2],
    start: PivotStart,
) -> [bool; 2] {
    let rule = PivotRule::Dantzig;
    first.begin::<I, B>(isa, m[0], ranges[0].0, ranges[0].1);
    second.begin::<I, B>(isa, m[1], ranges[1].0, ranges[1].1);
    let max_pivots = first.max_pivots(rule);
    for n in 0..max_pivots {
        let a = first.next_pivot::<I, B>(isa, n, rule, start);
        let b = second.next_pivot::<I, B>(isa, n, rule, start);
        if let Next::Pivot { p, q, inv } = a {
            first.apply::<I, B>(isa, p, q, inv);
        }
        if let Next::Pivot { p, q, inv } = b {
            second.apply::<I, B>(isa, p, q, inv);
        }
        match (a, b) {
            (Next::Pivot { .. }, Next::Pivot { .. }) => {}
            (Next::Pivot { .. }, done) => {
                return [
                    first.resume::<I, B>(isa, n + 1, rule, start),
                    done.converged(),
                ];
            }
            (done, Next::Pivot { .. }) => {
                return [
                    done.converged(),
                    second.resume::<I, B>(isa, n + 1, rule, start),
                ];
            }
            (a, b) => return [a.converged(), b.converged()],
        }
    }
    [false, false]
}

impl Game {
    /// Fills the tableau and pivots until no column enters (true) or the pivot budget is
    /// spent or the problem looks unbounded (false). `B` vectors hold a column.
    #[inline(always)]
    pub(super) fn run<I: Isa, const B: usize>(
        &mut self,
        isa: I,
        m: &[f64],
        lo: f64,
        range: f64,
        rule: PivotRule,
        start: PivotStart,
    ) -> bool {
        self.begin::<I, B>(isa, m, lo, range);
        self.resume::<I, B>(isa, 0, rule, start)
    }

    /// Fills the tableau from `m` rescaled by `lo` and `range`, and labels the rows and
    /// columns.
    #[inline(always)]
    pub(super) fn begin<I: Isa, const B: usize>(&mut self, isa: I, m: &[f64], lo: f64, range: f64) {
        let (rows, cols) = (self.rows, self.cols);
        let inv_range = 1.0 / range;
        isa.fill::<B>(&mut self.tableau[..=cols], m, rows, lo, inv_range);
        for (j, label) in self.col_label[..cols].iter_mut().enumerate() {
            *label = B_LABEL + j as u8;
        }
        for (i, label) in self.row_label[..rows].iter_mut().enumerate() {
            *label = i as u8;
        }
    }

    /// The most pivots a run under `rule` may make.
    #[inline(always)]
    pub(super) fn max_pivots(&self, rule: PivotRule) -> usize {
        match rule {
            PivotRule::Dantzig => 8 * (self.rows + self.cols),
            PivotRule::Bland => 256 * (self.rows + self.cols),
        }
    }

    /// Pivots from pivot number `from` on until no column enters (true) or the budget is
    /// spent or no row leaves (false).
    #[inline(always)]
    pub(super) fn resume<I: Isa, const B: usize>(
        &mut self,
        isa: I,
        from: usize,
        rule: PivotRule,
        start: PivotStart,
    ) -> bool {
        for n in from..self.max_pivots(rule) {
            match self.next_pivot::<I, B>(isa, n, rule, start) {
                Next::Pivot { p, q, inv } => self.apply::<I, B>(isa, p, q, inv),
                stop => return stop.converged(),
            }
        }
        false
    }

    /// The pivot number `n` of the run chooses.
    #[inline(always)]
    pub(super) fn next_pivot<I: Isa, const B: usize>(
        &self,
        isa: I,
        n: usize,
        rule: PivotRule,
        start: PivotStart,
    ) -> Next {
        let q = if n == 0 && rule == PivotRule::Dantzig && start == PivotStart::Minimax {
            // every objective entry is -1 here, so any column may enter; starting from
            // B's best pure strategy saves pivots on average (see PivotStart)
            self.minimax_column
        } else {
            let Some(q) = self.entering_column(rule) else {
                return Next::Converged;
            };
            q
        };
        match isa.leaving_row::<B>(
            &self.tableau,
            self.rows,
            self.cols,
            q,
            rule,
            &self.row_label,
        ) {
            Some((p, inv)) => Next::Pivot { p, q, inv },
            None => Next::Failed,
        }
    }

    /// Pivots on (p, q), `inv = 1 / a_pq`, and exchanges the two labels.
    #[inline(always)]
    pub(super) fn apply<I: Isa, const B: usize>(&mut self, isa: I, p: usize, q: usize, inv: f64) {
        isa.pivot::<B>(&mut self.tableau[..=self.cols], self.rows, p, q, inv);
        std::mem::swap(&mut self.row_label[p], &mut self.col_label[q]);
        self.pivots += 1;
    }

    /// The entering column: among the columns whose objective entry is below
    /// `-PIVOT_EPS`, the most negative (Dantzig; the first of equals) or the one with the
    /// smallest label (Bland).
    #[inline(always)]
    pub(super) fn entering_column(&self, rule: PivotRule) -> Option<usize> {
        let (rows, cols) = (self.rows, self.cols);
        let columns = &self.tableau[..cols];
        match rule {
            PivotRule::Dantzig => {
                // branch-free: a running strict minimum below the threshold
                let mut best = usize::MAX;
                let mut best_v = -PIVOT_EPS;
                for (j, column) in columns.iter().enumerate() {
                    let v = column.flat()[rows];
                    let better = v < best_v;
                    best = if better { j } else { best };
                    best_v = if better { v } else { best_v };
                }
                (best != usize::MAX).then_some(best)
            }
            PivotRule::Bland => {
                let mut best: Option<usize> = None;
                for (j, column) in columns.iter().enumerate() {
                    if column.flat()[rows] >= -PIVOT_EPS {
                        continue;
                    }
                    best = match best {
                        Some(b) if self.col_label[b] <= self.col_label[j] => Some(b),
                        _ => Some(j),
                    };
                }
                best
            }
        }
    }
}
