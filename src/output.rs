//! Shared formatting of command output for people: counts and strategies.

use gops_common::CardSet;

/// 1234567 as "1,234,567".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A strategy as "card:probability" pairs, zero-probability cards left out.
pub fn strategy_line(cards: CardSet, probabilities: &[f64]) -> String {
    cards
        .iter()
        .zip(probabilities)
        .filter(|(_, p)| **p > 5e-7)
        .map(|(c, p)| format!("{c}:{p:.6}"))
        .collect::<Vec<_>>()
        .join("  ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn count_groups_thousands() {
        assert_eq!(super::count(0), "0");
        assert_eq!(super::count(999), "999");
        assert_eq!(super::count(1000), "1,000");
        assert_eq!(super::count(1234567), "1,234,567");
    }
}
