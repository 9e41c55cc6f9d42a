//! The two objectives of DESIGN §1 and the slice width each gives a prize set.

use std::fmt;
use std::str::FromStr;

use crate::cards::CardSet;

/// As text (command lines, manifests, JSON): `points` or `win`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// Maximise the expected final score difference.
    Points,
    /// Maximise P(win) - P(loss); the state carries the score difference `d`.
    Win,
}

impl Objective {
    pub fn name(self) -> &'static str {
        match self {
            Objective::Points => "points",
            Objective::Win => "win",
        }
    }

    /// The live score differences of a state with prizes `prizes` left: `points` does not
    /// depend on `d` and keeps only `d = 0`; `win` keeps `-sum..=sum`, outside which the
    /// value is exactly -1 or +1.
    pub fn diff_range(self, prizes: CardSet) -> i32 {
        match self {
            Objective::Points => 0,
            Objective::Win => prizes.sum() as i32,
        }
    }

    /// Values stored per pattern in the slice of `prizes`.
    pub fn slice_width(self, prizes: CardSet) -> usize {
        2 * self.diff_range(prizes) as usize + 1
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Objective {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "points" => Ok(Objective::Points),
            "win" => Ok(Objective::Win),
            other => Err(format!(
                "unknown objective '{other}': expected 'points' or 'win'"
            )),
        }
    }
}
