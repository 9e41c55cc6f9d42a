//! Shared formatting of command output for people: counts, values and strategies.

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

/// A game value for people: rounded to 12 decimals (the certificate tolerance is far
/// coarser, so the digits after those are rounding noise), trailing zeros dropped, and
/// never "-0". `--json` keeps every bit.
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let rounded = format!("{v:.12}");
    let trimmed = rounded.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
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

    #[test]
    fn values_are_rounded_for_people() {
        assert_eq!(super::value(0.0000000000000004440892098500626), "0");
        assert_eq!(super::value(-0.0000000000000004440892098500626), "0");
        assert_eq!(super::value(-0.0), "0");
        assert_eq!(super::value(2.5), "2.5");
        assert_eq!(super::value(-1.0), "-1");
        assert_eq!(super::value(1.0 / 3.0), "0.333333333333");
        assert_eq!(super::value(12.0), "12");
    }
}
