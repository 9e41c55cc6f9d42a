//! Kernel benchmark: nanoseconds per matrix game by size k, on the games a solve really
//! meets (sampled from the solved 9-card points game for k <= 9, GOPS-shaped synthetic
//! games above), with the general LP crate microlp timed on the same games for the ratio.
//! Run: `cargo bench -p gops-common --bench kernel`.

use std::hint::black_box;
use std::time::Instant;

#[path = "../tests/support/mod.rs"]
mod support;

use gops_common::engine::{LayerEngine, fill_matrix};
use gops_common::kernel::{GameSolver, GameStatus};
use gops_common::layout::full_game;
use gops_common::objective::Objective;
use gops_common::prizes::{prize_rank, prize_unrank};
use gops_common::solution::InMemorySolution;
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use support::lp_game_value;

const GAMES_PER_SIZE: usize = 20_000;
const LP_GAMES_PER_SIZE: usize = 300;

/// Real games of layer k of the solved game: every canonical pattern, several prize sets.
fn real_games(solution: &InMemorySolution, k: u8, rng: &mut StdRng) -> Vec<Vec<f64>> {
    let engine = LayerEngine::new(solution.n, k, solution.objective);
    let slices = solution.layers[k as usize].len();
    let kk = k as usize;
    let mut games = Vec::with_capacity(GAMES_PER_SIZE);
    while games.len() < GAMES_PER_SIZE {
        let prizes = prize_unrank(rng.random_range(0..slices as u32), k);
        let upcard = prizes.iter().nth(rng.random_range(0..kk)).unwrap();
        let below = &solution.layers[kk - 1][prize_rank(prizes.without(upcard)) as usize];
        // the full k x k game of a canonical pattern (the engine collapses repeated
        // moves; this measures the kernel on the games as they come)
        let pattern = engine.layout.canonical[rng.random_range(0..engine.layout.canonical_count())];
        let (children, signs) = full_game(pattern, &engine.below);
        let mut m = vec![0.0; kk * kk];
        fill_matrix(
            Objective::Points,
            &mut m,
            &children,
            &signs,
            0,
            upcard,
            below,
        );
        games.push(m);
    }
    games
}

fn synthetic_games(k: usize, rng: &mut StdRng) -> Vec<Vec<f64>> {
    (0..GAMES_PER_SIZE)
        .map(|_| {
            let hand = |rng: &mut StdRng| {
                let mut c: Vec<i32> = sample(rng, 16, k).into_iter().map(|c| c as i32).collect();
                c.sort();
                c
            };
            let (a, b) = (hand(rng), hand(rng));
            let prize = rng.random_range(1..=16);
            a.iter()
                .flat_map(|x| b.iter().map(move |y| (x - y).signum()))
                .map(|s| f64::from(prize * s) + rng.random_range(-30.0..30.0))
                .collect()
        })
        .collect()
}

fn main() {
    let mut rng = StdRng::seed_from_u64(42);
    let started = Instant::now();
    let solution = InMemorySolution::solve(9, Objective::Points).expect("9-card game solves");
    eprintln!(
        "solved the 9-card game for sample games in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:>3} {:>10} {:>8} {:>12} {:>12} {:>8}",
        "k", "source", "saddle%", "kernel ns", "microlp ns", "ratio"
    );
    let mut solver = GameSolver::new();
    for k in 1..=16usize {
        let (games, source) = if k <= 9 {
            (real_games(&solution, k as u8, &mut rng), "gops-9")
        } else {
            (synthetic_games(k, &mut rng), "synthetic")
        };
        // warm up, then time
        for m in games.iter().take(1000) {
            black_box(solver.solve(m, k, k));
        }
        let mut saddles = 0usize;
        let started = Instant::now();
        for m in &games {
            let outcome = solver.solve(black_box(m), k, k);
            saddles += usize::from(outcome.status == GameStatus::Saddle);
            black_box(outcome);
        }
        let kernel_ns = started.elapsed().as_nanos() as f64 / games.len() as f64;
        let started = Instant::now();
        for m in games.iter().take(LP_GAMES_PER_SIZE) {
            black_box(lp_game_value(black_box(m), k, k));
        }
        let lp_ns = started.elapsed().as_nanos() as f64 / LP_GAMES_PER_SIZE as f64;
        println!(
            "{k:>3} {source:>10} {:>7.1}% {kernel_ns:>12.0} {lp_ns:>12.0} {:>7.0}x",
            100.0 * saddles as f64 / games.len() as f64,
            lp_ns / kernel_ns
        );
    }
}
