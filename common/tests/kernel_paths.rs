//! The kernel's two paths, portable and AVX2, against each other and against the kernel
//! as it was at commit 0bf24c6 (`kernel_paths/reference.rs`): on real games of every size
//! a solve meets (from in-memory solved games, engine and full games, both objectives)
//! and GOPS-shaped games above. Started as databases of formats 3 and 4 were solved
//! ([`PivotStart::Leftmost`]), every outcome (status, value, gap) and both strategies must
//! be bit-identical to the reference: vectorising changed no stored value. Started as
//! format 5 solves ([`PivotStart::Minimax`]), the two paths must agree bit for bit with
//! each other, and the values with the reference's within the two certificates. So the
//! result does not depend on the CPU. On a CPU without AVX2 the portable path is still
//! checked against the reference. Games solved in pairs must give, bit for bit, what
//! each gives alone.

mod support;

#[path = "kernel_paths/reference.rs"]
mod reference;

use gops_common::kernel::{GameSolver, GameStatus, PivotStart, SimdPath};
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

/// Solves every game on both paths, with both starts, and with the reference; panics on
/// the first difference in any bit (in a value beyond the certificates, for the minimax
/// start against the reference). Returns the games solved and how many needed the
/// simplex.
fn check_agreement(sizes: &[Vec<Game>]) -> (usize, usize) {
    let on = |path, start| {
        let mut solver = GameSolver::with_path(path);
        solver.set_start(start);
        solver
    };
    let mut leftmost = [
        on(SimdPath::Portable, PivotStart::Leftmost),
        on(SimdPath::Avx2, PivotStart::Leftmost),
    ];
    let mut minimax = [
        on(SimdPath::Portable, PivotStart::Minimax),
        on(SimdPath::Avx2, PivotStart::Minimax),
    ];
    let mut old = reference::GameSolver::new();
    assert_eq!(leftmost[0].path(), SimdPath::Portable);
    if leftmost[1].path() == SimdPath::Portable {
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
        for solver in &mut leftmost {
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
        let [portable, fast] = &mut minimax;
        let got = portable.solve(m, rows, cols);
        let fast_got = fast.solve(m, rows, cols);
        assert_eq!(
            (got.status, got.value.to_bits(), got.gap.to_bits()),
            (
                fast_got.status,
                fast_got.value.to_bits(),
                fast_got.gap.to_bits()
            ),
            "minimax start, portable vs AVX2, {rows}x{cols}: {got:?} vs {fast_got:?} for {m:?}"
        );
        assert_eq!(
            bits(portable.strategy_a()),
            bits(fast.strategy_a()),
            "{m:?}"
        );
        assert_eq!(
            bits(portable.strategy_b()),
            bits(fast.strategy_b()),
            "{m:?}"
        );
        if want_status != GameStatus::Uncertified {
            // both enclose the value: they differ by at most the two gaps
            assert_ne!(got.status, GameStatus::Uncertified, "{m:?}");
            let scale = m.iter().fold(1.0f64, |s, v| s.max(v.abs()));
            assert!(
                (got.value - want.value).abs() <= got.gap + want.gap + 1e-14 * scale,
                "minimax start {got:?} vs reference {want:?} for {m:?}"
            );
        }
        games += 1;
        simplex += usize::from(want.status != reference::GameStatus::Saddle);
    }
    (games, simplex)
}

/// Solves neighbouring games of equal dimensions as pairs ([`GameSolver::solve_pair`]) on
/// both paths with both starts; panics unless every outcome, strategy and pivot count is
/// bit for bit what solving each game alone gives. Returns the pairs checked.
fn check_pairs(sizes: &[Vec<Game>]) -> usize {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    let mut pairs = 0;
    for path in [SimdPath::Portable, SimdPath::Avx2] {
        for start in [PivotStart::Leftmost, PivotStart::Minimax] {
            let mut alone = GameSolver::with_path(path);
            alone.set_start(start);
            let mut paired = alone.clone();
            for pair in sizes.iter().flat_map(|games| games.chunks_exact(2)) {
                let [(m0, rows, cols), (m1, rows1, cols1)] = [&pair[0], &pair[1]];
                if (rows, cols) != (rows1, cols1) {
                    continue;
                }
                let got = paired.solve_pair(m0, m1, *rows, *cols);
                for (i, m) in [m0, m1].into_iter().enumerate() {
                    let want = alone.solve(m, *rows, *cols);
                    let (x, y, pivots) = paired.pair_results()[i];
                    assert_eq!(
                        (got[i].status, got[i].value.to_bits(), got[i].gap.to_bits()),
                        (want.status, want.value.to_bits(), want.gap.to_bits()),
                        "{path:?} {start:?} game {i} of a pair: {m:?}"
                    );
                    assert_eq!(bits(x), bits(alone.strategy_a()), "{path:?} {m:?}");
                    assert_eq!(bits(y), bits(alone.strategy_b()), "{path:?} {m:?}");
                    assert_eq!(pivots, alone.last_pivots(), "{path:?} {m:?}");
                }
                pairs += 1;
            }
        }
    }
    pairs
}

/// About 1.1 million games: 100,000 real ones per size k = 1..9, 20,000 synthetic ones
/// per size k = 10..16. Run in release mode (`cargo test --release`): tens of seconds in
/// debug builds.
#[test]
fn portable_avx2_and_reference_agree_bit_for_bit() {
    let sizes = corpus(100_000, 20_000, 0x7061_7468);
    let (games, simplex) = check_agreement(&sizes);
    assert!(games >= 1_000_000, "{games} games");
    let pairs = check_pairs(&sizes);
    assert!(pairs >= 4 * 300_000, "{pairs} pairs");
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
    let pairs = check_pairs(&sizes);
    assert!(pairs >= 4 * 3_000_000, "{pairs} pairs");
}
