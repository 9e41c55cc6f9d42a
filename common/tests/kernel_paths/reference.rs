//! The kernel as it was at commit 0bf24c6 (row-major tableau, portable code only), kept
//! verbatim but for this header and its visibility as the reference that the current
//! kernel's paths must match bit for bit: same values, gaps and strategies.

#![allow(dead_code)]

/// The largest number of strategies per player.
pub const MAX_STRATEGIES: usize = 16;

/// Simplex solutions whose gap exceeds this times the scale are polished.
const POLISH_BELOW: f64 = 1e-13;

/// A game is certified when its gap is at most this times `max(1, max |M|)`.
pub const GAP_TOLERANCE: f64 = 1e-9;

/// Tableau row length: the cols + 1 used entries padded to a multiple of [`LANES`] (with
/// at most one zero), so row operations run over whole vectors with no remainder loop.
const STRIDE: usize = (MAX_STRATEGIES + 1).div_ceil(LANES) * LANES;
const _: () = assert!(
    STRIDE >= MAX_STRATEGIES + 2,
    "a row always has its padding entry"
);
/// f64 lanes of the narrowest vector unit (SSE2, NEON).
const LANES: usize = 2;
/// Entries of the rescaled tableau within this of zero count as zero.
const PIVOT_EPS: f64 = 1e-11;
/// How far below zero a basic variable may drift in the ratio test (Harris).
const FEASIBILITY_TOL: f64 = 1e-12;
/// Labels at or above this are B's strategies (tableau columns at the start).
const B_LABEL: u8 = MAX_STRATEGIES as u8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameStatus {
    /// A pure equilibrium; the gap is exactly 0.
    Saddle,
    /// Solved by the simplex and certified within [`GAP_TOLERANCE`].
    Solved,
    /// The simplex ended but its certificate exceeds the tolerance: the value is not
    /// to be trusted.
    Uncertified,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameOutcome {
    /// The value of the game for the row player (A).
    pub value: f64,
    /// The certificate `max_i (M y)_i - min_j (x^T M)_j`, >= 0, ~0 at an equilibrium.
    pub gap: f64,
    pub status: GameStatus,
}

/// What the one pass over the matrix found.
enum Prelude {
    NonFinite,
    Saddle(GameOutcome),
    /// No pure equilibrium; the smallest and largest entries.
    Range {
        lo: f64,
        hi: f64,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PivotRule {
    Dantzig,
    Bland,
}

/// A reusable solver with preallocated buffers.
#[derive(Clone)]
pub struct GameSolver {
    /// Rows 0..rows are A's constraints, row `rows` the objective; columns 0..cols
    /// B's variables, column `cols` the right-hand side, then zero padding.
    tableau: [[f64; STRIDE]; MAX_STRATEGIES + 1],
    row_label: [u8; MAX_STRATEGIES],
    col_label: [u8; MAX_STRATEGIES],
    x: [f64; MAX_STRATEGIES],
    y: [f64; MAX_STRATEGIES],
    rows: usize,
    cols: usize,
}

impl Default for GameSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl GameSolver {
    pub fn new() -> Self {
        GameSolver {
            tableau: [[0.0; STRIDE]; MAX_STRATEGIES + 1],
            row_label: [0; MAX_STRATEGIES],
            col_label: [0; MAX_STRATEGIES],
            x: [0.0; MAX_STRATEGIES],
            y: [0.0; MAX_STRATEGIES],
            rows: 0,
            cols: 0,
        }
    }

    /// A's optimal mixed strategy from the last solve (one probability per row).
    pub fn strategy_a(&self) -> &[f64] {
        &self.x[..self.rows]
    }

    /// B's optimal mixed strategy from the last solve (one probability per column).
    pub fn strategy_b(&self) -> &[f64] {
        &self.y[..self.cols]
    }

    /// Solves the game with payoff matrix `m` (row-major, `rows x cols`, payoff to the
    /// row player). Panics if a dimension is 0 or above [`MAX_STRATEGIES`] or `m` has the
    /// wrong length: callers build these matrices themselves.
    pub fn solve(&mut self, m: &[f64], rows: usize, cols: usize) -> GameOutcome {
        assert!((1..=MAX_STRATEGIES).contains(&rows) && (1..=MAX_STRATEGIES).contains(&cols));
        assert_eq!(m.len(), rows * cols);
        self.rows = rows;
        self.cols = cols;
        let (lo, hi) = match self.saddle_check(m) {
            Prelude::Range { lo, hi } => (lo, hi),
            Prelude::Saddle(outcome) => return outcome,
            Prelude::NonFinite => {
                self.x[..rows].fill(f64::NAN);
                self.y[..cols].fill(f64::NAN);
                return GameOutcome {
                    value: f64::NAN,
                    gap: f64::INFINITY,
                    status: GameStatus::Uncertified,
                };
            }
        };
        let scale = lo.abs().max(hi.abs()).max(1.0);
        let certified = |o: &GameOutcome| o.value.is_finite() && o.gap <= GAP_TOLERANCE * scale;
        let mut outcome = self.simplex(m, lo, hi - lo, PivotRule::Dantzig);
        if !certified(&outcome) {
            let (dantzig_x, dantzig_y) = (self.x, self.y);
            let bland = self.simplex(m, lo, hi - lo, PivotRule::Bland);
            if bland.gap < outcome.gap || outcome.gap.is_nan() {
                outcome = bland;
            } else {
                self.x = dantzig_x;
                self.y = dantzig_y;
            }
        }
        if !certified(&outcome) {
            outcome.status = GameStatus::Uncertified;
        }
        outcome
    }

    /// One pass over `m`: its finiteness, each row's minimum and each column's maximum.
    /// A pure equilibrium exists when the largest row minimum equals the smallest column
    /// maximum; otherwise the smallest and largest entries (the least row minimum and the
    /// greatest column maximum) set the rescaling. Minima and maxima are strict
    /// comparisons that keep the earlier of equal entries, so they are exact and the
    /// same on every machine.
    fn saddle_check(&mut self, m: &[f64]) -> Prelude {
        let cols = self.cols;
        let mut col_max = [f64::NEG_INFINITY; MAX_STRATEGIES];
        let col_max = &mut col_max[..cols];
        let mut finite = true;
        let mut best_row = 0;
        let mut lower = f64::NEG_INFINITY;
        let mut lo = f64::INFINITY;
        for (i, row) in m.chunks_exact(cols).enumerate() {
            for (c, &v) in col_max.iter_mut().zip(row) {
                finite &= v * 0.0 == 0.0; // false for infinities and NaN
                *c = if v > *c { v } else { *c };
            }
            let mut row_min = f64::INFINITY;
            for &v in row {
                row_min = if v < row_min { v } else { row_min };
            }
            if row_min > lower {
                lower = row_min;
                best_row = i;
            }
            lo = if row_min < lo { row_min } else { lo };
        }
        if !finite {
            return Prelude::NonFinite;
        }
        let mut best_col = 0;
        let mut upper = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for (j, &c) in col_max.iter().enumerate() {
            if c < upper {
                upper = c;
                best_col = j;
            }
            hi = if c > hi { c } else { hi };
        }
        if lower != upper {
            return Prelude::Range { lo, hi };
        }
        self.x = [0.0; MAX_STRATEGIES];
        self.y = [0.0; MAX_STRATEGIES];
        self.x[best_row] = 1.0;
        self.y[best_col] = 1.0;
        Prelude::Saddle(GameOutcome {
            value: lower,
            gap: 0.0,
            status: GameStatus::Saddle,
        })
    }

    /// Solves the game rescaled to `(m - lo) / range + 1` and maps the result back.
    fn simplex(&mut self, m: &[f64], lo: f64, range: f64, rule: PivotRule) -> GameOutcome {
        let (rows, cols) = (self.rows, self.cols);
        let inv_range = 1.0 / range;
        for (i, (row, entries)) in self
            .tableau
            .iter_mut()
            .zip(m.chunks_exact(cols))
            .enumerate()
        {
            for (t, &v) in row.iter_mut().zip(entries) {
                *t = (v - lo) * inv_range + 1.0;
            }
            row[cols] = 1.0;
            // the padding is at most one entry: a store, not a call to memset
            row[cols + 1] = 0.0;
            self.row_label[i] = i as u8;
        }
        let bottom = &mut self.tableau[rows];
        bottom[..cols].fill(-1.0);
        bottom[cols] = 0.0;
        bottom[cols + 1] = 0.0;
        for j in 0..cols {
            self.col_label[j] = B_LABEL + j as u8;
        }

        let max_pivots = match rule {
            PivotRule::Dantzig => 8 * (rows + cols),
            PivotRule::Bland => 256 * (rows + cols),
        };
        let mut converged = false;
        for _ in 0..max_pivots {
            let Some(q) = self.entering_column(rule) else {
                converged = true;
                break;
            };
            let Some(p) = self.leaving_row(q, rule) else {
                break; // unbounded: impossible for a positive matrix, but never loop
            };
            self.pivot(p, q);
        }
        if !converged {
            return GameOutcome {
                value: f64::NAN,
                gap: f64::INFINITY,
                status: GameStatus::Uncertified,
            };
        }
        self.read_strategies();
        let outcome = self.certify(m);
        let scale = lo.abs().max((lo + range).abs()).max(1.0);
        if outcome.gap <= POLISH_BELOW * scale {
            return outcome;
        }
        let (raw_x, raw_y) = (self.x, self.y);
        if self.polish(m) {
            let polished = self.certify(m);
            if polished.gap < outcome.gap {
                return polished;
            }
        }
        self.x = raw_x;
        self.y = raw_y;
        outcome
    }

    /// Recomputes both strategies from the final basis on the original matrix: with I the
    /// rows whose constraints are tight (A's support) and J the basic columns (B's
    /// support), |I| = |J| = r, solve `M[I,J] y_J = v 1, sum y = 1` and
    /// `x_I^T M[I,J] = v 1^T, sum x = 1` by Gaussian elimination with partial pivoting.
    /// This discards the error the pivots accumulated. Returns false, leaving the
    /// strategies unspecified, when the basis system is singular or infeasible.
    fn polish(&mut self, m: &[f64]) -> bool {
        let (rows, cols) = (self.rows, self.cols);
        let mut support_a = [0usize; MAX_STRATEGIES];
        let mut support_b = [0usize; MAX_STRATEGIES];
        let mut r = 0;
        for &label in &self.col_label[..cols] {
            if label < B_LABEL {
                support_a[r] = label as usize;
                r += 1;
            }
        }
        let mut rb = 0;
        for &label in &self.row_label[..rows] {
            if label >= B_LABEL {
                support_b[rb] = (label - B_LABEL) as usize;
                rb += 1;
            }
        }
        if r != rb || r == 0 {
            return false;
        }
        let (support_a, support_b) = (&support_a[..r], &support_b[..r]);
        let mut solution = [0.0; MAX_STRATEGIES + 1];
        // B: for each i in I, sum_j M[i][j] y_j - v = 0
        if !solve_equalising(
            r,
            |row, col| m[support_a[row] * cols + support_b[col]],
            &mut solution,
        ) {
            return false;
        }
        self.y[..cols].fill(0.0);
        for (col, &j) in support_b.iter().enumerate() {
            self.y[j] = solution[col];
        }
        // A: for each j in J, sum_i x_i M[i][j] - v = 0
        if !solve_equalising(
            r,
            |row, col| m[support_a[col] * cols + support_b[row]],
            &mut solution,
        ) {
            return false;
        }
        self.x[..rows].fill(0.0);
        for (row, &i) in support_a.iter().enumerate() {
            self.x[i] = solution[row];
        }
        let feasible = |p: &[f64]| p.iter().all(|&v| v >= -1e-9);
        if !feasible(&self.x[..rows]) || !feasible(&self.y[..cols]) {
            return false;
        }
        self.x[..rows].iter_mut().for_each(|v| *v = v.max(0.0));
        self.y[..cols].iter_mut().for_each(|v| *v = v.max(0.0));
        normalise(&mut self.x[..rows]);
        normalise(&mut self.y[..cols]);
        true
    }

    fn entering_column(&self, rule: PivotRule) -> Option<usize> {
        let bottom = &self.tableau[self.rows][..self.cols];
        let mut best: Option<usize> = None;
        for (j, &v) in bottom.iter().enumerate() {
            if v >= -PIVOT_EPS {
                continue;
            }
            best = match (best, rule) {
                (None, _) => Some(j),
                (Some(b), PivotRule::Dantzig) if v < bottom[b] => Some(j),
                (Some(b), PivotRule::Bland) if self.col_label[j] < self.col_label[b] => Some(j),
                (keep, _) => keep,
            };
        }
        best
    }

    /// Harris's two-pass ratio test: the largest step that keeps every basic variable
    /// above `-FEASIBILITY_TOL`, then, among the rows that block within that step, the
    /// one with the largest pivot entry (Dantzig) or the smallest label (Bland). Taking
    /// the largest entry among near-ties keeps tiny pivots, which wreck degenerate
    /// games (GOPS games often have equal rows and columns), out of the tableau.
    fn leaving_row(&self, q: usize, rule: PivotRule) -> Option<usize> {
        let cols = self.cols;
        let constraints = &self.tableau[..self.rows];
        let mut max_step = f64::INFINITY;
        for row in constraints {
            let a = row[q];
            if a > PIVOT_EPS {
                // min(), without NaN handling: the step is never NaN for a finite tableau
                // and, if it were, both skip it
                let step = (row[cols] + FEASIBILITY_TOL) / a;
                max_step = if step < max_step { step } else { max_step };
            }
        }
        let mut best: Option<usize> = None;
        for (i, row) in constraints.iter().enumerate() {
            let a = row[q];
            if a <= PIVOT_EPS || row[cols] / a > max_step {
                continue;
            }
            best = match (best, rule) {
                (None, _) => Some(i),
                (Some(b), PivotRule::Dantzig) if a > constraints[b][q] => Some(i),
                (Some(b), PivotRule::Bland) if self.row_label[i] < self.row_label[b] => Some(i),
                (keep, _) => keep,
            };
        }
        best
    }

    /// Pivots on entry (p, q). The right-hand sides of the constraint rows are clamped at
    /// 0: the ratio test may step up to FEASIBILITY_TOL past zero, and the basis must
    /// stay feasible.
    fn pivot(&mut self, p: usize, q: usize) {
        match padded_width(self.cols) {
            2 => self.pivot_width::<2>(p, q),
            4 => self.pivot_width::<4>(p, q),
            6 => self.pivot_width::<6>(p, q),
            8 => self.pivot_width::<8>(p, q),
            10 => self.pivot_width::<10>(p, q),
            12 => self.pivot_width::<12>(p, q),
            14 => self.pivot_width::<14>(p, q),
            16 => self.pivot_width::<16>(p, q),
            _ => self.pivot_width::<STRIDE>(p, q),
        }
    }

    /// [`GameSolver::pivot`] over the first `W` entries of each row: a fixed length, so
    /// the row operations compile to straight vector code.
    fn pivot_width<const W: usize>(&mut self, p: usize, q: usize) {
        let (rows, cols) = (self.rows, self.cols);
        let pivot_row: [f64; W] = self.tableau[p][..W].try_into().expect("W <= STRIDE");
        let inv = 1.0 / pivot_row[q];
        for (i, row) in self.tableau[..=rows].iter_mut().enumerate() {
            if i == p {
                continue;
            }
            let f = row[q] * inv;
            if f != 0.0 {
                for (r, &pr) in row[..W].iter_mut().zip(&pivot_row) {
                    *r -= f * pr;
                }
            }
            row[q] = -f;
            if i < rows {
                row[cols] = row[cols].max(0.0);
            }
        }
        let pivot_row = &mut self.tableau[p];
        for v in pivot_row[..W].iter_mut() {
            *v *= inv;
        }
        pivot_row[q] = inv;
        pivot_row[cols] = pivot_row[cols].max(0.0);
        std::mem::swap(&mut self.row_label[p], &mut self.col_label[q]);
    }

    /// Reads x (A) from the bottom row under A's labels and y (B) from the right column
    /// beside B's labels, normalised to sum 1.
    fn read_strategies(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        // whole arrays: a few stores, where a slice fill calls memset
        self.x = [0.0; MAX_STRATEGIES];
        self.y = [0.0; MAX_STRATEGIES];
        for j in 0..cols {
            let label = self.col_label[j];
            if label < B_LABEL {
                self.x[label as usize] = self.tableau[rows][j].max(0.0);
            }
        }
        for i in 0..rows {
            let label = self.row_label[i];
            if label >= B_LABEL {
                self.y[(label - B_LABEL) as usize] = self.tableau[i][cols].max(0.0);
            }
        }
        normalise(&mut self.x[..rows]);
        normalise(&mut self.y[..cols]);
    }

    /// The certificate and the value from the strategies just read.
    fn certify(&self, m: &[f64]) -> GameOutcome {
        let (lower, upper) = certificate_bounds(
            m,
            self.rows,
            self.cols,
            self.strategy_a(),
            self.strategy_b(),
        );
        GameOutcome {
            value: 0.5 * (lower + upper),
            // NaN stays NaN (and uncertified); a rounding-negative gap is 0
            gap: if upper < lower { 0.0 } else { upper - lower },
            status: GameStatus::Solved,
        }
    }
}

/// `(min_j (x^T M)_j, max_i (M y)_i)`: what A's strategy guarantees and what B's strategy
/// concedes at most. The game value lies between them.
pub fn certificate_bounds(m: &[f64], rows: usize, cols: usize, x: &[f64], y: &[f64]) -> (f64, f64) {
    let (m, x) = (&m[..rows * cols], &x[..rows]);
    // monomorphised on the row length: the sums unroll and stay in registers
    match cols {
        1 => bounds_of::<1>(m, x, y),
        2 => bounds_of::<2>(m, x, y),
        3 => bounds_of::<3>(m, x, y),
        4 => bounds_of::<4>(m, x, y),
        5 => bounds_of::<5>(m, x, y),
        6 => bounds_of::<6>(m, x, y),
        7 => bounds_of::<7>(m, x, y),
        8 => bounds_of::<8>(m, x, y),
        9 => bounds_of::<9>(m, x, y),
        10 => bounds_of::<10>(m, x, y),
        11 => bounds_of::<11>(m, x, y),
        12 => bounds_of::<12>(m, x, y),
        13 => bounds_of::<13>(m, x, y),
        14 => bounds_of::<14>(m, x, y),
        15 => bounds_of::<15>(m, x, y),
        16 => bounds_of::<16>(m, x, y),
        _ => panic!("{cols} columns: at most {MAX_STRATEGIES}"),
    }
}

/// [`certificate_bounds`] for `C` columns. Every sum is added in the same order as
/// `Iterator::sum` would, from the same -0.0 start: (M y)_i over j, and (x^T M)_j over
/// i, all columns at once, row by row. The max and min are strict comparisons in order
/// (NaN sums are skipped, the first of equal sums kept): exact on every machine, where
/// f64::max/min may be reordered or resolve +0/-0 differently by target.
fn bounds_of<const C: usize>(m: &[f64], x: &[f64], y: &[f64]) -> (f64, f64) {
    let y: &[f64; C] = y[..C].try_into().expect("C entries");
    let mut upper = f64::NEG_INFINITY;
    let mut column = [-0.0f64; C];
    for (row, &xi) in m.chunks_exact(C).zip(x) {
        let row: &[f64; C] = row.try_into().expect("C entries");
        let mut v = -0.0;
        for (a, b) in row.iter().zip(y) {
            v += a * b;
        }
        upper = if v > upper { v } else { upper };
        for (c, &v) in column.iter_mut().zip(row) {
            *c += xi * v;
        }
    }
    let lower = column
        .iter()
        .fold(f64::INFINITY, |lower, &v| if v < lower { v } else { lower });
    (lower, upper)
}

/// Solves the (r+1) x (r+1) system `sum_c a(row, c) p_c - v = 0` for each row < r,
/// `sum_c p_c = 1`, writing p into `out[..r]`. Partial pivoting; false if singular.
fn solve_equalising(r: usize, a: impl Fn(usize, usize) -> f64, out: &mut [f64]) -> bool {
    const W: usize = MAX_STRATEGIES + 2;
    let size = r + 1;
    let mut sys = [[0.0f64; W]; MAX_STRATEGIES + 1];
    let mut scale = 0.0f64;
    for (row, eq) in sys.iter_mut().enumerate().take(r) {
        for (col, e) in eq.iter_mut().enumerate().take(r) {
            *e = a(row, col);
            scale = scale.max(e.abs());
        }
        eq[r] = -1.0;
    }
    sys[r][..r].fill(1.0);
    sys[r][size] = 1.0;
    let tiny = 1e-13 * scale.max(1.0);
    for col in 0..size {
        let pivot = (col..size)
            .max_by(|&x, &y| sys[x][col].abs().total_cmp(&sys[y][col].abs()))
            .expect("non-empty range");
        if sys[pivot][col].abs() <= tiny {
            return false;
        }
        sys.swap(col, pivot);
        let (upper, lower) = sys.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for row in lower.iter_mut().take(size - col - 1) {
            let f = row[col] / pivot_row[col];
            if f != 0.0 {
                for (r, p) in row[col..=size].iter_mut().zip(&pivot_row[col..=size]) {
                    *r -= f * p;
                }
            }
        }
    }
    let mut unknowns = [0.0f64; MAX_STRATEGIES + 1];
    for row in (0..size).rev() {
        let mut v = sys[row][size];
        for c in row + 1..size {
            v -= sys[row][c] * unknowns[c];
        }
        unknowns[row] = v / sys[row][row];
    }
    out[..r].copy_from_slice(&unknowns[..r]);
    true
}

/// The used width of a tableau row (cols + 1) rounded up to whole groups of lanes.
fn padded_width(cols: usize) -> usize {
    (cols + 1).div_ceil(LANES) * LANES
}

fn normalise(p: &mut [f64]) {
    let total: f64 = p.iter().sum();
    if total > 0.0 {
        let inv = 1.0 / total;
        p.iter_mut().for_each(|v| *v *= inv);
    }
}
