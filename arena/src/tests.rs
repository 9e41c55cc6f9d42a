//! The arena against exact numbers: at N = 4 and 5, both objectives, for fixed agents,
//! a full traversal of the game against the equilibrium gives the exact expected result
//! and the exact expected sum of decision losses, and the two satisfy the telescoping
//! (result = value - loss) to 1e-12; the arena's sampled mean over 20,000 games lies
//! within its 99 % interval of the exact result; the equilibrium as a bot loses 0 in
//! every decision, within the kernel's certificate gap.

use std::path::Path;

use gops_common::objective::Objective;
use gops_common::rules::play_round;
use gops_common::state::GameState;
use gops_db::book::{Book, ReadOptions};
use gops_db::read::CachedReader;

use crate::agent::{Agent, AgentBot, Base};
use crate::bot::Bot;
use crate::loss::decision_loss;
use crate::protocol::{Request, Round, Seat};
use crate::run::{ArenaOptions, run_arena};
use crate::stats::Z95;

const Z99: f64 = 2.575_829_303_548_901;

pub(crate) fn solved(dir: &Path, n: u8, objective: Objective) -> Book {
    let path = dir.join(format!("{n}-{objective}"));
    drop(gops_db::test_db::solved_store(&path, n, objective, n));
    Book::open(&path, &ReadOptions::default()).unwrap()
}

/// The exact expected result still to come (for `points`, the score difference from
/// here on; for `win`, the final outcome) and the exact expected sum of the decisions'
/// losses, of the bot in `seat` from `state` on, against the equilibrium.
fn traverse(
    reader: &mut CachedReader,
    bot: &mut dyn Bot,
    seat: Seat,
    state: &GameState,
    history: &mut Vec<Round>,
) -> (f64, f64) {
    let objective = reader.objective();
    if state.prizes.is_empty() {
        let own = match seat {
            Seat::A => state.diff,
            Seat::B => -state.diff,
        };
        return match objective {
            Objective::Win => (f64::from(own.signum()), 0.0),
            Objective::Points => (0.0, 0.0),
        };
    }
    let k = state.k() as f64;
    let (mut result, mut loss) = (0.0, 0.0);
    for upcard in state.prizes.iter() {
        let game = reader.revealed(state, upcard).unwrap();
        let request = Request::new(0, objective, seat, state, upcard, history);
        let (hand, other) = seat.hands(state);
        let p = bot.decide(&request).unwrap().probabilities(hand).unwrap();
        let y = match seat {
            Seat::A => game.strategy_b.clone(),
            Seat::B => game.strategy_a.clone(),
        };
        let (mut r, mut l) = (0.0, decision_loss(seat, &game, &p));
        for (i, bid) in hand.iter().enumerate() {
            for (j, opponent_bid) in other.iter().enumerate() {
                let weight = p[i] * y[j];
                if weight == 0.0 {
                    continue;
                }
                let (a, b) = match seat {
                    Seat::A => (bid, opponent_bid),
                    Seat::B => (opponent_bid, bid),
                };
                let child = play_round(state, upcard, a, b);
                let won = match objective {
                    Objective::Points => {
                        f64::from(upcard)
                            * f64::from((i32::from(bid) - i32::from(opponent_bid)).signum())
                    }
                    Objective::Win => 0.0,
                };
                history.push(Round {
                    prize: upcard,
                    bid,
                    opponent_bid,
                });
                let (cr, cl) = traverse(reader, bot, seat, &child, history);
                history.pop();
                r += weight * (won + cr);
                l += weight * cl;
            }
        }
        result += r / k;
        loss += l / k;
    }
    (result, loss)
}

/// The fixed agents of the check: uniform, bid the upcard, and a deterministic rule.
const AGENTS: [Base; 3] = [Base::Uniform, Base::Upcard, Base::UpcardPlusOne];

#[test]
fn the_exact_result_is_the_value_minus_the_exact_loss_and_the_arena_samples_it() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective) in [
        (4, Objective::Points),
        (4, Objective::Win),
        (5, Objective::Points),
        (5, Objective::Win),
    ] {
        let store = solved(dir.path(), n, objective);
        let mut reader = CachedReader::cached(&store, 1 << 24);
        let start = GameState::initial(n);
        let value = reader.value(&start).unwrap();
        for agent in AGENTS {
            let mut exact_result = 0.0;
            for seat in [Seat::A, Seat::B] {
                let mut bot = AgentBot::new(Agent::base(agent), &store, 1 << 20);
                let (result, loss) = traverse(&mut reader, &mut bot, seat, &start, &mut Vec::new());
                assert!(
                    (result - (seat.own(value) - loss)).abs() <= 1e-12,
                    "{n} {objective} {agent:?} {seat:?}: result {result}, value {value}, loss {loss}"
                );
                // bidding the upcard is itself an equilibrium of some small games (4-card
                // points); uniform play never is
                if agent == Base::Uniform {
                    assert!(loss > 1e-3, "uniform play is not the equilibrium: {loss}");
                }
                assert!(loss >= -1e-12, "{agent:?}: a negative loss {loss}");
                exact_result += result / 2.0;
            }
            // the arena's estimate, seats alternating. Each of these 12 checks at 99 % misses
            // for 1 seed in 100: the seed is fixed (seed 54 missed one: 5-card win, upcard,
            // sampled -0.1288 ± 0.0146 against -0.1435; its loss-based estimate, -0.1451 ±
            // 0.0051, did not)
            let options = ArenaOptions {
                games: 20_000,
                seed: 1,
                threads: 2,
                cache_bytes: 1 << 24,
            };
            let make =
                || Ok(Box::new(AgentBot::new(Agent::base(agent), &store, 1 << 20)) as Box<dyn Bot>);
            let summary = run_arena(&store, &options, &make, &mut |_| {}).unwrap();
            assert_eq!(summary.games, 20_000);
            assert_eq!(summary.games_as_a, 10_000);
            assert_eq!(summary.bot_faults, 0);
            let half99 = (summary.result_ci95[1] - summary.result_ci95[0]) / 2.0 * Z99 / Z95;
            assert!(
                (summary.mean_result - exact_result).abs() <= half99 + 1e-12,
                "{n} {objective} {agent:?}: sampled {} ± {half99}, exact {exact_result}",
                summary.mean_result
            );
            // the summed losses estimate the same number, with less spread (an agent that
            // is an equilibrium has none: then only rounding is left, hence the 1e-12)
            let loss_half = (summary.loss_ci95[1] - summary.loss_ci95[0]) / 2.0 * Z99 / Z95;
            assert!(
                (summary.result_from_loss - exact_result).abs() <= loss_half + 1e-12,
                "{n} {objective} {agent:?}: from the loss {} ± {loss_half}, exact {exact_result}",
                summary.result_from_loss
            );
            let parts: f64 = summary.loss_by_round.iter().map(|p| p.loss_per_game).sum();
            assert!((parts - summary.mean_loss).abs() <= 1e-9);
            let parts: f64 = summary.loss_by_upcard.iter().map(|p| p.loss_per_game).sum();
            assert!((parts - summary.mean_loss).abs() <= 1e-9);
        }
    }
}

#[test]
fn the_equilibrium_as_a_bot_loses_nothing_in_any_decision() {
    let dir = tempfile::tempdir().unwrap();
    for (n, objective) in [(5, Objective::Points), (5, Objective::Win)] {
        let store = solved(dir.path(), n, objective);
        let options = ArenaOptions {
            games: 400,
            seed: 7,
            threads: 2,
            cache_bytes: 1 << 24,
        };
        let make = || {
            Ok(Box::new(AgentBot::new(
                Agent::base(Base::Equilibrium),
                &store,
                1 << 20,
            )) as Box<dyn Bot>)
        };
        let mut worst = 0.0f64;
        let mut decisions = 0;
        let summary = run_arena(&store, &options, &make, &mut |game| {
            for d in &game.decisions {
                worst = worst.max(d.loss.abs());
                decisions += 1;
            }
        })
        .unwrap();
        assert_eq!(decisions, 400 * u64::from(n));
        assert!(worst <= 1e-9, "{objective}: a decision lost {worst}");
        assert!(summary.mean_loss.abs() <= 1e-9, "{}", summary.mean_loss);
    }
}

#[test]
fn a_run_is_the_same_for_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let store = solved(dir.path(), 5, Objective::Win);
    let mut runs = Vec::new();
    for threads in [1, 3] {
        let options = ArenaOptions {
            games: 300,
            seed: 11,
            threads,
            cache_bytes: 1 << 24,
        };
        let make = || {
            Ok(
                Box::new(AgentBot::new(Agent::base(Base::Uniform), &store, 1 << 20))
                    as Box<dyn Bot>,
            )
        };
        let mut games = Vec::new();
        let mut summary =
            run_arena(&store, &options, &make, &mut |g| games.push(g.clone())).unwrap();
        summary.seconds = 0.0;
        summary.decisions_per_second = 0.0;
        runs.push((games, summary));
    }
    assert_eq!(runs[0], runs[1]);
    assert!(
        runs[0]
            .0
            .iter()
            .enumerate()
            .all(|(i, g)| g.game == i as u64)
    );
}

#[test]
fn a_db_error_in_a_built_in_bot_stops_the_run_as_the_db_s_error() {
    use gops_db::book::on_demand::{OnDemandError, OnDemandLimits};
    use gops_db::read::QueryError;

    use crate::run::ArenaError;
    let dir = tempfile::tempdir().unwrap();
    let full = solved(dir.path(), 6, Objective::Win);
    // the bot reads a book of the top layer that may solve nothing on demand
    let out = dir.path().join("book");
    gops_db::book::write_book(full.store(), 6, &out).unwrap();
    let limits = OnDemandLimits {
        max_games: 1,
        ..OnDemandLimits::default()
    };
    let starved = Book::open(
        &out,
        &ReadOptions {
            limits,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let options = ArenaOptions {
        games: 4,
        seed: 3,
        threads: 1,
        cache_bytes: 1 << 24,
    };
    let make = || {
        Ok(Box::new(AgentBot::new(
            Agent::base(Base::Equilibrium),
            &starved,
            1 << 20,
        )) as Box<dyn Bot>)
    };
    match run_arena(&full, &options, &make, &mut |_| {}) {
        Err(ArenaError::Db {
            game: 0,
            error: QueryError::OnDemand(OnDemandError::OverLimit { .. }),
        }) => {}
        other => panic!("not the db's error: {other:?}"),
    }
}
