//! The simple rules of bidding, each in one place: what a rule bids needs nothing but the
//! decision (the hand, the prizes left, the upcard), never the db.

use gops_common::cards::CardSet;

/// The held card closest to `target`, the lower one on a tie.
///
/// Panics on an empty hand: a decision always has a card to play.
pub fn nearest(hand: CardSet, target: u8) -> u8 {
    hand.iter()
        .min_by_key(|&c| (c.abs_diff(target), c))
        .expect("a decision has a card in hand")
}

/// The card of `hand` whose rank (ascending) is the rank of `upcard` among `prizes`:
/// the highest cards on the highest prizes.
pub fn greedy(hand: CardSet, prizes: CardSet, upcard: u8) -> u8 {
    let rank = prizes.iter().position(|c| c == upcard).unwrap_or(0);
    hand.iter()
        .nth(rank)
        .unwrap_or_else(|| nearest(hand, upcard))
}

/// `upcard-drift`, mined from the 13-card equilibrium (its bid less the upcard, on average,
/// drifts from about +1 at the start to about -1 near the end): the held card nearest
/// the upcard + 1 while 12 or more cards are left, the upcard with 6 to 11, the upcard - 1
/// with 5 or fewer.
pub fn drift(hand: CardSet, prizes: CardSet, upcard: u8) -> u8 {
    let target = match prizes.len() {
        12.. => upcard + 1,
        6..=11 => upcard,
        _ => upcard.saturating_sub(1),
    };
    nearest(hand, target)
}

/// `split`, mined from the equilibrium's bids below the upcard (a quarter of them at the
/// start, four in ten near the end): on the upper half of the prizes left, the held card
/// nearest the upcard + 1; on the lower half (the middle prize of an odd count
/// included), the lowest card held.
pub fn split(hand: CardSet, prizes: CardSet, upcard: u8) -> u8 {
    let rank = prizes.iter().position(|c| c == upcard).unwrap_or(0);
    if 2 * rank >= prizes.len() {
        nearest(hand, upcard + 1)
    } else {
        hand.iter().next().expect("a decision has a card in hand")
    }
}

/// The probability of each card of `hand` (ascending) when `card` is played for sure.
pub fn pure(hand: CardSet, card: u8) -> Vec<f64> {
    hand.iter().map(|c| f64::from(c == card)).collect()
}

/// Every card of `hand` alike.
pub fn uniform(hand: CardSet) -> Vec<f64> {
    vec![1.0 / hand.len() as f64; hand.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(list: &[u8]) -> CardSet {
        CardSet::from_cards(list)
    }

    #[test]
    fn the_rules_pick_the_documented_cards() {
        let hand = cards(&[1, 4, 6]);
        assert_eq!(nearest(hand, 4), 4);
        assert_eq!(nearest(hand, 5), 4, "a tie goes to the lower card");
        assert_eq!(nearest(hand, 3), 4);
        assert_eq!(nearest(hand, 2), 1);
        // upcard-plus-one: one above the prize, or the nearest held card
        assert_eq!(nearest(hand, 3 + 1), 4);
        assert_eq!(nearest(hand, 6 + 1), 6);
        let prizes = cards(&[2, 5, 9]);
        assert_eq!(greedy(hand, prizes, 9), 6);
        assert_eq!(greedy(hand, prizes, 5), 4);
        assert_eq!(greedy(hand, prizes, 2), 1);
        assert_eq!(pure(hand, 4), vec![0.0, 1.0, 0.0]);
        // the drift: +1 with 12 cards left or more, 0 with 6 to 11, -1 with 5 or fewer
        let many = CardSet::from_cards(&(1..=12).collect::<Vec<u8>>());
        assert_eq!(drift(many, many, 5), 6);
        assert_eq!(
            drift(cards(&[1, 4, 6, 9, 10, 11]), cards(&[2, 3, 5, 7, 8, 12]), 5),
            4
        );
        assert_eq!(drift(hand, prizes, 5), 4);
        assert_eq!(drift(hand, prizes, 2), 1);
        // split: the upper half of the prizes one above, the lower half the lowest card
        assert_eq!(split(hand, prizes, 9), 6);
        assert_eq!(
            split(hand, prizes, 5),
            1,
            "the middle of an odd count is the lower half"
        );
        assert_eq!(split(hand, prizes, 2), 1);
        assert_eq!(uniform(hand), vec![1.0 / 3.0; 3]);
    }
}
