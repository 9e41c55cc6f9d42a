//! Binomial coefficients for the combinatorial ranks of patterns and prize sets.

/// `C(n, r)` for `n, r <= 32`, 0 when `r > n`.
pub fn binomial(n: u32, r: u32) -> u64 {
    if r > n {
        return 0;
    }
    let r = r.min(n - r);
    (0..r).fold(1u64, |acc, i| acc * u64::from(n - i) / u64::from(i + 1))
}

/// A precomputed table of `C(n, r)` for `n, r < 33`, for the hot ranking loops.
pub struct BinomialTable {
    table: [[u64; 33]; 33],
}

impl BinomialTable {
    pub const fn new() -> Self {
        let mut table = [[0u64; 33]; 33];
        let mut n = 0;
        while n < 33 {
            table[n][0] = 1;
            let mut r = 1;
            while r <= n {
                table[n][r] = table[n - 1][r - 1] + if r < n { table[n - 1][r] } else { 0 };
                r += 1;
            }
            n += 1;
        }
        BinomialTable { table }
    }

    #[inline]
    pub fn get(&self, n: u32, r: u32) -> u64 {
        if r > n {
            0
        } else {
            self.table[n as usize][r as usize]
        }
    }
}

impl Default for BinomialTable {
    fn default() -> Self {
        Self::new()
    }
}

pub static BINOMIAL: BinomialTable = BinomialTable::new();

/// Colex rank of a combination given as ascending 0-based positions.
pub fn colex_rank(positions: impl Iterator<Item = u32>) -> u64 {
    positions
        .enumerate()
        .map(|(i, p)| BINOMIAL.get(p, i as u32 + 1))
        .sum()
}

/// The `r` ascending 0-based positions of the combination with colex rank `rank`.
pub fn colex_unrank(mut rank: u64, r: u32, out: &mut Vec<u32>) {
    out.clear();
    for i in (1..=r).rev() {
        // largest p with C(p, i) <= rank
        let mut p = i - 1;
        while BINOMIAL.get(p + 1, i) <= rank {
            p += 1;
        }
        rank -= BINOMIAL.get(p, i);
        out.push(p);
    }
    out.reverse();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_formula() {
        for n in 0..33 {
            for r in 0..=n {
                assert_eq!(BINOMIAL.get(n, r), binomial(n, r), "C({n},{r})");
            }
        }
        assert_eq!(binomial(13, 8), 1287);
        assert_eq!(binomial(3, 5), 0);
    }

    #[test]
    fn colex_is_a_bijection() {
        let mut out = Vec::new();
        for r in 0..=5u32 {
            let total = binomial(9, r);
            for rank in 0..total {
                colex_unrank(rank, r, &mut out);
                assert!(out.windows(2).all(|w| w[0] < w[1]));
                assert!(out.iter().all(|&p| p < 9));
                assert_eq!(colex_rank(out.iter().copied()), rank);
            }
        }
    }
}
