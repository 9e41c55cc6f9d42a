//! What the engine keeps from state to state: two payoff matrices and, for `win`, the
//! current pattern's game entries prepared for every score difference, with the window
//! of score differences outside which its value is settled at -1 or +1.

use crate::kernel::MAX_STRATEGIES;
use crate::layout::Oriented;
use crate::matrix_fill::WinEntry;
use crate::slice::Slice;

/// How many consecutive score differences the engine fills a game at at once
/// (`by_upcard`).
pub(super) const RUN: usize = 4;

/// What [`LayerEngine::solve_state`] works in, kept from state to state: its two payoff
/// matrices (a fresh pair would be zeroed each time: 4 KB a state) and, for `win`, the
/// current pattern's entries prepared for every score difference.
pub(super) struct StateScratch {
    pub(super) matrices: [[f64; MAX_STRATEGIES * MAX_STRATEGIES]; 2],
    /// The `rows x cols` entries of each upcard's game, upcard after upcard, when
    /// `prepared` names the pattern they were prepared for.
    pub(super) win: Vec<WinEntry>,
    pub(super) prepared: Option<usize>,
}

impl Default for StateScratch {
    fn default() -> Self {
        StateScratch {
            matrices: [[0.0; MAX_STRATEGIES * MAX_STRATEGIES]; 2],
            win: Vec::new(),
            prepared: None,
        }
    }
}

impl StateScratch {
    /// Prepares the entries of pattern `p`'s games (its `children` and bid `signs`, one
    /// game per view) when every view is a windowed `win` slice; otherwise leaves the
    /// pattern to [`fill_matrix`].
    pub(super) fn prepare_win(
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
    pub(super) fn unsettled_window(
        &self,
        p: usize,
        rows: usize,
        cols: usize,
    ) -> Option<(i32, i32)> {
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
