//! The kernel's two paths, portable and AVX2, against each other and against the kernel
//! as it was at commit 0bf24c6 (`kernel_paths/reference.rs`): on real games of every size
//! a solve meets (from in-memory solved games, engine and full games, both objectives)
//! and GOPS-shaped games above, every outcome (status, value, gap) and both strategies
//! must be bit-identical. So vectorising changed no stored value, and the result does not
//! depend on the CPU. On a CPU without AVX2 the portable path is still checked against
//! the reference.

mod support;

#[path = "kernel_paths/reference.rs"]
mod reference;

use gops_common::kernel::{GameSolver, GameStatus, SimdPath};
use gops_common::objective::Objective;
use gops_common::solution::InMemorySolution;
use rand::SeedableRng;
use rand::rngs::StdRng;
use support::{Game, real_games, synthetic_games};

/// Games per size from the solved games (both objectives together) and synthetic ones.
fn corpus(real_per_size: usize, synthetic_per_size: usize, seed: u64) -> Vec<Vec<Game>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let points = InMemorySolution::solve(9, Objective::Points).expect("9-card points game");
    let win = InMemorySolution::solve(8, Objective::Win).expect("8-card win game");
    let mut sizes = Vec::new();
    for k in 1..=16u8 {
        let mut games = Vec::new();
        if k <= 8 {
            games.extend(real_games(&points, k, real_per_size / 2, &mut rng));
            games.extend(real_games(&win, k, real_per_size / 2, &mut rng));
        } else if k == 9 {
            games.extend(real_games(&points, k, real_per_size, &mut rng));
        } else {
            games.extend(synthetic_games(k as usize, synthetic_per_size, &mut rng));
        }
        sizes.push(games);
    }
    sizes
}

/// Solves every game on both paths and with the reference; panics on the first
/// difference in any bit. Returns the games solved and how many needed the simplex.
fn check_agreement(sizes: &[Vec<Game>]) -> (usize, usize) {
    let mut portable = GameSolver::with_path(SimdPath::Portable);
    let mut fast = GameSolver::new();
    let mut old = reference::GameSolver::new();
    assert_eq!(portable.path(), SimdPath::Portable);
    if fast.path() == SimdPath::Portable {
        eprintln!("this CPU has no AVX2: checking the portable path against the reference");
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let (mut games, mut simplex) = (0, 0);
    for (m, rows, cols) in sizes.iter().flatten() {
        let (rows, cols) = (*rows, *cols);
        let want = old.solve(m, rows, cols);
        let want_status = match want.status {
            reference::GameStatus::Saddle => GameStatus::Saddle,
            reference::GameStatus::Solved => GameStatus::Solved,
            reference::GameStatus::Uncertified => GameStatus::Uncertified,
        };
        for solver in [&mut portable, &mut fast] {
            let got = solver.solve(m, rows, cols);
            let path = solver.path();
            assert_eq!(got.status, want_status, "{path:?} {rows}x{cols} {m:?}");
            assert_eq!(
                (got.value.to_bits(), got.gap.to_bits()),
                (want.value.to_bits(), want.gap.to_bits()),
                "{path:?} {rows}x{cols}: {got:?} vs {want:?} for {m:?}"
            );
            assert_eq!(
                bits(solver.strategy_a()),
                bits(old.strategy_a()),
                "{path:?} {m:?}"
            );
            assert_eq!(
                bits(solver.strategy_b()),
                bits(old.strategy_b()),
                "{path:?} {m:?}"
            );
        }
        games += 1;
        simplex += usize::from(want.status != reference::GameStatus::Saddle);
    }
    (games, simplex)
}

/// About 1.1 million games: 100,000 real ones per size k = 1..9, 20,000 synthetic ones
/// per size k = 10..16. Run in release mode (`cargo test --release`): tens of seconds in
/// debug builds.
#[test]
fn portable_avx2_and_reference_agree_bit_for_bit() {
    let sizes = corpus(100_000, 20_000, 0x7061_7468);
    let (games, simplex) = check_agreement(&sizes);
    assert!(games >= 1_000_000, "{games} games");
    assert!(
        simplex > games / 2,
        "only {simplex} of {games} games needed the simplex"
    );
}

/// The same on ten times as many games (different ones): run with `--ignored`.
#[test]
#[ignore]
fn portable_avx2_and_reference_agree_bit_for_bit_large() {
    let sizes = corpus(1_000_000, 200_000, 0x6c61_7267);
    let (games, _) = check_agreement(&sizes);
    assert!(games >= 10_000_000, "{games} games");
}
