//! `engine::fill_matrix`, whose per-layout fast paths must give, bit for bit, what
//! `Slice::value` gives entry by entry, on the slices of solved games of both objectives:
//! every canonical pattern of every layer, several prize sets, every upcard and (for
//! `win`) every live score difference and some beyond.

use gops_common::engine::{LayerEngine, fill_matrix};
use gops_common::objective::Objective;
use gops_common::prizes::{prize_rank, prize_unrank};
use gops_common::solution::InMemorySolution;

#[test]
fn fill_matrix_matches_slice_values_bit_for_bit() {
    let mut entries = 0u64;
    for (n, objective) in [(8u8, Objective::Points), (7, Objective::Win)] {
        let solution = InMemorySolution::solve(n, objective).expect("solves");
        for k in 1..=n {
            let engine = LayerEngine::new(n, k, objective);
            let slices = solution.layers[k as usize].len();
            for rank in (0..slices).step_by(slices.div_ceil(12)) {
                let prizes = prize_unrank(rank as u32, k);
                let range = objective.diff_range(prizes);
                for p in 0..engine.layout.canonical_count() {
                    let (rows, cols, children, signs) = engine.children.of(p);
                    let mut m = vec![f64::NAN; rows * cols];
                    for d in -range - 2..=range + 2 {
                        for (c, rest) in LayerEngine::dependencies(prizes) {
                            let below = &solution.layers[k as usize - 1][prize_rank(rest) as usize];
                            fill_matrix(objective, &mut m, children, signs, d, c, below);
                            for ((&got, &child), &s) in m.iter().zip(children).zip(signs) {
                                let c = i32::from(c) * i32::from(s);
                                let want = match objective {
                                    Objective::Points => f64::from(c) + below.value(child, 0),
                                    Objective::Win => below.value(child, d + c),
                                };
                                assert_eq!(got.to_bits(), want.to_bits(), "{objective} k={k}");
                                entries += 1;
                            }
                        }
                        if objective == Objective::Points {
                            break;
                        }
                    }
                }
            }
        }
    }
    assert!(entries > 1_000_000, "{entries} entries");
}
