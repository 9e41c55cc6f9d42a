//! The safe exploiter against exact numbers: at N = 4 and 5, both objectives, a best
//! response over every history (the exploiter's play depends on its budget, so on the
//! history) takes at most RISK (+ 1e-9) from it, for RISK 0 and one more; in the arena
//! against the equilibrium its loss holds 0 in its interval; against `upcard` it gains
//! strictly more than the equilibrium (intervals apart) and less than a best response.

use gops_common::objective::Objective;
use gops_common::rules::play_round;
use gops_common::state::GameState;
use gops_db::read::CachedReader;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::safe::safe_decision;
use super::{Agent, AgentBot, Model};
use crate::bot::Bot;
use crate::protocol::{Request, Seat};
use crate::run::{ArenaOptions, run_arena};

/// A's expected result from `state` on (points: the score still to come; win: the final
/// outcome) when A is the safe exploiter of `model` with `budget` and B best-responds,
/// knowing the history: a walk over every history, the budget carried along each.
fn against_a_best_response(
    reader: &mut CachedReader,
    model: &Model,
    state: &GameState,
    budget: f64,
) -> f64 {
    let objective = reader.objective();
    if state.prizes.is_empty() {
        return match objective {
            Objective::Points => 0.0,
            Objective::Win => f64::from(state.diff.signum()),
        };
    }
    let mut total = 0.0;
    for upcard in state.prizes.iter() {
        let request = Request::new(0, objective, Seat::A, state, upcard, &[]);
        let d = safe_decision(reader, model, &request, budget).unwrap();
        let mut worst = f64::INFINITY;
        for (j, b) in state.b.iter().enumerate() {
            let banked = budget + d.against[j] - d.value;
            let mut expected = 0.0;
            for (a, &p) in state.a.iter().zip(&d.mix) {
                if p <= 0.0 {
                    continue;
                }
                let child = play_round(state, upcard, a, b);
                let now = match objective {
                    Objective::Points => f64::from(child.diff - state.diff),
                    Objective::Win => 0.0,
                };
                expected += p * (now + against_a_best_response(reader, model, &child, banked));
            }
            worst = worst.min(expected);
        }
        total += worst;
    }
    total / state.prizes.len() as f64
}

#[test]
fn a_best_response_over_histories_takes_at_most_the_risk() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective, more) in [
        (4, Objective::Points, 1.0),
        (4, Objective::Win, 0.25),
        (5, Objective::Points, 1.0),
        (5, Objective::Win, 0.25),
    ] {
        let book = crate::tests::solved(dir.path(), n, objective);
        let mut reader = CachedReader::cached(&book, 1 << 24);
        let start = GameState::initial(n);
        let value = reader.value(&start).unwrap();
        for model in ["upcard", "0.6*upcard+0.4*uniform"] {
            let model = Model::parse(model).unwrap();
            for risk in [0.0, more] {
                let guaranteed = against_a_best_response(&mut reader, &model, &start, risk);
                let taken = value - guaranteed;
                assert!(
                    taken <= risk + 1e-9,
                    "{n} {objective} {model} risk {risk}: a best response takes {taken}"
                );
            }
        }
    }
}

#[test]
fn against_the_equilibrium_it_loses_nothing_and_against_upcard_it_gains() {
    let dir = tempfile::tempdir().unwrap();
    let book = crate::tests::solved(dir.path(), 5, Objective::Points);
    let options = ArenaOptions {
        games: 4_000,
        seed: 11,
        threads: 2,
        cache_bytes: 1 << 24,
    };
    let exploiter = Agent::parse("exploit:upcard").unwrap();
    let make = || Ok(Box::new(AgentBot::new(exploiter.clone(), &book, 1 << 20)) as Box<dyn Bot>);
    let summary = run_arena(&book, &options, &make, &mut |_| {}).unwrap();
    let [low, high] = summary.loss_ci95;
    assert!(
        low - 1e-9 <= 0.0 && 0.0 <= high + 1e-9,
        "the loss against the equilibrium {} [{low}, {high}]",
        summary.mean_loss
    );
    assert!(summary.result_ci95[0] <= 0.0 && 0.0 <= summary.result_ci95[1]);

    // 20,000 games each against `upcard`, B's seat
    let mut reader = CachedReader::cached(&book, 1 << 24);
    let upcard = Agent::parse("upcard").unwrap();
    let mut play = |a: &Agent| {
        let mut rng = StdRng::seed_from_u64(3);
        crate::measure::simulate(
            &mut reader,
            (a, &upcard),
            20_000,
            &mut rng,
            &mut |_| {},
            &mut |_, _| {},
        )
        .unwrap()
        .score_difference
    };
    let equilibrium = play(&Agent::parse("equilibrium").unwrap());
    let safe = play(&exploiter);
    assert!(
        safe.low > equilibrium.high,
        "the safe exploiter {safe:?} against the equilibrium {equilibrium:?}"
    );
    // what a best response to `upcard` takes, exactly: its exploitability (symmetric game)
    let best = crate::measure::exploit(&mut reader, &upcard, &mut |_| {})
        .unwrap()
        .exploitability;
    assert!(
        safe.high < best,
        "{safe:?} against the best response's {best}"
    );
}
