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
        assert_eq!(uniform(hand), vec![1.0 / 3.0; 3]);
    }
}
