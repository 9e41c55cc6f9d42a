//! Shared formatting of command output for people: counts, values and strategies; and
//! the one way commands write to stdout ([`out!`](crate::out)), which survives a closed
//! pipe.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use gops_common::CardSet;

/// Set once stdout has been found closed (`gops status | head -1`): later lines are
/// dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// `println!` for command output: a closed stdout (the reader of a pipe gone) drops this
/// line and every later one instead of panicking, and the command finishes its work as
/// it would have; any other write error is reported on stderr once.
#[macro_export]
macro_rules! out {
    () => {
        $crate::output::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::write_line(format_args!($($arg)*))
    };
}

/// The line [`out!`](crate::out) writes.
pub fn write_line(line: fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("warning: cannot write to stdout ({e}); the rest of the output is dropped");
        }
    }
}

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
    fn durations_read_as_people_say_them() {
        assert_eq!(super::duration(34.6), "35 s");
        assert_eq!(super::duration(250.0), "4 min 10 s");
        assert_eq!(super::duration(7_500.0), "2 h 05 min");
        assert_eq!(super::duration(-3.0), "0 s");
    }

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(super::counted(1, "slice", "slices"), "1 slice");
        assert_eq!(super::counted(0, "slice", "slices"), "0 slices");
        assert_eq!(super::counted(2047, "slice", "slices"), "2,047 slices");
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
