//! The start of a solved game, as `gops solve` shows it at the end: the value of the game
//! for A, and A's optimal first bid for each upcard (B's is the same, by symmetry).

use std::fmt;

use gops_common::cards::CardSet;
use gops_common::human::strategy_line;
use gops_common::state::GameState;

use super::QueryError;
use crate::book::Book;

/// The value of a game and A's first bids.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    pub value: f64,
    /// A's hand at the start.
    pub hand: CardSet,
    /// Each upcard with A's optimal bid: the probability of each card of `hand`,
    /// ascending.
    pub first_bids: Vec<(u8, Vec<f64>)>,
}

impl Opening {
    /// The opening of the game `book` holds.
    pub fn of(book: &Book) -> Result<Opening, QueryError> {
        let start = GameState::initial(book.n());
        let first_bids = start
            .prizes
            .iter()
            .map(|upcard| Ok((upcard, book.revealed(&start, upcard)?.strategy_a)))
            .collect::<Result<_, QueryError>>()?;
        Ok(Opening {
            value: book.value(&start)?,
            hand: start.a,
            first_bids,
        })
    }
}

impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "value of the game for A: {}", self.value)?;
        write!(
            f,
            "A's optimal first bid for each upcard (card:probability; B's is the same):"
        )?;
        for (upcard, bid) in &self.first_bids {
            write!(
                f,
                "\n  upcard {upcard:>2}: {}",
                strategy_line(self.hand, bid)
            )?;
        }
        Ok(())
    }
}
