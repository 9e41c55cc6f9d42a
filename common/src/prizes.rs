//! Prize sets: the remaining prize cards of a layer, ranked in colex order so that
//! neighbouring ranks share subsets (DESIGN §3).

use crate::binomial::{BINOMIAL, colex_rank};
use crate::cards::CardSet;

/// Number of prize sets of layer `k` in the game of `n` cards.
pub fn prize_set_count(n: u8, k: u8) -> usize {
    BINOMIAL.get(u32::from(n), u32::from(k)) as usize
}

/// Colex rank of a prize set among the sets of its size.
pub fn prize_rank(prizes: CardSet) -> u32 {
    colex_rank(prizes.iter().map(|c| u32::from(c) - 1)) as u32
}

/// The prize set of `k` cards with colex rank `rank`.
pub fn prize_unrank(rank: u32, k: u8) -> CardSet {
    let mut rank = u64::from(rank);
    let mut mask = 0u32;
    for i in (1..=u32::from(k)).rev() {
        let mut p = i - 1;
        while BINOMIAL.get(p + 1, i) <= rank {
            p += 1;
        }
        rank -= BINOMIAL.get(p, i);
        mask |= 1 << p;
    }
    CardSet(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prize_rank_round_trips_in_colex_order() {
        for k in 0..=7u8 {
            let count = prize_set_count(7, k);
            let mut previous = None;
            for rank in 0..count as u32 {
                let set = prize_unrank(rank, k);
                assert_eq!(set.len(), k as usize);
                assert!(set.0 < 1 << 7);
                assert_eq!(prize_rank(set), rank);
                // colex order is the numeric order of the bitmasks
                if let Some(prev) = previous {
                    assert!(set.0 > prev);
                }
                previous = Some(set.0);
            }
        }
    }
}
