//! The payoff matrix of one game from the slice below, entry by entry: the general fill
//! that every layout goes through when the engine's prepared fills
//! ([`crate::matrix_fill`]) do not apply.

use crate::layout::Oriented;
use crate::matrix_fill;
use crate::objective::Objective;
use crate::slice::Slice;

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
