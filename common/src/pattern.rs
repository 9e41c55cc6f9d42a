//! Canonical patterns (DESIGN §2): the value of a state depends on the two hands only through
//! the order of their cards. Merging A and B in increasing order, with a card held by both
//! counted once, gives a word over {A-only, B-only, both}: the *pattern*. This module owns
//! the pattern encoding, its moves (a card played by each side) and its perfect rank among
//! the patterns of one layer.

use crate::binomial::{BINOMIAL, colex_rank, colex_unrank};
use crate::cards::CardSet;

/// Letter bit: A holds the card.
const HELD_BY_A: u32 = 1;
/// Letter bit: B holds the card.
const HELD_BY_B: u32 = 2;
/// Both players hold the card.
const SHARED: u32 = HELD_BY_A | HELD_BY_B;

/// A pattern: two bits per letter, letter 0 in the lowest bits standing for the lowest
/// card. A letter is 1 (A only), 2 (B only) or 3 (both); 0 marks the end.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct Pattern(pub u32);

impl Pattern {
    /// The pattern of two hands.
    pub fn from_hands(a: CardSet, b: CardSet) -> Pattern {
        let mut word = 0u32;
        let mut len = 0;
        for card in (a.0 | b.0).trailing_zeros()..32 {
            let bit = 1u32 << card;
            if (a.0 | b.0) & bit == 0 {
                continue;
            }
            let letter = u32::from(a.0 & bit != 0) | (u32::from(b.0 & bit != 0) << 1);
            word |= letter << (2 * len);
            len += 1;
        }
        Pattern(word)
    }

    /// Number of letters (distinct cards in either hand).
    pub fn len(self) -> u32 {
        (32 - self.0.leading_zeros()).div_ceil(2)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The letter at `pos` (0 = lowest card).
    #[inline]
    pub fn letter(self, pos: u32) -> u32 {
        (self.0 >> (2 * pos)) & 3
    }

    /// Number of cards held by both players.
    pub fn shared(self) -> u32 {
        (self.0 & (self.0 >> 1) & 0x5555_5555).count_ones()
    }

    /// Cards per hand.
    pub fn cards_per_hand(self) -> u32 {
        (self.0 & 0x5555_5555).count_ones()
    }

    /// The same pattern with the roles of A and B exchanged.
    pub fn swapped(self) -> Pattern {
        let x = self.0;
        Pattern(((x & 0x5555_5555) << 1) | ((x >> 1) & 0x5555_5555))
    }

    /// Positions of A's cards, ascending; the i-th is A's i-th lowest card.
    pub fn a_positions(self) -> impl Iterator<Item = u32> {
        (0..self.len()).filter(move |&p| self.letter(p) & HELD_BY_A != 0)
    }

    /// Positions of B's cards, ascending.
    pub fn b_positions(self) -> impl Iterator<Item = u32> {
        (0..self.len()).filter(move |&p| self.letter(p) & HELD_BY_B != 0)
    }

    /// The hands the pattern gives when its letters are laid, lowest first, on `cards`
    /// (ascending, one card per letter): `(A's hand, B's hand)`.
    pub fn place(self, cards: CardSet) -> (CardSet, CardSet) {
        debug_assert_eq!(cards.len() as u32, self.len());
        let (mut a, mut b) = (0u32, 0u32);
        for (pos, card) in cards.iter().enumerate() {
            let bit = 1u32 << (card - 1);
            let letter = self.letter(pos as u32);
            if letter & HELD_BY_A != 0 {
                a |= bit;
            }
            if letter & HELD_BY_B != 0 {
                b |= bit;
            }
        }
        (CardSet(a), CardSet(b))
    }

    /// The pattern as text, lowest card first: `A` (A only), `B` (B only), `S` (both).
    pub fn letters(self) -> String {
        (0..self.len())
            .map(|pos| match self.letter(pos) {
                HELD_BY_A => 'A',
                HELD_BY_B => 'B',
                _ => 'S',
            })
            .collect()
    }

    /// Removes the letter at `pos`, shifting the higher letters down.
    fn remove_letter(self, pos: u32) -> Pattern {
        let low_mask = (1u64 << (2 * pos)) as u32 - 1;
        let high = ((u64::from(self.0) >> (2 * pos + 2)) << (2 * pos)) as u32;
        Pattern((self.0 & low_mask) | high)
    }

    /// A plays the card at position `pos_a` and B the card at `pos_b`: the remaining
    /// pattern and the sign of the bid comparison (+1 when A's card is higher).
    pub fn play(self, pos_a: u32, pos_b: u32) -> (Pattern, i32) {
        debug_assert!(self.letter(pos_a) & HELD_BY_A != 0);
        debug_assert!(self.letter(pos_b) & HELD_BY_B != 0);
        let mut word = self.0 & !(HELD_BY_A << (2 * pos_a));
        word &= !(HELD_BY_B << (2 * pos_b));
        let mut child = Pattern(word);
        let (hi, lo) = (pos_a.max(pos_b), pos_a.min(pos_b));
        if child.letter(hi) == 0 {
            child = child.remove_letter(hi);
        }
        if lo != hi && child.letter(lo) == 0 {
            child = child.remove_letter(lo);
        }
        (child, (pos_a as i32 - pos_b as i32).signum())
    }
}

/// The perfect ranking of the patterns of layer `k` (k cards per hand) of the game with
/// `n` cards: patterns with `t` shared cards have length `2k - t <= n`; they are ordered
/// by `t`, then by the colex rank of the shared positions, then by the colex rank of A's
/// single positions among the rest.
#[derive(Clone, Debug)]
pub struct PatternIndex {
    k: u32,
    t_min: u32,
    /// `offsets[t - t_min]` is the rank of the first pattern with `t` shared cards;
    /// the last entry is the total count.
    offsets: Vec<u64>,
}

impl PatternIndex {
    pub fn new(n: u8, k: u8) -> PatternIndex {
        let (n, k) = (u32::from(n), u32::from(k));
        assert!(k <= n, "layer {k} does not exist in a game of {n} cards");
        let t_min = (2 * k).saturating_sub(n);
        let mut offsets = vec![0u64];
        for t in t_min..=k {
            let count = Self::count_with_shared(k, t);
            offsets.push(offsets.last().unwrap() + count);
        }
        PatternIndex { k, t_min, offsets }
    }

    fn count_with_shared(k: u32, t: u32) -> u64 {
        let len = 2 * k - t;
        BINOMIAL.get(len, t) * BINOMIAL.get(len - t, k - t)
    }

    /// Number of patterns in the layer.
    pub fn count(&self) -> usize {
        *self.offsets.last().unwrap() as usize
    }

    pub fn k(&self) -> u32 {
        self.k
    }

    /// The rank of a pattern of this layer.
    pub fn rank(&self, pattern: Pattern) -> u32 {
        let t = pattern.shared();
        debug_assert_eq!(pattern.cards_per_hand(), self.k);
        debug_assert!(t >= self.t_min);
        let len = pattern.len();
        let shared_rank = colex_rank((0..len).filter(|&p| pattern.letter(p) == SHARED));
        let singles = (0..len).filter(|&p| pattern.letter(p) != SHARED);
        let a_rank = colex_rank(
            singles
                .enumerate()
                .filter(|&(_, p)| pattern.letter(p) == HELD_BY_A)
                .map(|(i, _)| i as u32),
        );
        let per_shared = BINOMIAL.get(2 * (self.k - t), self.k - t);
        (self.offsets[(t - self.t_min) as usize] + shared_rank * per_shared + a_rank) as u32
    }

    /// The pattern of a rank, `rank < count()`.
    pub fn unrank(&self, rank: u32) -> Pattern {
        let rank = u64::from(rank);
        let slot = self.offsets.partition_point(|&o| o <= rank) - 1;
        let t = self.t_min + slot as u32;
        let rel = rank - self.offsets[slot];
        let per_shared = BINOMIAL.get(2 * (self.k - t), self.k - t);
        let len = 2 * self.k - t;
        let mut shared_positions = Vec::with_capacity(t as usize);
        colex_unrank(rel / per_shared, t, &mut shared_positions);
        let mut a_singles = Vec::with_capacity((self.k - t) as usize);
        colex_unrank(rel % per_shared, self.k - t, &mut a_singles);
        let mut word = 0u32;
        let mut single_index = 0u32;
        for pos in 0..len {
            let letter = if shared_positions.contains(&pos) {
                SHARED
            } else {
                let letter = if a_singles.contains(&single_index) {
                    HELD_BY_A
                } else {
                    HELD_BY_B
                };
                single_index += 1;
                letter
            };
            word |= letter << (2 * pos);
        }
        Pattern(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placing_a_pattern_gives_hands_with_that_pattern() {
        let (a, b) = (
            CardSet::from_cards(&[2, 5, 7]),
            CardSet::from_cards(&[5, 6, 9]),
        );
        let pattern = Pattern::from_hands(a, b);
        assert_eq!(pattern.letters(), "ASBAB");
        let lowest = CardSet::full(pattern.len() as u8);
        let (ra, rb) = pattern.place(lowest);
        assert_eq!((ra.to_vec(), rb.to_vec()), (vec![1, 2, 4], vec![2, 3, 5]));
        assert_eq!(pattern.place(a.union(b)), (a, b));
        assert_eq!(Pattern::from_hands(ra, rb), pattern);
    }

    #[test]
    fn layer_sizes_match_design_for_13_cards() {
        let expected = [
            3, 13, 63, 321, 1683, 8989, 45207, 117295, 110641, 37401, 4423, 157, 1,
        ];
        for (k, &want) in (1..=13).zip(expected.iter()) {
            assert_eq!(PatternIndex::new(13, k).count(), want, "layer {k}");
        }
        assert_eq!(PatternIndex::new(13, 0).count(), 1);
    }

    #[test]
    fn rank_is_a_bijection_on_small_layers() {
        for n in 1..=9u8 {
            for k in 0..=n {
                let index = PatternIndex::new(n, k);
                let mut seen = std::collections::HashSet::new();
                for rank in 0..index.count() as u32 {
                    let pattern = index.unrank(rank);
                    assert_eq!(pattern.cards_per_hand(), u32::from(k));
                    assert!(pattern.len() <= u32::from(n));
                    assert!(seen.insert(pattern), "duplicate pattern");
                    assert_eq!(index.rank(pattern), rank);
                }
            }
        }
    }

    #[test]
    fn from_hands_and_play() {
        // A = {1,3}, B = {2,3}: letters A, B, both.
        let a = CardSet::from_cards(&[1, 3]);
        let b = CardSet::from_cards(&[2, 3]);
        let p = Pattern::from_hands(a, b);
        assert_eq!(p, Pattern(1 | 2 << 2 | 3 << 4));
        assert_eq!(p.len(), 3);
        assert_eq!(p.swapped(), Pattern::from_hands(b, a));
        // A plays 3 (pos 2), B plays 2 (pos 1): A wins, remaining A={1}, B={3}.
        let (child, s) = p.play(2, 1);
        assert_eq!(s, 1);
        assert_eq!(
            child,
            Pattern::from_hands(CardSet::from_cards(&[1]), CardSet::from_cards(&[3]))
        );
        // both play the shared 3: tie, remaining A={1}, B={2}.
        let (child, s) = p.play(2, 2);
        assert_eq!(s, 0);
        assert_eq!(child, Pattern(1 | 2 << 2));
    }

    fn hands(n: u8) -> impl Strategy<Value = (CardSet, CardSet)> {
        (0..=n).prop_flat_map(move |k| {
            let pick = proptest::sample::subsequence((1..=n).collect::<Vec<_>>(), k as usize);
            (pick.clone(), pick)
                .prop_map(|(a, b)| (CardSet::from_cards(&a), CardSet::from_cards(&b)))
        })
    }

    proptest! {
        /// Playing on raw hands and then taking the pattern is the same as playing on the
        /// pattern: the reduction commutes with moves.
        #[test]
        fn play_commutes_with_reduction((a, b) in hands(16)) {
            let pattern = Pattern::from_hands(a, b);
            let k = a.len() as u8;
            let index = PatternIndex::new(16, k);
            prop_assert_eq!(index.unrank(index.rank(pattern)), pattern);
            let positions_a: Vec<u32> = pattern.a_positions().collect();
            let positions_b: Vec<u32> = pattern.b_positions().collect();
            for (i, card_a) in a.iter().enumerate() {
                for (j, card_b) in b.iter().enumerate() {
                    let (child, s) = pattern.play(positions_a[i], positions_b[j]);
                    let want = Pattern::from_hands(a.without(card_a), b.without(card_b));
                    prop_assert_eq!(child, want);
                    prop_assert_eq!(s, (i32::from(card_a) - i32::from(card_b)).signum());
                }
            }
        }
    }
}
