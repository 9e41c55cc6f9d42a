//! The kernel on small games with known values, and regressions from real solves.

use super::*;

fn solve(m: &[f64], rows: usize, cols: usize) -> (GameOutcome, Vec<f64>, Vec<f64>) {
    let mut s = GameSolver::new();
    let o = s.solve(m, rows, cols);
    (o, s.strategy_a().to_vec(), s.strategy_b().to_vec())
}

#[test]
fn one_by_one() {
    let (o, x, y) = solve(&[-3.5], 1, 1);
    assert_eq!(o.value, -3.5);
    assert_eq!(o.status, GameStatus::Saddle);
    assert_eq!((x, y), (vec![1.0], vec![1.0]));
}

#[test]
fn matching_pennies() {
    let (o, x, y) = solve(&[1.0, -1.0, -1.0, 1.0], 2, 2);
    assert_eq!(o.status, GameStatus::Solved);
    assert!(o.value.abs() < 1e-15);
    assert!(o.gap < 1e-15);
    assert!((x[0] - 0.5).abs() < 1e-15 && (y[1] - 0.5).abs() < 1e-15);
}

#[test]
fn rock_paper_scissors_shifted() {
    let m = [3.0, 2.0, 4.0, 4.0, 3.0, 2.0, 2.0, 4.0, 3.0];
    let (o, x, _) = solve(&m, 3, 3);
    assert!((o.value - 3.0).abs() < 1e-14, "{o:?}");
    for p in x {
        assert!((p - 1.0 / 3.0).abs() < 1e-14);
    }
}

#[test]
fn saddle_point() {
    // row 1 column 0 is min of its row and max of its column
    let m = [1.0, 5.0, 2.0, 3.0];
    let (o, x, y) = solve(&m, 2, 2);
    assert_eq!(o.status, GameStatus::Saddle);
    assert_eq!(o.value, 2.0);
    assert_eq!((x, y), (vec![0.0, 1.0], vec![1.0, 0.0]));
}

#[test]
fn rectangular_game() {
    // A: 2 rows, B: 3 columns; value 1/2 with x = (1/2, 1/2)
    let m = [1.0, 0.0, 2.0, 0.0, 1.0, -1.0];
    let (o, x, _) = solve(&m, 2, 3);
    assert!((o.value - 0.5).abs() < 1e-14, "{o:?}");
    assert!((x[0] - 0.5).abs() < 1e-14);
}

/// N = 12, layer 5: three equal columns made the plain ratio test pivot on 1.9e-11
/// and the simplex ended with a gap of 0.84.
#[test]
fn regression_degenerate_equal_columns_tiny_pivot() {
    let m = [
        -29.798657718120808,
        -34.0,
        -26.879027421409646,
        -26.879027421409646,
        -26.879027421409646,
        -19.798657718120808,
        -34.0,
        -26.953941801480482,
        -26.953941801480482,
        -26.953941801480482,
        -19.798657718120808,
        -34.0,
        -26.953941801480482,
        -26.953941801480482,
        -26.953941801480482,
        -21.86577181208053,
        -24.0,
        -29.09401492958626,
        -29.09401492958626,
        -29.09401492958626,
        -23.93288590604027,
        -14.0,
        -31.233603278618823,
        -31.233603278618823,
        -31.233603278618823,
    ];
    let (o, _, _) = solve(&m, 5, 5);
    assert_eq!(o.status, GameStatus::Solved);
    assert!(o.gap < 1e-12, "{o:?}");
    assert!((o.value - -28.152250796449422).abs() < 1e-12, "{o:?}");
}

/// N = 12, layer 6: nearly equal rows (differing by 6e-8) left the simplex with a
/// gap of 3e-9 before the basis polish.
#[test]
fn regression_near_equal_rows_need_polish() {
    let m = [
        -23.473421711216027,
        -26.197359022906728,
        -25.15887978987788,
        -24.015004140866672,
        -21.571828901000583,
        -21.571828901000583,
        -19.473421711216027,
        -26.197359022906728,
        -25.15887978987788,
        -24.0150042035605,
        -21.571828901000583,
        -21.571828901000583,
        -19.473421711216027,
        -26.197359022906728,
        -25.15887978987788,
        -24.0150042035605,
        -21.571828901000583,
        -21.571828901000583,
        -19.473421711216027,
        -26.197359022906728,
        -25.15887978987788,
        -24.0150042035605,
        -21.571828901000583,
        -21.571828901000583,
        -19.95756165262511,
        -22.197359022906728,
        -26.197359022906728,
        -24.819643084243975,
        -22.563476082470277,
        -22.563476082470277,
        -22.505988023952096,
        -21.0,
        -20.023668639053255,
        -24.023668639053255,
        -28.023668639053255,
        -28.023668639053255,
    ];
    let (o, _, _) = solve(&m, 6, 6);
    assert_eq!(o.status, GameStatus::Solved);
    assert!(o.gap < 1e-12, "{o:?}");
}

#[test]
fn non_finite_entries_are_never_certified() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let (o, _, _) = solve(&[1.0, bad, -1.0, 0.5], 2, 2);
        assert_eq!(o.status, GameStatus::Uncertified, "{bad}");
        assert!(o.value.is_nan());
    }
}
