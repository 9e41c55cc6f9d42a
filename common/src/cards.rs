//! Cards and card sets: a set of cards 1..=N is a bitmask (bit `c - 1` for card `c`),
//! plus parsing and validation of user-given card lists.

use std::fmt;

/// The largest number of cards per suit the solver supports.
pub const MAX_N: u8 = 16;

/// A set of cards drawn from 1..=16, as a bitmask.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CardSet(pub u32);

impl CardSet {
    pub const EMPTY: CardSet = CardSet(0);

    /// All cards 1..=n.
    pub fn full(n: u8) -> CardSet {
        CardSet(((1u64 << n) - 1) as u32)
    }

    pub fn from_cards(cards: &[u8]) -> CardSet {
        CardSet(cards.iter().fold(0u32, |m, &c| m | 1 << (c - 1)))
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, card: u8) -> bool {
        (1..=32).contains(&card) && self.0 & (1 << (card - 1)) != 0
    }

    pub fn without(self, card: u8) -> CardSet {
        CardSet(self.0 & !(1 << (card - 1)))
    }

    pub fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    /// Sum of the card values.
    pub fn sum(self) -> u32 {
        self.iter().map(u32::from).sum()
    }

    /// The cards in ascending order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let card = rest.trailing_zeros() as u8 + 1;
                rest &= rest - 1;
                card
            })
        })
    }

    pub fn to_vec(self) -> Vec<u8> {
        self.iter().collect()
    }
}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self)
    }
}

impl fmt::Display for CardSet {
    /// Comma-separated ascending cards, the same form the command line takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, card) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{card}")?;
        }
        Ok(())
    }
}

/// Errors in user-given game parameters and card lists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("n must be between 1 and {MAX_N}, got {0}")]
    BadN(i64),
    #[error("{what}: '{token}' is not a card number")]
    NotANumber { what: String, token: String },
    #[error("{what}: card {card} is outside 1..={n}")]
    OutOfRange { what: String, card: i64, n: u8 },
    #[error("{what}: card {card} is listed twice")]
    Repeated { what: String, card: u8 },
    #[error("hands and prizes must have the same size: a has {a}, b has {b}, prizes has {c}")]
    SizeMismatch { a: usize, b: usize, c: usize },
    #[error("upcard {upcard} is not among the prizes {prizes}")]
    UpcardNotInPrizes { upcard: i64, prizes: CardSet },
    #[error("there is no upcard to turn: the prize deck is empty")]
    NoPrizesLeft,
    #[error("score difference {diff} is out of range: |diff| must be at most {max}")]
    DiffOutOfRange { diff: i64, max: i64 },
    #[error(
        "score difference {diff} cannot occur with prizes {prizes} left in the {n}-card game: each prize played went to A, to B or was tied, so the difference can only be {reachable}"
    )]
    DiffUnreachable {
        diff: i64,
        prizes: CardSet,
        n: u8,
        reachable: String,
    },
}

/// Checks a game size.
pub fn validate_n(n: i64) -> Result<u8, InputError> {
    if (1..=i64::from(MAX_N)).contains(&n) {
        Ok(n as u8)
    } else {
        Err(InputError::BadN(n))
    }
}

/// Parses a comma-separated card list such as `1,3,7` for a game of `n` cards.
/// The empty string is the empty set. `what` names the list in error messages.
pub fn parse_cards(text: &str, n: u8, what: &str) -> Result<CardSet, InputError> {
    let mut set = CardSet::EMPTY;
    for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let card: i64 = token.parse().map_err(|_| InputError::NotANumber {
            what: what.to_string(),
            token: token.to_string(),
        })?;
        if !(1..=i64::from(n)).contains(&card) {
            return Err(InputError::OutOfRange {
                what: what.to_string(),
                card,
                n,
            });
        }
        let card = card as u8;
        if set.contains(card) {
            return Err(InputError::Repeated {
                what: what.to_string(),
                card,
            });
        }
        set = CardSet(set.0 | 1 << (card - 1));
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        let set = parse_cards("3, 1,7", 8, "a").unwrap();
        assert_eq!(set.to_vec(), vec![1, 3, 7]);
        assert_eq!(set.to_string(), "1,3,7");
        assert_eq!(set.sum(), 11);
        assert_eq!(parse_cards("", 8, "a").unwrap(), CardSet::EMPTY);
    }

    #[test]
    fn parse_rejects_bad_cards() {
        assert!(matches!(
            parse_cards("1,x", 5, "a"),
            Err(InputError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_cards("0", 5, "a"),
            Err(InputError::OutOfRange { card: 0, .. })
        ));
        assert!(matches!(
            parse_cards("6", 5, "a"),
            Err(InputError::OutOfRange { card: 6, .. })
        ));
        assert!(matches!(
            parse_cards("2,2", 5, "a"),
            Err(InputError::Repeated { card: 2, .. })
        ));
    }

    #[test]
    fn n_limits() {
        assert_eq!(validate_n(1), Ok(1));
        assert_eq!(validate_n(16), Ok(16));
        assert_eq!(validate_n(0), Err(InputError::BadN(0)));
        assert_eq!(validate_n(17), Err(InputError::BadN(17)));
        assert_eq!(CardSet::full(16).len(), 16);
    }
}
