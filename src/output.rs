//! The one way commands write to stdout ([`out!`](crate::out)), which survives a closed
//! pipe. What the lines say is formatted with `gops_common::human`.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// A report as one JSON line, its keys in alphabetical order as they always were
/// (serde_json's map is sorted).
pub fn json_line(report: &impl serde::Serialize) -> String {
    serde_json::to_value(report)
        .expect("a report serialises")
        .to_string()
}
