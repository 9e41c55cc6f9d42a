//! The certificate of a solution: what A's strategy guarantees and what B's concedes,
//! summed in a fixed order so that it is the same on every machine.

use super::MAX_STRATEGIES;

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

pub(super) fn normalise(p: &mut [f64]) {
    let total: f64 = p.iter().sum();
    if total > 0.0 {
        let inv = 1.0 / total;
        p.iter_mut().for_each(|v| *v *= inv);
    }
}

/// `x` if above 0, else +0 (NaN included): what `f64::max(x, 0.0)` gives on x86-64,
/// written out so that no target may resolve -0 or NaN another way.
#[inline(always)]
pub(super) fn non_negative(x: f64) -> f64 {
    if x > 0.0 { x } else { 0.0 }
}
