//! The kernel's two pivot starts over whole solves: the values of a db of format 5
//! (simplex started on B's minimax column) against those the kernel of formats 3 and 4
//! computes (leftmost column first), state by state, for the 10-card points and 8-card win
//! games. Their last bits differ (so do the layer checksums); the values must agree far
//! inside the certificate tolerance.

use gops_common::engine::DiffSearch;
use gops_common::kernel::PivotStart;
use gops_common::objective::Objective;
use gops_common::solution::InMemorySolution;

/// The largest difference between the two starts' values, over every stored state, and
/// how many states differ in any bit.
fn compare(n: u8, objective: Objective) -> (f64, usize, usize) {
    let solve = |start| InMemorySolution::solve_as(n, objective, DiffSearch::Bisect, start);
    let (old, new) = (
        solve(PivotStart::Leftmost).unwrap(),
        solve(PivotStart::Minimax).unwrap(),
    );
    let (mut largest, mut differing, mut states) = (0.0f64, 0, 0);
    for (old_layer, new_layer) in old.layers.iter().zip(&new.layers) {
        for (a, b) in old_layer.iter().zip(new_layer) {
            assert_eq!(a.values.len(), b.values.len());
            for (x, y) in a.values.iter().zip(&b.values) {
                largest = largest.max((x - y).abs());
                differing += usize::from(x.to_bits() != y.to_bits());
                states += 1;
            }
        }
    }
    (largest, differing, states)
}

#[test]
fn the_minimax_start_agrees_with_the_leftmost_to_1e_12_over_whole_solves() {
    for (n, objective) in [(10, Objective::Points), (8, Objective::Win)] {
        let (largest, differing, states) = compare(n, objective);
        eprintln!(
            "{n} cards {objective:?}: {differing} of {states} values differ in some bit, by at most {largest:e}"
        );
        assert!(largest <= 1e-12, "{n} {objective:?}: {largest:e}");
        // the starts really differ (else this test would check nothing)
        assert!(differing > 0, "{n} {objective:?}");
    }
}
