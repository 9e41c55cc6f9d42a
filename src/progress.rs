//! Logging to stderr through `tracing`, and the progress bars: the command's own (one a
//! process: a solve, an export, the games of `simulate` or `arena`, verify's slices) and,
//! below it, one for each subtree a book solves on demand while the command reads it.
//! Log lines are written with the bars suspended so they never garble each other; the
//! bars draw only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use gops_common::plan::LayerSize;
use gops_common::sync::lock;
use gops_coordinator::report::observer::RunObserver;
use gops_db::store::LayerRecord;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// Every bar of the process, drawn together.
static BARS: OnceLock<MultiProgress> = OnceLock::new();
/// The command's own bar, the first of [`BARS`].
static BAR: OnceLock<ProgressBar> = OnceLock::new();

fn bars() -> &'static MultiProgress {
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// Writes log lines to stderr, above the progress bars if there are any.
struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match BARS.get() {
            Some(bars) => bars.suspend(|| std::io::stderr().write_all(buf))?,
            None => std::io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;
    fn make_writer(&'a self) -> Self::Writer {
        LogWriter
    }
}

pub fn init_logging(level: &str) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(LogWriter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// Writes one line to stderr, above the progress bar if there is one.
pub fn eprint_line(line: &str) {
    let _ = LogWriter.write_all(format!("{line}\n").as_bytes());
}

/// The style of a bar counting units of work.
fn count_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner} {prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg} ETA {eta}",
    )
    .expect("valid template")
}

/// The command's own progress bar (log lines are written above it).
fn shared_bar() -> &'static ProgressBar {
    BAR.get_or_init(|| {
        let bar = bars().insert(0, ProgressBar::new(0));
        bar.set_style(count_style());
        bar
    })
}

/// A bar of its own, below the command's, counting `total` units labelled `prefix`:
/// one solve on demand. Removed by [`remove_bar`].
pub fn extra_bar(total: u64, prefix: &str) -> ProgressBar {
    let bar = bars().add(ProgressBar::new(total));
    bar.set_style(count_style());
    bar.set_prefix(prefix.to_string());
    bar
}

/// Takes a bar of [`extra_bar`] away.
pub fn remove_bar(bar: &ProgressBar) {
    bar.finish_and_clear();
    bars().remove(bar);
}

/// The progress bar set to count `total` units of work, labelled `prefix`.
pub fn count_bar(total: u64, prefix: &str) -> &'static ProgressBar {
    let bar = shared_bar();
    bar.set_length(total);
    bar.set_position(0);
    bar.set_prefix(prefix.to_string());
    bar.reset_eta();
    bar
}

/// The progress bar as a spinner with a message, for work of unknown length.
pub fn spinner(prefix: &str) -> &'static ProgressBar {
    let bar = shared_bar();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix} [{elapsed_precise}] {msg}")
            .expect("valid template"),
    );
    bar.set_prefix(prefix.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// A progress bar over the matrix games of the whole solve, with the games solved so
/// far and an ETA from this run's own pace (none until the pace is known).
pub struct BarObserver {
    bar: &'static ProgressBar,
    layer_games: Mutex<Vec<u64>>,
    started: Instant,
    /// Bar units (planned games) done before this run and by it.
    units_before: AtomicU64,
    units_this_run: AtomicU64,
    /// Matrix games this run actually solved.
    games: AtomicU64,
}

/// The ETA is shown once this much of the run is behind it...
const ETA_AFTER: Duration = Duration::from_secs(3);
/// ... and this fraction of the remaining work is done.
const ETA_AFTER_FRACTION: f64 = 0.01;

/// Remaining time at this run's pace: `None` until the pace is known.
pub fn eta(elapsed: Duration, done: u64, remaining: u64, total: u64) -> Option<Duration> {
    let enough = elapsed >= ETA_AFTER && done as f64 >= ETA_AFTER_FRACTION * total as f64;
    (enough && done > 0).then(|| elapsed.mul_f64(remaining as f64 / done as f64))
}

impl BarObserver {
    pub fn new() -> BarObserver {
        let bar = shared_bar();
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}",
            )
            .expect("valid template"),
        );
        BarObserver {
            bar,
            layer_games: Mutex::new(Vec::new()),
            started: Instant::now(),
            units_before: AtomicU64::new(0),
            units_this_run: AtomicU64::new(0),
            games: AtomicU64::new(0),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl RunObserver for BarObserver {
    fn plan(&self, layers: &[(LayerSize, usize)]) {
        let mut per_layer = lock(&self.layer_games);
        *per_layer = layers.iter().map(|(s, _)| s.games_per_slice()).collect();
        let total: u64 = layers
            .iter()
            .map(|(s, _)| s.games_per_slice() * s.slices as u64)
            .sum();
        let done: u64 = layers
            .iter()
            .map(|(s, stored)| s.games_per_slice() * *stored as u64)
            .sum();
        self.bar.set_length(total);
        self.bar.set_position(done);
        self.units_before.store(done, Ordering::Relaxed);
    }

    fn layer_started(&self, size: &LayerSize, _already_stored: usize) {
        self.bar.set_prefix(format!("layer {}", size.k));
    }

    fn shard_done(&self, k: u8, slices: usize, games: u64) {
        let per_slice = lock(&self.layer_games)[k as usize - 1];
        let units = per_slice * slices as u64;
        self.bar.inc(units);
        let done = self.units_this_run.fetch_add(units, Ordering::Relaxed) + units;
        let solved = self.games.fetch_add(games, Ordering::Relaxed) + games;
        let total = self.bar.length().unwrap_or(0);
        let before = self.units_before.load(Ordering::Relaxed);
        let remaining = total.saturating_sub(before + done);
        let eta = eta(
            self.started.elapsed(),
            done,
            remaining,
            total.saturating_sub(before),
        )
        .map_or_else(
            || "ETA ...".to_string(),
            |d| format!("ETA {}", gops_common::human::compact_duration(d)),
        );
        self.bar.set_message(format!(
            "{} matrix games solved, {eta}",
            gops_common::human::count(solved)
        ));
    }

    fn layer_done(&self, _record: &LayerRecord) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_waits_for_a_known_pace_and_follows_it() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(1), 50, 50, 100), None, "too early");
        assert_eq!(eta(s(10), 0, 100, 100), None, "nothing done");
        assert_eq!(eta(s(10), 0, 1_000, 100_000), None, "under 1 %");
        assert_eq!(eta(s(10), 50, 50, 100), Some(s(10)));
        assert_eq!(eta(s(4), 10, 90, 100), Some(s(36)));
    }
}
