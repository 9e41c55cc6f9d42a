//! The solves on demand under way, as the page's progress view reads them
//! (`GET /api/solving`): what [`OnDemand::under_way`] lists, and how many subtrees the
//! book has solved since the server started.

use gops_db::book::on_demand::{OnDemand, SolveUnderWay};
use serde_json::{Value, json};

/// `{"solving": [{"cards_left", "prizes", "done", "total", "seconds"}, ...], "solves"}`:
/// each solve under way (oldest first), its estimated matrix games done and in all, and
/// the subtrees solved so far (0, and none under way, on a full db).
pub fn solving_json(on_demand: Option<&OnDemand>) -> Value {
    let (under_way, solves) = match on_demand {
        Some(solver) => (solver.under_way(), solver.solves()),
        None => (Vec::new(), 0),
    };
    json!({
        "solving": under_way.iter().map(solve_json).collect::<Vec<_>>(),
        "solves": solves,
    })
}

fn solve_json(solve: &SolveUnderWay) -> Value {
    json!({
        "cards_left": solve.root.k(),
        "prizes": solve.root.prizes.to_vec(),
        "done": solve.done,
        "total": solve.total,
        "seconds": solve.elapsed.as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::cards::CardSet;
    use gops_common::subtree::SubtreeRoot;
    use std::time::Duration;

    #[test]
    fn a_solve_under_way_is_written_with_its_cards_progress_and_time() {
        assert_eq!(solving_json(None), json!({ "solving": [], "solves": 0 }));
        let solve = SolveUnderWay {
            root: SubtreeRoot {
                prizes: CardSet::from_cards(&[2, 5, 9]),
                pattern: 4,
                diff: 1,
                upcard: None,
            },
            done: 300,
            total: 800,
            elapsed: Duration::from_millis(1500),
        };
        assert_eq!(
            solve_json(&solve),
            json!({
                "cards_left": 3,
                "prizes": [2, 5, 9],
                "done": 300,
                "total": 800,
                "seconds": 1.5,
            })
        );
    }
}
