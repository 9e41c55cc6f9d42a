//! The score differences a `win` state can have. With prizes `C` left in the `n`-card
//! game, the prizes played so far are `P = {1..n} - C`, and each went to A (+p), to B
//! (-p) or was tied and discarded (0): the score difference is a signed sum of `P`, and
//! no other value can occur. A slice stores (and the engine solves) only those within
//! its live range `-sum(C)..=sum(C)`; beyond it the value is exactly ±1 anyway.
//!
//! Every child that a reachable state reads is reachable: the child of `(C, d)` under
//! upcard `c` is `(C - c, d + s c)` with `s` in {-1, 0, 1}, a signed sum of `P + c`; and
//! the set is symmetric (`-d` is reachable with `d`), so mirrored children are too.

use crate::cards::CardSet;

/// Words of the bit set: positions `0..2 * sum(1..=16) + 1 = 273`.
const WORDS: usize = 5;

/// The reachable score differences of one prize set, as positions `d + diff_range` in
/// `0..2 diff_range + 1` (the positions of a slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reach {
    diff_range: i32,
    bits: [u64; WORDS],
}

impl Reach {
    /// The reachable score differences with `prizes` left in the `n`-card game, within
    /// `-sum(prizes)..=sum(prizes)`.
    pub fn of(n: u8, prizes: CardSet) -> Reach {
        Self::of_played_within(played(n, prizes), prizes.sum() as i32)
    }

    /// Every position of a slice of `diff_range` (no restriction).
    pub fn full(diff_range: i32) -> Reach {
        let mut reach = Reach {
            diff_range,
            bits: [0; WORDS],
        };
        for pos in 0..(2 * diff_range + 1) as usize {
            reach.set(pos);
        }
        reach
    }

    /// Every signed sum of `cards` (each +c, -c or 0), as a [`Reach`] over
    /// `-sum(cards)..=sum(cards)`: `S | S << c | S >> c` card after card.
    fn signed_sums(cards: CardSet) -> Reach {
        let total = cards.sum() as i32;
        let mut sums = Reach {
            diff_range: total,
            bits: [0; WORDS],
        };
        sums.set(total as usize);
        for c in cards.iter() {
            let (up, down) = (
                sums.shifted_up(usize::from(c)),
                sums.shifted_down(usize::from(c)),
            );
            for ((word, u), d) in sums.bits.iter_mut().zip(up).zip(down) {
                *word |= u | d;
            }
        }
        sums
    }

    /// The bits moved `by` positions up (bits past the last word dropped).
    fn shifted_up(&self, by: usize) -> [u64; WORDS] {
        let mut out = [0u64; WORDS];
        let (words, bits) = (by / 64, by % 64);
        for i in (words..WORDS).rev() {
            let lower = self.bits[i - words];
            let carry = if bits > 0 && i > words {
                self.bits[i - words - 1] >> (64 - bits)
            } else {
                0
            };
            out[i] = (lower << bits) | carry;
        }
        out
    }

    /// The bits moved `by` positions down.
    fn shifted_down(&self, by: usize) -> [u64; WORDS] {
        let mut out = [0u64; WORDS];
        let (words, bits) = (by / 64, by % 64);
        for (i, word) in out.iter_mut().enumerate().take(WORDS - words) {
            let upper = self.bits[i + words];
            let carry = if bits > 0 && i + words + 1 < WORDS {
                self.bits[i + words + 1] << (64 - bits)
            } else {
                0
            };
            *word = (upper >> bits) | carry;
        }
        out
    }

    fn set(&mut self, pos: usize) {
        self.bits[pos / 64] |= 1 << (pos % 64);
    }

    /// The slice's `diff_range` these positions are of.
    pub fn diff_range(&self) -> i32 {
        self.diff_range
    }

    /// Positions of the slice: `2 diff_range + 1`.
    pub fn width(&self) -> usize {
        2 * self.diff_range as usize + 1
    }

    /// Whether position `pos` (`d + diff_range`) is reachable; `false` outside the slice.
    #[inline]
    pub fn contains(&self, pos: usize) -> bool {
        pos < self.width() && self.bits[pos / 64] >> (pos % 64) & 1 == 1
    }

    /// Whether the score difference `d` is reachable (within the live range).
    pub fn contains_diff(&self, d: i32) -> bool {
        d.abs() <= self.diff_range && self.contains((d + self.diff_range) as usize)
    }

    /// Reachable positions in `lo..hi`.
    pub fn count_in(&self, lo: usize, hi: usize) -> usize {
        (lo..hi.min(self.width()))
            .filter(|&p| self.contains(p))
            .count()
    }

    /// Reachable positions of the slice.
    pub fn count(&self) -> usize {
        self.count_in(0, self.width())
    }

    /// The reachable positions, ascending.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.width()).filter(|&p| self.contains(p))
    }

    /// The reachable score differences as ranges of consecutive values, for messages:
    /// `-5..=-3, 0, 3..=5`.
    pub fn describe(&self) -> String {
        let mut runs: Vec<(i32, i32)> = Vec::new();
        for pos in self.positions() {
            let d = pos as i32 - self.diff_range;
            match runs.last_mut() {
                Some((_, hi)) if *hi + 1 == d => *hi = d,
                _ => runs.push((d, d)),
            }
        }
        runs.iter()
            .map(|&(lo, hi)| match hi - lo {
                0 => lo.to_string(),
                1 => format!("{lo}, {hi}"),
                _ => format!("{lo}..={hi}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The prizes already played when `prizes` are left in the `n`-card game.
fn played(n: u8, prizes: CardSet) -> CardSet {
    CardSet(CardSet::full(n).0 & !prizes.0)
}

/// Whether the score difference `d` can occur with `prizes` left in the `n`-card game
/// (beyond the live range too, where the value is exactly ±1).
pub fn is_reachable(n: u8, prizes: CardSet, d: i32) -> bool {
    Reach::signed_sums(played(n, prizes)).contains_diff(d)
}

/// The score differences that can occur with `prizes` left in the `n`-card game (all of
/// them, beyond the live range too), described as [`Reach::describe`] does.
pub fn describe_reachable(n: u8, prizes: CardSet) -> String {
    Reach::signed_sums(played(n, prizes)).describe()
}

impl Reach {
    /// The score differences a state with `prizes` left can have below the state
    /// `(root_prizes, root_diff)` (`prizes` a subset of `root_prizes`): `root_diff` plus
    /// a signed sum of the prizes played since, and their negations (so that mirrored
    /// children, which read `-d`, find theirs), within `-sum(prizes)..=sum(prizes)`.
    /// Closed under children as [`Reach::of`] is: the subtree a book's reader solves on
    /// demand solves only these.
    pub fn within_subtree(root_prizes: CardSet, root_diff: i32, prizes: CardSet) -> Reach {
        let mut reach = Self::below(root_prizes, root_diff, prizes);
        let last = reach.width() - 1;
        let mirrored: Vec<usize> = reach.positions().map(|pos| last - pos).collect();
        for pos in mirrored {
            reach.set(pos);
        }
        reach
    }
}

impl Reach {
    /// The score differences a state with `prizes` left can have below the state
    /// `(root_prizes, root_diff)` (`prizes` a subset of `root_prizes`): `root_diff` plus
    /// a signed sum of the prizes played since, within `-sum(prizes)..=sum(prizes)` (the
    /// others are decided). Unlike [`Reach::within_subtree`], without their negations.
    pub fn below(root_prizes: CardSet, root_diff: i32, prizes: CardSet) -> Reach {
        debug_assert_eq!(prizes.0 & !root_prizes.0, 0, "prizes within the root's");
        let sums = Self::signed_sums(CardSet(root_prizes.0 & !prizes.0));
        let range = prizes.sum() as i32;
        let mut reach = Reach {
            diff_range: range,
            bits: [0; WORDS],
        };
        for d in -range..=range {
            if sums.contains_diff(d - root_diff) {
                reach.set((d + range) as usize);
            }
        }
        reach
    }

    /// The signed sums of `played` within `-range..=range`.
    fn of_played_within(played: CardSet, range: i32) -> Reach {
        let all = Self::signed_sums(played);
        let mut reach = Reach {
            diff_range: range,
            bits: [0; WORDS],
        };
        for d in -range..=range {
            if all.contains_diff(d) {
                reach.set((d + range) as usize);
            }
        }
        reach
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every score difference reached by playing out the prizes not in `left`, by brute
    /// force over who won each.
    fn brute_force(n: u8, left: CardSet) -> std::collections::BTreeSet<i32> {
        let played: Vec<i32> = (1..=n)
            .filter(|&c| !left.contains(c))
            .map(i32::from)
            .collect();
        after_playing(0, &played)
    }

    #[test]
    fn reachable_differences_are_the_signed_sums_of_the_prizes_played() {
        for n in 1..=7u8 {
            for bits in 0..(1u32 << n) {
                let left = CardSet(bits);
                let want = brute_force(n, left);
                let reach = Reach::of(n, left);
                let range = left.sum() as i32;
                for d in -range..=range {
                    assert_eq!(
                        reach.contains_diff(d),
                        want.contains(&d),
                        "{n} {left:?} {d}"
                    );
                }
                for d in -40..=40 {
                    assert_eq!(is_reachable(n, left, d), want.contains(&d));
                }
                assert_eq!(
                    reach.count(),
                    (-range..=range).filter(|d| want.contains(d)).count()
                );
            }
        }
    }

    /// `d0` plus every signed sum of `played` (each +p, -p or 0), by brute force over
    /// who won each.
    fn after_playing(d0: i32, played: &[i32]) -> std::collections::BTreeSet<i32> {
        let mut out = std::collections::BTreeSet::new();
        for code in 0..3usize.pow(played.len() as u32) {
            let (mut d, mut rest) = (d0, code);
            for &p in played {
                d += p * (rest % 3) as i32 - p;
                rest /= 3;
            }
            out.insert(d);
        }
        out
    }

    #[test]
    fn differences_below_a_state_are_its_own_plus_the_signed_sums_since() {
        // from the state (root, d0): the prizes of root not in left played out, by brute
        // force over who won each
        let n = 6;
        for root in [CardSet::full(n), CardSet::from_cards(&[1, 3, 4, 6])] {
            for d0 in [-5, 0, 2] {
                for bits in 0..(1u32 << n) {
                    let left = CardSet(bits);
                    if left.0 & !root.0 != 0 {
                        continue;
                    }
                    let played: Vec<i32> =
                        CardSet(root.0 & !left.0).iter().map(i32::from).collect();
                    let sums = after_playing(d0, &played);
                    let reach = Reach::below(root, d0, left);
                    let range = left.sum() as i32;
                    for d in -range - 3..=range + 3 {
                        let kept = d.abs() <= range && sums.contains(&d);
                        assert_eq!(reach.contains_diff(d), kept, "{root:?} {d0} {left:?} {d}");
                    }
                }
            }
        }
    }

    #[test]
    fn children_of_reachable_states_are_reachable() {
        // the claim the engine rests on: (C, d) reachable => (C - c, d + s c) reachable
        let n = 8;
        for bits in 1..(1u32 << n) {
            let left = CardSet(bits);
            for d in -36..=36 {
                if !is_reachable(n, left, d) {
                    continue;
                }
                assert!(is_reachable(n, left, -d), "symmetric");
                for c in left.iter() {
                    for s in [-1, 0, 1] {
                        let child = d + s * i32::from(c);
                        assert!(is_reachable(n, left.without(c), child), "{left:?} {d} {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_subtree_reaches_its_root_plus_signed_sums_both_ways_and_is_closed_under_children() {
        let n = 7;
        let root = CardSet::from_cards(&[1, 3, 4, 6, 7]);
        for root_diff in [-5, 0, 2, 8] {
            if !is_reachable(n, root, root_diff) {
                continue;
            }
            for bits in 0..(1u32 << n) {
                let left = CardSet(bits & root.0);
                let reach = Reach::within_subtree(root, root_diff, left);
                let played: Vec<i32> = root
                    .iter()
                    .filter(|&c| !left.contains(c))
                    .map(i32::from)
                    .collect();
                let mut want = after_playing(root_diff, &played);
                want.extend(want.clone().into_iter().map(|d| -d));
                let range = left.sum() as i32;
                for d in -range..=range {
                    assert_eq!(reach.contains_diff(d), want.contains(&d), "{left:?} {d}");
                    if reach.contains_diff(d) {
                        // within the whole game's reach, and its children within theirs
                        assert!(Reach::of(n, left).contains_diff(d));
                        for c in left.iter() {
                            let below = Reach::within_subtree(root, root_diff, left.without(c));
                            for s in [-1, 0, 1] {
                                let child = d + s * i32::from(c);
                                let live = child.abs() <= range - i32::from(c);
                                assert_eq!(below.contains_diff(child), live, "{d} {c} {s}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_start_reaches_only_zero_and_messages_name_the_runs() {
        let start = Reach::of(5, CardSet::full(5));
        assert_eq!(start.count(), 1);
        assert!(start.contains_diff(0));
        assert_eq!(start.describe(), "0");
        // 5 played in the 5-card game: -5, 0, 5
        assert_eq!(
            describe_reachable(5, CardSet::from_cards(&[1, 2, 3, 4])),
            "-5, 0, 5"
        );
        assert_eq!(
            describe_reachable(5, CardSet::from_cards(&[1, 2, 3])),
            "-9, -5, -4, -1..=1, 4, 5, 9"
        );
        assert_eq!(Reach::full(2).count(), 5);
        assert_eq!(Reach::full(2).describe(), "-2..=2");
    }
}
