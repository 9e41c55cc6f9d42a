//! The solves on demand under way, for the page's progress view (`GET /api/solving`): a
//! [`SolveObserver`] that keeps each running solve's subtree and progress, and passes
//! every call on to the observer it wraps (`serve`'s log lines).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gops_common::subtree::{SubtreeEstimate, SubtreeRoot};
use gops_db::on_demand::{OnDemandError, SolveObserver};
use serde_json::{Value, json};

/// One solve under way.
struct Running {
    root: SubtreeRoot,
    cards_left: u8,
    started: Instant,
    done: u64,
    total: u64,
}

/// The solves under way, most recent last.
pub struct SolvesUnderWay {
    inner: Option<Arc<dyn SolveObserver>>,
    running: Mutex<Vec<Running>>,
}

impl SolvesUnderWay {
    /// Keeps the solves under way and passes each call on to `inner`.
    pub fn wrapping(inner: Option<Arc<dyn SolveObserver>>) -> SolvesUnderWay {
        SolvesUnderWay {
            inner,
            running: Mutex::new(Vec::new()),
        }
    }

    fn running(&self) -> MutexGuard<'_, Vec<Running>> {
        // a panic elsewhere leaves a list that is still a list
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `{"solving": [{"cards_left", "prizes", "done", "total", "seconds"}, ...]}`: each
    /// solve under way, its estimated matrix games done and in all.
    pub fn json(&self) -> Value {
        let solving: Vec<Value> = self
            .running()
            .iter()
            .map(|r| {
                json!({
                    "cards_left": r.cards_left,
                    "prizes": r.root.prizes.to_vec(),
                    "done": r.done,
                    "total": r.total,
                    "seconds": r.started.elapsed().as_secs_f64(),
                })
            })
            .collect();
        json!({ "solving": solving })
    }
}

impl SolveObserver for SolvesUnderWay {
    fn started(&self, root: &SubtreeRoot, estimate: &SubtreeEstimate) {
        self.running().push(Running {
            root: *root,
            cards_left: root.k(),
            started: Instant::now(),
            done: 0,
            total: estimate.games,
        });
        if let Some(inner) = &self.inner {
            inner.started(root, estimate);
        }
    }

    fn advanced(&self, root: &SubtreeRoot, done: u64, all: u64) {
        if let Some(r) = self.running().iter_mut().find(|r| r.root == *root) {
            (r.done, r.total) = (done, all);
        }
        if let Some(inner) = &self.inner {
            inner.advanced(root, done, all);
        }
    }

    fn finished(&self, root: &SubtreeRoot, outcome: Result<(u64, Duration), &OnDemandError>) {
        self.running().retain(|r| r.root != *root);
        if let Some(inner) = &self.inner {
            inner.finished(root, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::cards::CardSet;

    #[derive(Default)]
    struct Calls(Mutex<Vec<&'static str>>);

    impl SolveObserver for Calls {
        fn started(&self, _: &SubtreeRoot, _: &SubtreeEstimate) {
            self.0.lock().unwrap().push("started");
        }
        fn advanced(&self, _: &SubtreeRoot, _: u64, _: u64) {
            self.0.lock().unwrap().push("advanced");
        }
        fn finished(&self, _: &SubtreeRoot, _: Result<(u64, Duration), &OnDemandError>) {
            self.0.lock().unwrap().push("finished");
        }
    }

    #[test]
    fn a_solve_is_listed_from_its_start_to_its_end_and_every_call_passed_on() {
        let calls = Arc::new(Calls::default());
        let solving = SolvesUnderWay::wrapping(Some(calls.clone() as Arc<dyn SolveObserver>));
        assert_eq!(solving.json(), json!({ "solving": [] }));
        let root = SubtreeRoot {
            prizes: CardSet::from_cards(&[2, 5, 9]),
            pattern: 4,
            diff: 1,
            upcard: None,
        };
        let estimate = SubtreeEstimate {
            games: 900,
            ..SubtreeEstimate::default()
        };
        solving.started(&root, &estimate);
        solving.advanced(&root, 300, 800);
        let listed = solving.json();
        let one = &listed["solving"][0];
        assert_eq!(one["cards_left"], 3);
        assert_eq!(one["prizes"], json!([2, 5, 9]));
        assert_eq!(
            (one["done"].as_u64(), one["total"].as_u64()),
            (Some(300), Some(800))
        );
        assert!(one["seconds"].as_f64().unwrap() >= 0.0);
        solving.finished(&root, Ok((750, Duration::from_millis(5))));
        assert_eq!(solving.json(), json!({ "solving": [] }));
        assert_eq!(
            *calls.0.lock().unwrap(),
            ["started", "advanced", "finished"]
        );
    }
}
