//! A state read from text, and the answers written as JSON: the one place for
//! `gops value`/`gops strategy` and the explorer's HTTP API alike.

use gops_common::cards::{CardSet, InputError, parse_cards};
use gops_common::objective::Objective;
use gops_common::state::GameState;
use serde_json::{Value, json};

use super::RevealedGame;

/// A state as text, the way the command line and the explorer's API take it: three
/// comma-separated card lists (`None`: all N cards, the start of the game) and A's score
/// minus B's so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct StateText<'t> {
    pub a: Option<&'t str>,
    pub b: Option<&'t str>,
    pub prizes: Option<&'t str>,
    pub diff: i64,
}

impl StateText<'_> {
    /// The state of the `n`-card game; `names` label A's hand, B's hand and the prizes
    /// in error messages (`--a`, or `a`).
    pub fn parse(&self, n: u8, names: [&str; 3]) -> Result<GameState, InputError> {
        let cards = |text: Option<&str>, what: &str| match text {
            Some(t) => parse_cards(t, n, what),
            None => Ok(CardSet::full(n)),
        };
        GameState::new(
            n,
            cards(self.a, names[0])?,
            cards(self.b, names[1])?,
            cards(self.prizes, names[2])?,
            self.diff,
        )
    }
}

/// `upcard` as a card of `state`'s prizes.
pub fn parse_upcard(state: &GameState, upcard: i64) -> Result<u8, InputError> {
    u8::try_from(upcard)
        .ok()
        .filter(|&c| state.prizes.contains(c))
        .ok_or(InputError::UpcardNotInPrizes {
            upcard,
            prizes: state.prizes,
        })
}

/// The answer of `gops value --json`: `{"n","objective","a","b","prizes","diff","value"}`.
pub fn value_json(objective: Objective, state: &GameState, value: f64) -> Value {
    json!({
        "n": state.n,
        "objective": objective.name(),
        "a": state.a.to_vec(),
        "b": state.b.to_vec(),
        "prizes": state.prizes.to_vec(),
        "diff": state.diff,
        "value": value,
    })
}

/// The answer of `gops strategy --json`: [`value_json`] with the value after the reveal,
/// plus `"upcard"`, `"strategy_a"`, `"strategy_b"` and `"gap"`.
pub fn strategy_json(
    objective: Objective,
    state: &GameState,
    upcard: u8,
    game: &RevealedGame,
) -> Value {
    let mut object = value_json(objective, state, game.value);
    object["upcard"] = json!(upcard);
    object["strategy_a"] = json!(game.strategy_a);
    object["strategy_b"] = json!(game.strategy_b);
    object["gap"] = json!(game.gap);
    object
}
