//! The saddle-point check: one pass over the matrix that finds a pure equilibrium, or
//! else the range of the entries that the simplex rescales by.

use super::lanes::Isa;
use super::{Game, GameOutcome, GameStatus, MAX_STRATEGIES, Prelude};

impl Game {
    /// One pass over `m`: its finiteness, each row's minimum and each column's maximum.
    /// A pure equilibrium exists when the largest row minimum equals the smallest column
    /// maximum; otherwise the smallest and largest entries (the least row minimum and the
    /// greatest column maximum) set the rescaling. Minima and maxima are strict
    /// comparisons that keep the earlier of equal entries, so they are exact and the
    /// same on every machine.
    #[inline(always)]
    pub(super) fn saddle_check<I: Isa>(&mut self, isa: I, m: &[f64]) -> Prelude {
        // monomorphised on the row length: the column maxima stay in registers (a
        // variable length vectorises with masked stores, which are slow on AMD)
        match self.cols {
            1 => self.saddle_of::<I, 1>(isa, m),
            2 => self.saddle_of::<I, 2>(isa, m),
            3 => self.saddle_of::<I, 3>(isa, m),
            4 => self.saddle_of::<I, 4>(isa, m),
            5 => self.saddle_of::<I, 5>(isa, m),
            6 => self.saddle_of::<I, 6>(isa, m),
            7 => self.saddle_of::<I, 7>(isa, m),
            8 => self.saddle_of::<I, 8>(isa, m),
            9 => self.saddle_of::<I, 9>(isa, m),
            10 => self.saddle_of::<I, 10>(isa, m),
            11 => self.saddle_of::<I, 11>(isa, m),
            12 => self.saddle_of::<I, 12>(isa, m),
            13 => self.saddle_of::<I, 13>(isa, m),
            14 => self.saddle_of::<I, 14>(isa, m),
            15 => self.saddle_of::<I, 15>(isa, m),
            _ => self.saddle_of::<I, 16>(isa, m),
        }
    }

    /// [`GameSolver::saddle_check`] for `C` columns.
    #[inline(always)]
    pub(super) fn saddle_of<I: Isa, const C: usize>(&mut self, isa: I, m: &[f64]) -> Prelude {
        let mut col_max = [f64::NEG_INFINITY; C];
        // per column, the sum of v * 0: a zero while every entry is finite, NaN from the
        // first infinity or NaN on (see `Isa::fold_row`)
        let mut probe = [0.0f64; C];
        let mut best_row = 0;
        let mut lower = f64::NEG_INFINITY;
        let mut lo = f64::INFINITY;
        for (i, row) in m.chunks_exact(C).enumerate() {
            let row: &[f64; C] = row.try_into().expect("C entries");
            isa.fold_row(&mut col_max, &mut probe, row);
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
        if !probe.iter().all(|&p| p == 0.0) {
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
            self.minimax_column = best_col;
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
}
