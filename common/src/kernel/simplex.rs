//! The pivot loop of the condensed-tableau simplex: one game's run under Dantzig's or
//! Bland's rule ([`Game::run`]), and two games' Dantzig runs interleaved pivot by pivot
//! ([`run_pair`]), each game making the same pivots as alone.

use super::lanes::Isa;
use super::{B_LABEL, Game, Next, PIVOT_EPS, PivotRule, PivotStart};

/// Both games' Dantzig runs, a pivot of each in turn (both choices first, then both
/// pivots, so that one game's choice overlaps the other's pivot), then whichever is
/// still running on its own. Each game makes exactly the pivots [`Game::run`] makes.
#[inline(always)]
pub(super) fn run_pair<I: Isa, const B: usize>(
    first: &mut Game,
    second: &mut Game,
    m: [&[f64]; 2],
    ranges: [(f64, f64); 2],
    start: PivotStart,
) -> [bool; 2] {
    let rule = PivotRule::Dantzig;
    first.begin::<I, B>(m[0], ranges[0].0, ranges[0].1);
    second.begin::<I, B>(m[1], ranges[1].0, ranges[1].1);
    let max_pivots = first.max_pivots(rule);
    for n in 0..max_pivots {
        let a = first.next_pivot::<I, B>(n, rule, start);
        let b = second.next_pivot::<I, B>(n, rule, start);
        if let Next::Pivot { p, q, inv } = a {
            first.apply::<I, B>(p, q, inv);
        }
        if let Next::Pivot { p, q, inv } = b {
            second.apply::<I, B>(p, q, inv);
        }
        match (a, b) {
            (Next::Pivot { .. }, Next::Pivot { .. }) => {}
            (Next::Pivot { .. }, done) => {
                return [first.resume::<I, B>(n + 1, rule, start), done.converged()];
            }
            (done, Next::Pivot { .. }) => {
                return [done.converged(), second.resume::<I, B>(n + 1, rule, start)];
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
        m: &[f64],
        lo: f64,
        range: f64,
        rule: PivotRule,
        start: PivotStart,
    ) -> bool {
        self.begin::<I, B>(m, lo, range);
        self.resume::<I, B>(0, rule, start)
    }

    /// Fills the tableau from `m` rescaled by `lo` and `range`, and labels the rows and
    /// columns.
    #[inline(always)]
    pub(super) fn begin<I: Isa, const B: usize>(&mut self, m: &[f64], lo: f64, range: f64) {
        let (rows, cols) = (self.rows, self.cols);
        let inv_range = 1.0 / range;
        I::fill::<B>(&mut self.tableau[..=cols], m, rows, lo, inv_range);
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
        from: usize,
        rule: PivotRule,
        start: PivotStart,
    ) -> bool {
        for n in from..self.max_pivots(rule) {
            match self.next_pivot::<I, B>(n, rule, start) {
                Next::Pivot { p, q, inv } => self.apply::<I, B>(p, q, inv),
                stop => return stop.converged(),
            }
        }
        false
    }

    /// The pivot number `n` of the run chooses.
    #[inline(always)]
    pub(super) fn next_pivot<I: Isa, const B: usize>(
        &self,
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
        match I::leaving_row::<B>(
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
    pub(super) fn apply<I: Isa, const B: usize>(&mut self, p: usize, q: usize, inv: f64) {
        I::pivot::<B>(&mut self.tableau[..=self.cols], self.rows, p, q, inv);
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
