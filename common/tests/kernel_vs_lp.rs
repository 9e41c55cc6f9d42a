//! The matrix-game kernel against a general LP crate (microlp) on 10,000 games per size
//! k = 1..16: uniformly random, GOPS-shaped (a prize times the bid comparison plus child
//! values) and degenerate (entries in {-1, 0, 1}). Values agree within 1e-9 x scale and
//! every certificate gap is within 1e-9 x scale.

mod support;

use gops_common::kernel::{GameSolver, GameStatus, certificate_bounds};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use support::lp_game_value;

const GAMES_PER_SIZE: usize = 10_000;
const TOLERANCE: f64 = 1e-9;

#[derive(Clone, Copy, Debug)]
enum Family {
    Uniform,
    GopsShaped,
    Degenerate,
}

fn make_game(family: Family, k: usize, rng: &mut StdRng) -> Vec<f64> {
    match family {
        Family::Uniform => (0..k * k).map(|_| rng.random_range(-10.0..10.0)).collect(),
        Family::Degenerate => (0..k * k)
            .map(|_| f64::from(rng.random_range(-1i32..=1)))
            .collect(),
        Family::GopsShaped => {
            let n = 16;
            let hand = |rng: &mut StdRng| {
                let mut cards: Vec<i32> = sample(rng, n, k)
                    .into_iter()
                    .map(|c| c as i32 + 1)
                    .collect();
                cards.sort();
                cards
            };
            let (a, b) = (hand(rng), hand(rng));
            let prize = rng.random_range(1..=n as i32);
            let spread = f64::from(rng.random_range(1..=40));
            let mut m = Vec::with_capacity(k * k);
            for &x in &a {
                for &y in &b {
                    let child = rng.random_range(-spread..spread);
                    m.push(f64::from(prize * (x - y).signum()) + child);
                }
            }
            m
        }
    }
}

#[test]
fn kernel_agrees_with_lp_crate_for_every_size() {
    let mut rng = StdRng::seed_from_u64(0x6f70_7331);
    let mut solver = GameSolver::new();
    for k in 1..=16usize {
        let mut saddles = 0;
        for g in 0..GAMES_PER_SIZE {
            let family = match g % 10 {
                0..=3 => Family::Uniform,
                4..=6 => Family::GopsShaped,
                _ => Family::Degenerate,
            };
            let m = make_game(family, k, &mut rng);
            let scale = m.iter().fold(1.0f64, |s, v| s.max(v.abs()));
            let outcome = solver.solve(&m, k, k);
            assert_ne!(
                outcome.status,
                GameStatus::Uncertified,
                "k={k} {family:?} {m:?}"
            );
            saddles += usize::from(outcome.status == GameStatus::Saddle);
            // the certificate is what it says: recompute it from the strategies
            let (x, y) = (solver.strategy_a(), solver.strategy_b());
            for p in [x, y] {
                assert!(p.iter().all(|&v| v >= 0.0));
                assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            }
            let (lower, upper) = certificate_bounds(&m, k, k, x, y);
            assert!(
                upper - lower <= TOLERANCE * scale,
                "k={k} gap {}",
                upper - lower
            );
            assert!(outcome.gap <= TOLERANCE * scale);
            let reference = lp_game_value(&m, k, k);
            assert!(
                (outcome.value - reference).abs() <= TOLERANCE * scale,
                "k={k} {family:?}: kernel {} vs lp {reference}, matrix {m:?}",
                outcome.value
            );
        }
        if k == 1 {
            assert_eq!(saddles, GAMES_PER_SIZE);
        }
    }
}

#[test]
fn kernel_is_deterministic() {
    let mut rng = StdRng::seed_from_u64(7);
    let games: Vec<Vec<f64>> = (0..500)
        .map(|_| make_game(Family::GopsShaped, 9, &mut rng))
        .collect();
    let mut first = GameSolver::new();
    let mut second = GameSolver::new();
    // the second solver runs the games in reverse order, with other games in between
    let forward: Vec<_> = games.iter().map(|m| first.solve(m, 9, 9)).collect();
    for (m, want) in games.iter().zip(&forward).rev() {
        second.solve(&make_game(Family::Uniform, 4, &mut rng), 4, 4);
        let got = second.solve(m, 9, 9);
        assert_eq!(got.value.to_bits(), want.value.to_bits());
        assert_eq!(got.gap.to_bits(), want.gap.to_bits());
    }
}
