//! What a reader of a book shows while it solves a subtree on demand: a log line when a
//! solve starts and when it ends (the one record `serve` keeps), and on a terminal a
//! progress bar of its own once a solve has taken longer than a second: one for each
//! solve under way, below the command's own bar, which they never take over.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gops_common::subtree::{SubtreeEstimate, SubtreeRoot};
use gops_common::sync::lock;
use gops_db::book::on_demand::{OnDemandError, SolveObserver};
use indicatif::ProgressBar;
use tracing::{info, warn};

/// A solve shorter than this shows no bar.
const BAR_AFTER: Duration = Duration::from_secs(1);

/// One solve under way: its root, when it started, and its bar once shown.
type UnderWay = (SubtreeRoot, Instant, Option<ProgressBar>);

pub struct OnDemandProgress {
    on_terminal: bool,
    under_way: Mutex<Vec<UnderWay>>,
}

impl OnDemandProgress {
    pub fn new() -> OnDemandProgress {
        OnDemandProgress {
            on_terminal: std::io::stderr().is_terminal(),
            under_way: Mutex::new(Vec::new()),
        }
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
        lock(&self.under_way).push((*root, Instant::now(), None));
    }

    fn advanced(&self, root: &SubtreeRoot, done: u64, all: u64) {
        if !self.on_terminal {
            return;
        }
        let mut under_way = lock(&self.under_way);
        if let Some((_, started, bar)) = under_way.iter_mut().find(|(r, ..)| r == root) {
            if bar.is_none() && started.elapsed() >= BAR_AFTER {
                let label = format!(
                    "solving {} ({} cards left) on demand",
                    root.prizes,
                    root.k()
                );
                *bar = Some(crate::progress::extra_bar(all, &label));
            }
            if let Some(bar) = bar {
                bar.set_length(all);
                bar.set_position(done);
            }
        }
    }

    fn finished(&self, root: &SubtreeRoot, outcome: Result<(u64, Duration), &OnDemandError>) {
        let mut under_way = lock(&self.under_way);
        if let Some(at) = under_way.iter().position(|(r, ..)| r == root)
            && let (_, _, Some(bar)) = under_way.remove(at)
        {
            crate::progress::remove_bar(&bar);
        }
        drop(under_way);
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
