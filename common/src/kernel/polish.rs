//! The polish of a simplex solution: both strategies recomputed from the final basis on
//! the original matrix by Gaussian elimination, which discards the error the pivots
//! accumulated. Rare (only when the certificate is above `POLISH_BELOW`), so one
//! portable copy serves both paths.

use super::{B_LABEL, Game, GameOutcome, MAX_STRATEGIES, normalise};

impl Game {
    /// Polishes the strategies of `outcome` and keeps the polished ones if their
    /// certificate is smaller; otherwise restores the simplex's.
    #[inline(never)]
    pub(super) fn polish_or_keep(&mut self, m: &[f64], outcome: GameOutcome) -> GameOutcome {
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
    /// Returns false, leaving the strategies unspecified, when the basis system is
    /// singular or infeasible.
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
