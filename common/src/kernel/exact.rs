//! The kernel's last resort: the same condensed-tableau simplex in exact rational
//! arithmetic, for the rare game whose f64 runs (Dantzig's, then Bland's) end with a
//! certificate above the tolerance. Such games have rows or columns that differ by
//! 1e-10 to 1e-7 (a 13-card win game at layer 8 had 0.6666666666666666 beside
//! 0.666666596577101, and 0.9166666666666669 beside 0.9166666665816262), which f64
//! pivots cannot order. Every f64 is a dyadic rational, so the game is solved exactly
//! here under Bland's rule (which cannot cycle); the optimal strategies are then rounded
//! to f64 and certified on the original matrix like any other solution. Exact arithmetic
//! gives the same strategies on every machine. Slow (big-integer fractions: about 10 ms
//! for an 8 x 8 game, 0.4 s for 16 x 16), so it runs only where the f64 simplex failed.

use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::B_LABEL;

/// Optimal strategies of the game `m` (row-major, `rows x cols`, finite entries, at
/// least `lo`): A's in `x[..rows]`, B's in `y[..cols]`, each summing to 1 before
/// rounding to f64. False, leaving `x` and `y` unspecified, only if an entry is not
/// finite.
pub(super) fn solve_exact(
    m: &[f64],
    rows: usize,
    cols: usize,
    lo: f64,
    x: &mut [f64],
    y: &mut [f64],
) -> bool {
    let Some(mut tableau) = Tableau::new(m, rows, cols, lo) else {
        return false;
    };
    while let Some(q) = tableau.entering_column() {
        // every column has a positive entry (all payoffs are >= 1 after the shift), so
        // a row always leaves
        let Some(p) = tableau.leaving_row(q) else {
            return false;
        };
        tableau.pivot(p, q);
    }
    tableau.read_strategies(x, y);
    true
}

/// The `(rows + 1) x (cols + 1)` tableau: the payoffs shifted to at least 1, a right
/// column of 1s and a bottom row of -1s; A's strategies label the rows and B's the
/// columns at the start, and a pivot exchanges the two labels.
struct Tableau {
    rows: usize,
    cols: usize,
    /// Row-major, `cols + 1` entries per row.
    entries: Vec<BigRational>,
    row_label: Vec<u8>,
    col_label: Vec<u8>,
}

impl Tableau {
    fn new(m: &[f64], rows: usize, cols: usize, lo: f64) -> Option<Tableau> {
        // 1 - lo exactly: every shifted payoff is >= 1
        let shift = BigRational::one() - BigRational::from_float(lo)?;
        let mut entries = Vec::with_capacity((rows + 1) * (cols + 1));
        for row in m[..rows * cols].chunks_exact(cols) {
            for &v in row {
                entries.push(BigRational::from_float(v)? + &shift);
            }
            entries.push(BigRational::one());
        }
        entries.extend((0..cols).map(|_| -BigRational::one()));
        entries.push(BigRational::zero());
        Some(Tableau {
            rows,
            cols,
            entries,
            row_label: (0..rows as u8).collect(),
            col_label: (0..cols as u8).map(|j| B_LABEL + j).collect(),
        })
    }

    fn at(&self, i: usize, j: usize) -> &BigRational {
        &self.entries[i * (self.cols + 1) + j]
    }

    /// Bland's rule: of the columns whose bottom entry is negative, the one with the
    /// smallest label; None at the optimum.
    fn entering_column(&self) -> Option<usize> {
        (0..self.cols)
            .filter(|&j| self.at(self.rows, j).is_negative())
            .min_by_key(|&j| self.col_label[j])
    }

    /// The ratio test on column `q`: the row with a positive entry there whose right-hand
    /// side over that entry is smallest, ties to the smallest label (Bland).
    fn leaving_row(&self, q: usize) -> Option<usize> {
        let mut best: Option<(usize, BigRational)> = None;
        for i in 0..self.rows {
            let a = self.at(i, q);
            if !a.is_positive() {
                continue;
            }
            let ratio = self.at(i, self.cols) / a;
            let better = match &best {
                None => true,
                Some((b, r)) => {
                    ratio < *r || (ratio == *r && self.row_label[i] < self.row_label[*b])
                }
            };
            if better {
                best = Some((i, ratio));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Pivots on `(p, q)` and exchanges the row's and the column's labels.
    fn pivot(&mut self, p: usize, q: usize) {
        let width = self.cols + 1;
        let inv = self.at(p, q).recip();
        let pivot_row: Vec<BigRational> = (0..width)
            .map(|j| {
                if j == q {
                    inv.clone()
                } else {
                    self.at(p, j) * &inv
                }
            })
            .collect();
        for i in (0..=self.rows).filter(|&i| i != p) {
            let factor = self.at(i, q).clone();
            if factor.is_zero() {
                continue;
            }
            for (j, pivot_entry) in pivot_row.iter().enumerate() {
                let entry = &mut self.entries[i * width + j];
                if j == q {
                    *entry = -(&factor * &inv);
                } else {
                    *entry -= &factor * pivot_entry;
                }
            }
        }
        self.entries[p * width..][..width].clone_from_slice(&pivot_row);
        std::mem::swap(&mut self.row_label[p], &mut self.col_label[q]);
    }

    /// A's strategy from the bottom row under A's labels and B's from the right column
    /// beside B's labels, each over their total (the corner), rounded to f64.
    fn read_strategies(&self, x: &mut [f64], y: &mut [f64]) {
        let (rows, cols) = (self.rows, self.cols);
        x[..rows].fill(0.0);
        y[..cols].fill(0.0);
        let corner = self.at(rows, cols);
        let share = |v: &BigRational| (v / corner).to_f64().unwrap_or(0.0);
        for (j, &label) in self.col_label.iter().enumerate() {
            if label < B_LABEL {
                x[label as usize] = share(self.at(rows, j));
            }
        }
        for (i, &label) in self.row_label.iter().enumerate() {
            if label >= B_LABEL {
                y[(label - B_LABEL) as usize] = share(self.at(i, cols));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{GameSolver, GameStatus, certificate_bounds, normalise};
    use super::solve_exact;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// The exact solution's certificate, `(lower, upper)`, with the strategies rounded
    /// and normalised as the kernel does.
    fn exact_bounds(m: &[f64], k: usize) -> (f64, f64) {
        let lo = m.iter().copied().fold(f64::INFINITY, f64::min);
        let (mut x, mut y) = (vec![0.0; k], vec![0.0; k]);
        assert!(solve_exact(m, k, k, lo, &mut x, &mut y));
        normalise(&mut x);
        normalise(&mut y);
        certificate_bounds(m, k, k, &x, &y)
    }

    /// A random game of size `k`: uniform, or entries in {-1, 0, 1}, or GOPS-like
    /// payoffs with some rows or columns copied and nudged by 1e-13 to 1e-8 (the games
    /// that defeat the f64 pivots).
    fn random_game(k: usize, family: usize, rng: &mut StdRng) -> Vec<f64> {
        let mut m: Vec<f64> = match family {
            0 => (0..k * k).map(|_| rng.random_range(-10.0..10.0)).collect(),
            1 => (0..k * k)
                .map(|_| f64::from(rng.random_range(-1i32..=1)))
                .collect(),
            _ => (0..k * k)
                .map(|_| rng.random_range(0.0..1.0f64).round() / 3.0 + rng.random_range(0.0..0.1))
                .collect(),
        };
        if family == 2 {
            for _ in 0..k / 2 + 1 {
                let (from, to) = (rng.random_range(0..k), rng.random_range(0..k));
                let nudge = 10f64.powi(rng.random_range(-13..=-8));
                for t in 0..k {
                    let (f, d) = if rng.random_bool(0.5) {
                        (from * k + t, to * k + t)
                    } else {
                        (t * k + from, t * k + to)
                    };
                    m[d] = m[f] - nudge;
                }
            }
        }
        m
    }

    #[test]
    fn exact_solutions_certify_and_agree_with_the_kernel() {
        let mut rng = StdRng::seed_from_u64(0x6a3e);
        let mut solver = GameSolver::new();
        for k in 1..=16 {
            // exact solves are slow at the larger sizes (0.4 s at 16 x 16)
            let games = if k <= 10 { 15 } else { 3 };
            for game in 0..games {
                let m = random_game(k, game % 3, &mut rng);
                let scale = m.iter().fold(1.0f64, |s, v| s.max(v.abs()));
                let (lower, upper) = exact_bounds(&m, k);
                assert!(
                    upper - lower <= 1e-14 * scale,
                    "k {k}: gap {:e}: {m:?}",
                    upper - lower
                );
                let o = solver.solve(&m, k, k);
                assert_ne!(o.status, GameStatus::Uncertified, "{m:?}");
                // both bound pairs enclose the one value of the game (up to the
                // rounding of the bounds themselves)
                let slack = o.gap + 1e-14 * scale;
                assert!(
                    lower <= o.value + slack && o.value - slack <= upper,
                    "k {k}: {o:?} vs [{lower}, {upper}]"
                );
            }
        }
    }

    /// N = 13 win, layer 8, prizes {1,2,3,6,7,8,9,11}, hands A {1,2,3,4,5,7,9,12} and B {1,2,3,6,8,10,11,13}, upcard 8, d 34:
    /// entries 0.6666666666666666 beside 0.666666596577101 and 0.9166666666666669
    /// beside 0.9166666665816262. The Dantzig and Bland runs ended with gaps of 2.8e-8,
    /// above the 1e-9 tolerance, which stopped the solve; the exact run certifies it.
    #[test]
    fn regression_13_card_win_game_needs_the_exact_run() {
        let m = [
            9.759004687871354e-1,
            6.66666596577101e-1,
            6.666666666666666e-1,
            6.666666666666666e-1,
            8.333333333333331e-1,
            9.166666666666669e-1,
            9.166666666666669e-1,
            1.0,
            1.0,
            9.759004687871354e-1,
            6.666665900074581e-1,
            6.666666666666666e-1,
            8.333333333333331e-1,
            9.166666666666669e-1,
            9.166666666666669e-1,
            1.0,
            1.0,
            1.0,
            9.759004687871354e-1,
            6.666666666666666e-1,
            8.333333333333331e-1,
            9.166666665816262e-1,
            9.166666665816262e-1,
            1.0,
            1.0,
            1.0,
            1.0,
            6.666666666666666e-1,
            8.333333333333331e-1,
            9.166666665685896e-1,
            9.166666665685896e-1,
            1.0,
            1.0,
            1.0,
            1.0,
            6.666666666666666e-1,
            8.333333333333331e-1,
            9.166666665685896e-1,
            9.166666665685896e-1,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            6.666666666666666e-1,
            8.333333333333331e-1,
            8.333333333333331e-1,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            6.666666666666666e-1,
            6.666666666666666e-1,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            3.333333333333334e-1,
        ];
        let o = GameSolver::new().solve(&m, 8, 8);
        assert_eq!(o.status, GameStatus::Solved, "{o:?}");
        assert!(o.gap < 1e-15, "{o:?}");
        // the exact value is 13/15 (the certificate encloses it)
        assert!((o.value - 13.0 / 15.0).abs() <= o.gap, "{o:?}");
        let (lower, upper) = exact_bounds(&m, 8);
        assert_eq!(o.value, 0.5 * (lower + upper));
    }
}
