//! Concrete game states `(A, B, C, d)` as users give them, validated, and their place in
//! the canonical store: layer, prize-set rank, canonical pattern and orientation.

use crate::cards::{CardSet, InputError};
use crate::engine::fill_matrix;
use crate::layout::{LayerLayout, Oriented, full_game};
use crate::objective::Objective;
use crate::pattern::Pattern;
use crate::prizes::prize_rank;
use crate::reach::{describe_reachable, is_reachable};
use crate::slice::Slice;

/// A concrete state: the two remaining hands, the remaining prizes and A's score minus
/// B's so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameState {
    pub n: u8,
    pub a: CardSet,
    pub b: CardSet,
    pub prizes: CardSet,
    pub diff: i32,
}

impl GameState {
    /// Validates sizes and the score difference (at most the total of all prizes).
    pub fn new(
        n: u8,
        a: CardSet,
        b: CardSet,
        prizes: CardSet,
        diff: i64,
    ) -> Result<GameState, InputError> {
        if a.len() != b.len() || a.len() != prizes.len() {
            return Err(InputError::SizeMismatch {
                a: a.len(),
                b: b.len(),
                c: prizes.len(),
            });
        }
        let max = i64::from(CardSet::full(n).sum());
        if diff.unsigned_abs() > max.unsigned_abs() {
            return Err(InputError::DiffOutOfRange { diff, max });
        }
        Ok(GameState {
            n,
            a,
            b,
            prizes,
            diff: diff as i32,
        })
    }

    /// The start of the game.
    pub fn initial(n: u8) -> GameState {
        let full = CardSet::full(n);
        GameState {
            n,
            a: full,
            b: full,
            prizes: full,
            diff: 0,
        }
    }

    /// The same state seen from B's side: hands exchanged, score difference negated.
    pub fn swapped_roles(&self) -> GameState {
        GameState {
            a: self.b,
            b: self.a,
            diff: -self.diff,
            ..*self
        }
    }

    /// Cards left per hand: the layer.
    pub fn k(&self) -> u8 {
        self.prizes.len() as u8
    }

    pub fn pattern(&self) -> Pattern {
        Pattern::from_hands(self.a, self.b)
    }

    pub fn prize_rank(&self) -> u32 {
        prize_rank(self.prizes)
    }

    /// Where the state's pattern is stored in its layer.
    pub fn locate(&self, layout: &LayerLayout) -> Oriented {
        debug_assert_eq!(layout.k, self.k());
        layout.locate(self.pattern())
    }

    /// The score difference as the objective's slices see it (0 for `points`).
    pub fn effective_diff(&self, objective: Objective) -> i32 {
        match objective {
            Objective::Points => 0,
            Objective::Win => self.diff,
        }
    }

    /// For `win`, refuses a score difference that cannot occur with the state's prizes
    /// left (a `win` db holds no value there); `points` values do not depend on it.
    pub fn check_reachable(&self, objective: Objective) -> Result<(), InputError> {
        if objective == Objective::Win && !is_reachable(self.n, self.prizes, self.diff) {
            return Err(InputError::DiffUnreachable {
                diff: i64::from(self.diff),
                prizes: self.prizes,
                n: self.n,
                reachable: describe_reachable(self.n, self.prizes),
            });
        }
        Ok(())
    }

    /// The state's value, read from its own slice.
    pub fn value_in(&self, objective: Objective, layout: &LayerLayout, slice: &Slice) -> f64 {
        slice.value(self.locate(layout), self.effective_diff(objective))
    }

    /// The payoff matrix (row-major, `k x k`, rows = A's cards ascending, columns = B's)
    /// of the game after `upcard` is revealed, from the slice of `prizes - upcard` in the
    /// layer below.
    pub fn matrix_after(
        &self,
        objective: Objective,
        upcard: u8,
        below: &LayerLayout,
        below_slice: &Slice,
    ) -> Result<Vec<f64>, InputError> {
        if !self.prizes.contains(upcard) {
            return Err(InputError::UpcardNotInPrizes {
                upcard: i64::from(upcard),
                prizes: self.prizes,
            });
        }
        self.check_reachable(objective)?;
        let (children, signs) = full_game(self.pattern(), below);
        let k = self.k() as usize;
        let mut matrix = vec![0.0; k * k];
        fill_matrix(
            objective,
            &mut matrix,
            &children,
            &signs,
            self.effective_diff(objective),
            upcard,
            below_slice,
        );
        Ok(matrix)
    }
}
