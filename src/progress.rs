//! Logging to stderr through `tracing`, and the solve progress bar. Log lines are
//! written with the bar suspended so the two never garble each other; the bar draws only
//! when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, OnceLock};

use gops_common::plan::LayerSize;
use gops_coordinator::observer::RunObserver;
use gops_db::store::LayerRecord;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

static BAR: OnceLock<ProgressBar> = OnceLock::new();

/// Writes log lines to stderr, above the progress bar if there is one.
struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match BAR.get() {
            Some(bar) => bar.suspend(|| std::io::stderr().write_all(buf))?,
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

/// The process's one progress bar (log lines are written above it).
fn shared_bar() -> &'static ProgressBar {
    BAR.get_or_init(|| {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg} ETA {eta}",
            )
            .expect("valid template"),
        );
        bar
    })
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

/// A progress bar over the matrix games of the whole solve.
pub struct BarObserver {
    bar: &'static ProgressBar,
    layer_games: Mutex<Vec<u64>>,
}

impl BarObserver {
    pub fn new() -> BarObserver {
        let bar = shared_bar();
        BarObserver {
            bar,
            layer_games: Mutex::new(Vec::new()),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl RunObserver for BarObserver {
    fn plan(&self, layers: &[(LayerSize, usize)]) {
        let mut per_layer = self.layer_games.lock().unwrap();
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
        self.bar.reset_eta();
    }

    fn layer_started(&self, size: &LayerSize, _already_stored: usize) {
        self.bar.set_prefix(format!("layer {}", size.k));
    }

    fn shard_done(&self, k: u8, slices: usize, games: u64) {
        let per_slice = self.layer_games.lock().unwrap()[k as usize - 1];
        self.bar.inc(per_slice * slices as u64);
        self.bar
            .set_message(format!("{} games", crate::output::count(games)));
    }

    fn layer_done(&self, _record: &LayerRecord) {}
}
