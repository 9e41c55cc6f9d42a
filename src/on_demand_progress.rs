//! What a reader of a book shows while it solves a subtree on demand: a log line when a
//! solve starts and when it ends (the one record `serve` keeps), and on a terminal a
//! progress bar once a solve has taken longer than a second.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gops_common::subtree::{SubtreeEstimate, SubtreeRoot};
use gops_common::sync::lock;
use gops_db::on_demand::{OnDemandError, SolveObserver};
use indicatif::ProgressBar;
use tracing::{info, warn};

/// A solve shorter than this shows no bar.
const BAR_AFTER: Duration = Duration::from_secs(1);

pub struct OnDemandProgress {
    on_terminal: bool,
    /// The solve under way: when it started, and its bar once shown.
    current: Mutex<Option<(Instant, Option<&'static ProgressBar>)>>,
}

impl OnDemandProgress {
    pub fn new() -> OnDemandProgress {
        OnDemandProgress {
            on_terminal: std::io::stderr().is_terminal(),
            current: Mutex::new(None),
        }
    }

    fn current(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<(Instant, Option<&'static ProgressBar>)>> {
        lock(&self.current)
    }
}

impl SolveObserver for OnDemandProgress {
    fn started(&self, root: &SubtreeRoot, estimate: &SubtreeEstimate) {
        info!(
            cards_left = root.k(),
            prizes = %root.prizes,
            games_at_most = estimate.games,
            "solving a subtree on demand"
        );
        *self.current() = Some((Instant::now(), None));
    }

    fn advanced(&self, _root: &SubtreeRoot, done: u64, all: u64) {
        if !self.on_terminal {
            return;
        }
        let mut current = self.current();
        if let Some((started, bar)) = current.as_mut() {
            if bar.is_none() && started.elapsed() >= BAR_AFTER {
                *bar = Some(crate::progress::count_bar(all, "solving on demand"));
            }
            if let Some(bar) = bar {
                bar.set_position(done);
            }
        }
    }

    fn finished(&self, root: &SubtreeRoot, outcome: Result<(u64, Duration), &OnDemandError>) {
        if let Some((_, Some(bar))) = self.current().take() {
            bar.finish_and_clear();
        }
        match outcome {
            Ok((games, took)) => info!(
                cards_left = root.k(),
                prizes = %root.prizes,
                games,
                seconds = took.as_secs_f64(),
                "solved a subtree on demand"
            ),
            Err(e) => warn!(
                cards_left = root.k(),
                "solving a subtree on demand failed: {e}"
            ),
        }
    }
}
