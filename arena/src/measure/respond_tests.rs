//! The best response to a model against a brute force written for the test: its own
//! rules, its own recursion over raw states (no pattern, no shared code but the db's
//! values), on the 7-card points and the 6-card win games; the equilibrium's result
//! against the model by a second recursion; what a best response to A's best response
//! takes, by a third.

use std::collections::HashMap;

use gops_common::cards::CardSet;
use gops_common::objective::Objective;
use gops_common::rules::play_round;
use gops_common::state::GameState;
use gops_db::read::CachedReader;

use super::respond::{Plan, Responder, reachable_states, respond_layered};
use crate::agent::Model;

/// The test's own rules: B's probability of each of its cards.
fn brute_model(name: &str, b: CardSet, prizes: CardSet, upcard: u8) -> Vec<f64> {
    let cards = b.to_vec();
    let nearest = |target: i32| {
        let mut best = cards[0];
        for &c in &cards {
            let (d, e) = (
                (i32::from(c) - target).abs(),
                (i32::from(best) - target).abs(),
            );
            if d < e {
                best = c;
            }
        }
        best
    };
    let pure = |card: u8| {
        cards
            .iter()
            .map(|&c| if c == card { 1.0 } else { 0.0 })
            .collect()
    };
    let _ = prizes;
    match name {
        "upcard" => pure(nearest(i32::from(upcard))),
        "upcard-plus-one" => pure(nearest(i32::from(upcard) + 1)),
        "mixed" => {
            let up: Vec<f64> = pure(nearest(i32::from(upcard)));
            up.iter()
                .map(|p| 0.6 * p + 0.4 / cards.len() as f64)
                .collect()
        }
        _ => unreachable!(),
    }
}

/// A's best result against the model from a raw state: (points) the score still to come,
/// (win) the final outcome.
fn brute_best(
    memo: &mut HashMap<(u32, u32, u32, i32), f64>,
    name: &str,
    objective: Objective,
    s: &GameState,
) -> f64 {
    if s.prizes.is_empty() {
        return match objective {
            Objective::Points => 0.0,
            Objective::Win => f64::from(s.diff.signum()),
        };
    }
    let d = if objective == Objective::Win {
        s.diff
    } else {
        0
    };
    let key = (s.a.0, s.b.0, s.prizes.0, d);
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let mut total = 0.0;
    for c in s.prizes.iter() {
        let p = brute_model(name, s.b, s.prizes, c);
        let mut best = f64::NEG_INFINITY;
        for a in s.a.iter() {
            let mut e = 0.0;
            for (b, &q) in s.b.iter().zip(&p) {
                if q > 0.0 {
                    let child = play_round(s, c, a, b);
                    let now = match objective {
                        Objective::Points => f64::from(child.diff - s.diff),
                        Objective::Win => 0.0,
                    };
                    e += q * (now + brute_best(memo, name, objective, &child));
                }
            }
            best = best.max(e);
        }
        total += best;
    }
    let v = total / s.prizes.len() as f64;
    memo.insert(key, v);
    v
}

/// The equilibrium's result against the model, by its own recursion.
fn brute_equilibrium(
    reader: &mut CachedReader,
    name: &str,
    objective: Objective,
    s: &GameState,
) -> f64 {
    if s.prizes.is_empty() {
        return match objective {
            Objective::Points => 0.0,
            Objective::Win => f64::from(s.diff.signum()),
        };
    }
    let mut total = 0.0;
    for c in s.prizes.iter() {
        let x = reader.revealed(s, c).unwrap().strategy_a;
        let p = brute_model(name, s.b, s.prizes, c);
        for (a, &xa) in s.a.iter().zip(&x) {
            for (b, &q) in s.b.iter().zip(&p) {
                if xa > 0.0 && q > 0.0 {
                    let child = play_round(s, c, a, b);
                    let now = match objective {
                        Objective::Points => f64::from(child.diff - s.diff),
                        Objective::Win => 0.0,
                    };
                    total += xa * q * (now + brute_equilibrium(reader, name, objective, &child));
                }
            }
        }
    }
    total / s.prizes.len() as f64
}

#[test]
fn the_best_response_equals_a_brute_force_over_raw_states() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective) in [(7, Objective::Points), (6, Objective::Win)] {
        let book = crate::tests::solved(dir.path(), n, objective);
        let mut reader = CachedReader::cached(&book, 1 << 26);
        let start = GameState::initial(n);
        for (name, text) in [
            ("upcard", "upcard"),
            ("upcard-plus-one", "upcard-plus-one"),
            ("mixed", "0.6*upcard+0.4*uniform"),
        ] {
            let model = Model::parse(text).unwrap();
            let mut responder = Responder::new(model.clone(), objective);
            let r = responder.results(&mut reader, &start, &mut |_| {}).unwrap();
            let mut by_layers = Responder::new(model.clone(), objective);
            let layered = by_layers
                .results_by_layers(&mut reader, &start, &mut |_| {})
                .unwrap();
            assert_eq!(
                layered, r,
                "{text}: the walk by layers gives the very same numbers"
            );
            if name == "mixed" {
                let (dense, states) =
                    respond_layered(&mut reader, &model, &start, 2, &mut |_| {}).unwrap();
                assert_eq!(dense, r, "{text}: the layered walk gives the same numbers");
                assert_eq!(states, Plan::new(&model, objective, &start).states);
            }
            let brute = brute_best(&mut HashMap::new(), name, objective, &start);
            assert!(
                (r.best_response - brute).abs() <= 1e-9,
                "{n} {objective} {text}: {} against the brute force's {brute}",
                r.best_response
            );
            assert!(responder.states() <= reachable_states(&model, objective, &start));
            // the equilibrium's result, at 6 cards (the recursion has no memo)
            if n == 6 {
                let e = brute_equilibrium(&mut reader, name, objective, &start);
                assert!(
                    (r.equilibrium - e).abs() <= 1e-9,
                    "{text}: {} against {e}",
                    r.equilibrium
                );
            }
            // A's best response (the equilibrium once B leaves the model's path) against
            // B's best response, by the test's own walk of that strategy
            let mut memo = HashMap::new();
            let walked = brute_guaranteed(&mut reader, &mut responder, &mut memo, name, &start);
            assert!(
                (walked - r.best_response_guaranteed).abs() <= 1e-9,
                "{n} {objective} {text}: {walked} against {}",
                r.best_response_guaranteed
            );
        }
    }
}

/// A's result when it bids as `responder` while B follows the model, and plays the
/// equilibrium from the first bid the model would never make (then B's best response
/// takes exactly the value there), against B's best response.
fn brute_guaranteed(
    reader: &mut CachedReader,
    responder: &mut Responder,
    memo: &mut HashMap<(u32, u32, u32, i32), f64>,
    name: &str,
    s: &GameState,
) -> f64 {
    let objective = reader.objective();
    if s.prizes.is_empty() {
        return match objective {
            Objective::Points => 0.0,
            Objective::Win => f64::from(s.diff.signum()),
        };
    }
    let key = (s.a.0, s.b.0, s.prizes.0, s.diff);
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let mut total = 0.0;
    for c in s.prizes.iter() {
        let a = responder.best_bid(reader, s, c).unwrap();
        let p = brute_model(name, s.b, s.prizes, c);
        let mut worst = f64::INFINITY;
        for (b, &q) in s.b.iter().zip(&p) {
            let child = play_round(s, c, a, b);
            let now = match objective {
                Objective::Points => f64::from(child.diff - s.diff),
                Objective::Win => 0.0,
            };
            let later = if q > 0.0 {
                brute_guaranteed(reader, responder, memo, name, &child)
            } else {
                reader.value(&child).unwrap()
            };
            worst = worst.min(now + later);
        }
        total += worst;
    }
    let v = total / s.prizes.len() as f64;
    memo.insert(key, v);
    v
}

/// The layered walk (every state, two layers at a time) against the sparse walk, from
/// the start and from later states (a score difference for `win`), for models that keep
/// every hand, one reading the db (whose zeros leave the model's path): the same numbers,
/// bit for bit, and as many states as planned.
#[test]
fn the_layered_walk_gives_the_sparse_walks_numbers() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective) in [(6, Objective::Points), (5, Objective::Win)] {
        let book = crate::tests::solved(dir.path(), n, objective);
        let mut reader = CachedReader::cached(&book, 1 << 26);
        let later = |a: &[u8], b: &[u8], prizes: &[u8], diff: i32| GameState {
            n,
            a: CardSet::from_cards(a),
            b: CardSet::from_cards(b),
            prizes: CardSet::from_cards(prizes),
            diff,
        };
        let states = [
            GameState::initial(n),
            later(&[1, 3, 4, 5], &[2, 3, 4, 5], &[1, 2, 4, 5], -3),
            later(&[2, 4, 5], &[1, 4, 5], &[2, 3, 5], 4),
        ];
        for text in [
            "uniform",
            "0.6*upcard+0.4*uniform",
            "equilibrium",
            "0.5*equilibrium+0.5*upcard-plus-one",
        ] {
            let model = Model::parse(text).unwrap();
            for state in &states {
                let mut sparse = Responder::new(model.clone(), objective);
                let r = sparse
                    .results_by_layers(&mut reader, state, &mut |_| {})
                    .unwrap();
                let (dense, walked) =
                    respond_layered(&mut reader, &model, state, 1, &mut |_| {}).unwrap();
                assert_eq!(dense, r, "{n} {objective} {text} from {state:?}");
                let (threaded, _) =
                    respond_layered(&mut reader, &model, state, 3, &mut |_| {}).unwrap();
                assert_eq!(threaded, r, "{n} {objective} {text}: any number of threads");
                let plan = Plan::new(&model, objective, state);
                assert!(plan.layered);
                assert_eq!(walked, plan.states, "{n} {objective} {text}");
                assert!(sparse.states() <= walked);
                assert!(plan.held < plan.states || state.prizes.len() == 1);
            }
        }
    }
}
