//! Cards from Python: a hand or a prize set as any iterable of card numbers (a list,
//! a set, a range, a NumPy array) or as the command line's text (`"1,3,7"`), checked
//! like the command line's (`1..=n`, none twice), with its messages.

use gops_common::cards::{CardSet, parse_cards};
use gops_common::state::GameState;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::value_error;

/// The cards of `cards` in the `n`-card game; `what` names them in messages (`a`).
pub fn card_set(cards: &Bound<'_, PyAny>, n: u8, what: &str) -> PyResult<CardSet> {
    if let Ok(text) = cards.cast::<PyString>() {
        return parse_cards(&text.to_cow()?, n, what).map_err(value_error);
    }
    let iter = cards.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: expected card numbers (a list, set or array of ints, or text like \"1,3,7\"), got {}",
            cards.get_type().name().map_or_else(|_| "?".into(), |t| t.to_string())
        ))
    })?;
    let mut numbers = Vec::new();
    for card in iter {
        let card: i64 = card?
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{what}: card numbers must be ints")))?;
        numbers.push(card.to_string());
    }
    parse_cards(&numbers.join(","), n, what).map_err(value_error)
}

/// A state of the `n`-card game from Python's arguments.
pub fn game_state(
    n: u8,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    prizes: &Bound<'_, PyAny>,
    diff: i64,
) -> PyResult<GameState> {
    GameState::new(
        n,
        card_set(a, n, "a")?,
        card_set(b, n, "b")?,
        card_set(prizes, n, "prizes")?,
        diff,
    )
    .map_err(value_error)
}
