//! Kernel benchmark: nanoseconds per matrix game by size k, on the games a solve really
//! meets (sampled from the solved 9-card points game for k <= 9, GOPS-shaped synthetic
//! games above; best of 5 runs), with the general LP crate microlp timed on the same games for the ratio.
//! `kernel ns` solves the games one by one, `paired ns` two at a time
//! ([`GameSolver::solve_pair`], as the layer engine does; checked to give the same
//! saddle points and pivots).
//!
//! Beside each size it prints an estimate of the hardware's limit for that size: the
//! floating-point operations a game needs (the pivots the kernel made on these games,
//! each a multiply and a subtract on every used entry of the (k+1) x (k+1) tableau, plus
//! the certificate's 2 k^2 multiply-adds), at this core's peak of 16 f64 flop per cycle
//! (4-wide AVX2, two multiply and two add pipes; no FMA, which the kernel must not use),
//! at the clock `/proc/cpuinfo` reports (or `GOPS_BENCH_GHZ`). Saddle checks, ratio tests,
//! pivot choice and the polish are left out: the estimate is a floor, not a target.
//!
//! Run: `cargo bench -p gops-common --bench kernel`. `GOPS_BENCH_SIZES=4,8,13` limits
//! the sizes; `GOPS_BENCH_NO_LP=1` skips microlp. For instruction counts, run the bench
//! binary under `valgrind --tool=callgrind --toggle-collect='*time_kernel*'`.

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
/// The kernel's time is the best of this many runs over the games: the machine is shared.
const REPEATS: usize = 5;

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

/// Peak f64 operations per cycle assumed for the limit: 4 lanes x (2 multiplies + 2 adds).
const PEAK_FLOP_PER_CYCLE: f64 = 16.0;

/// The clock in GHz: `GOPS_BENCH_GHZ`, else the first `cpu MHz` of /proc/cpuinfo, else 3.
fn clock_ghz() -> (f64, &'static str) {
    if let Some(ghz) = std::env::var("GOPS_BENCH_GHZ")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return (ghz, "GOPS_BENCH_GHZ");
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpuinfo
        .lines()
        .find(|l| l.starts_with("cpu MHz"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or((3.0, "assumed"), |mhz| (mhz / 1000.0, "/proc/cpuinfo"))
}

/// Solves every game once; the saddle points and pivots counted. Not inlined, so that
/// callgrind can count exactly this (`--toggle-collect='*time_kernel*'`).
#[inline(never)]
fn time_kernel(solver: &mut GameSolver, games: &[Vec<f64>], k: usize) -> (usize, u64) {
    let mut saddles = 0usize;
    let mut pivots = 0u64;
    for m in games {
        let outcome = solver.solve(black_box(m), k, k);
        saddles += usize::from(outcome.status == GameStatus::Saddle);
        pivots += u64::from(solver.last_pivots());
        black_box(outcome);
    }
    (saddles, pivots)
}

/// [`time_kernel`] with the games solved two at a time ([`GameSolver::solve_pair`]).
#[inline(never)]
fn time_kernel_pairs(solver: &mut GameSolver, games: &[Vec<f64>], k: usize) -> (usize, u64) {
    let mut saddles = 0usize;
    let mut pivots = 0u64;
    for pair in games.chunks_exact(2) {
        let outcomes = solver.solve_pair(black_box(&pair[0]), black_box(&pair[1]), k, k);
        for (outcome, (_, _, n)) in outcomes.iter().zip(solver.pair_results()) {
            saddles += usize::from(outcome.status == GameStatus::Saddle);
            pivots += u64::from(n);
        }
        black_box(outcomes);
    }
    (saddles, pivots)
}

fn main() {
    let sizes: Vec<usize> = std::env::var("GOPS_BENCH_SIZES")
        .map(|v| v.split(',').filter_map(|k| k.trim().parse().ok()).collect())
        .unwrap_or_else(|_| (1..=16).collect());
    let with_lp = std::env::var_os("GOPS_BENCH_NO_LP").is_none();
    let (ghz, clock_source) = clock_ghz();
    let mut rng = StdRng::seed_from_u64(42);
    let started = Instant::now();
    let solution = InMemorySolution::solve(9, Objective::Points).expect("9-card game solves");
    eprintln!(
        "solved the 9-card game for sample games in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "limit: {PEAK_FLOP_PER_CYCLE} flop/cycle at {ghz:.2} GHz ({clock_source}); \
         flop/game = pivots x (k+1)^2 x 2 + 4 k^2"
    );
    println!(
        "{:>3} {:>10} {:>8} {:>8} {:>9} {:>9} {:>10} {:>9} {:>8} {:>11} {:>7}",
        "k",
        "source",
        "saddle%",
        "pivots",
        "flop",
        "limit ns",
        "kernel ns",
        "paired ns",
        "x limit",
        "microlp ns",
        "ratio"
    );
    let mut solver = GameSolver::new();
    for k in 1..=16usize {
        // every size draws its games, so a subset of sizes times the same games
        let (games, source) = if k <= 9 {
            (real_games(&solution, k as u8, &mut rng), "gops-9")
        } else {
            (synthetic_games(k, &mut rng), "synthetic")
        };
        if !sizes.contains(&k) {
            continue;
        }
        // warm up, then time
        time_kernel(&mut solver, &games[..1000], k);
        let mut kernel_ns = f64::INFINITY;
        let (mut saddles, mut pivots) = (0, 0);
        for _ in 0..REPEATS {
            let started = Instant::now();
            (saddles, pivots) = time_kernel(&mut solver, &games, k);
            let ns = started.elapsed().as_nanos() as f64 / games.len() as f64;
            kernel_ns = kernel_ns.min(ns);
        }
        time_kernel_pairs(&mut solver, &games[..1000], k);
        let mut paired_ns = f64::INFINITY;
        for _ in 0..REPEATS {
            let started = Instant::now();
            let counts = time_kernel_pairs(&mut solver, &games, k);
            let ns = started.elapsed().as_nanos() as f64 / games.len() as f64;
            paired_ns = paired_ns.min(ns);
            assert_eq!(counts, (saddles, pivots), "pairs solve as single games do");
        }
        let pivots_per_game = pivots as f64 / games.len() as f64;
        let side = (k + 1) as f64;
        let flop = pivots_per_game * side * side * 2.0 + 4.0 * (k * k) as f64;
        let limit_ns = flop / (PEAK_FLOP_PER_CYCLE * ghz);
        let lp = if with_lp {
            let started = Instant::now();
            for m in games.iter().take(LP_GAMES_PER_SIZE) {
                black_box(lp_game_value(black_box(m), k, k));
            }
            let lp_ns = started.elapsed().as_nanos() as f64 / LP_GAMES_PER_SIZE as f64;
            format!("{lp_ns:>11.0} {:>6.0}x", lp_ns / kernel_ns)
        } else {
            format!("{:>11} {:>7}", "-", "-")
        };
        println!(
            "{k:>3} {source:>10} {:>7.1}% {pivots_per_game:>8.2} {flop:>9.0} {limit_ns:>9.1} \
             {kernel_ns:>10.0} {paired_ns:>9.0} {:>7.1}x {lp}",
            100.0 * saddles as f64 / games.len() as f64,
            kernel_ns / limit_ns
        );
    }
}
