//! Numbers for people, as every front end shows them (the command line, the explorer's
//! texts, the Python summaries): counts with thousands separators, durations, game
//! values rounded to what they mean, and strategies as "card:probability" pairs.

use std::time::Duration;

use crate::CardSet;

/// 1234567 as "1,234,567".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A count and its noun: "1 slice", "2,047 slices".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// Seconds for people: "35 s", "4 min 10 s", "2 h 05 min".
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// A duration in the short form of a progress bar: `45s`, `3m 20s`, `2h 05m`.
pub fn compact_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A game value for people: rounded to 12 decimals (the certificate tolerance is far
/// coarser, so the digits after those are rounding noise), trailing zeros dropped, and
/// never "-0". JSON keeps every bit.
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
    use super::*;

    #[test]
    fn count_groups_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(34.6), "35 s");
        assert_eq!(duration(250.0), "4 min 10 s");
        assert_eq!(duration(7_500.0), "2 h 05 min");
        assert_eq!(duration(-3.0), "0 s");
        let s = Duration::from_secs;
        assert_eq!(compact_duration(s(45)), "45s");
        assert_eq!(compact_duration(s(200)), "3m 20s");
        assert_eq!(compact_duration(s(7500)), "2h 05m");
    }

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(counted(1, "slice", "slices"), "1 slice");
        assert_eq!(counted(0, "slice", "slices"), "0 slices");
        assert_eq!(counted(2047, "slice", "slices"), "2,047 slices");
    }

    #[test]
    fn values_are_rounded_for_people() {
        assert_eq!(value(0.0000000000000004440892098500626), "0");
        assert_eq!(value(-0.0000000000000004440892098500626), "0");
        assert_eq!(value(-0.0), "0");
        assert_eq!(value(2.5), "2.5");
        assert_eq!(value(-1.0), "-1");
        assert_eq!(value(1.0 / 3.0), "0.333333333333");
        assert_eq!(value(12.0), "12");
    }

    #[test]
    fn strategies_leave_out_the_cards_never_played() {
        let cards = CardSet::from_cards(&[1, 2, 3]);
        assert_eq!(
            strategy_line(cards, &[0.5, 0.0, 0.5]),
            "1:0.500000  3:0.500000"
        );
    }
}
