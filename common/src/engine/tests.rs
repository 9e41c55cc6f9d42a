//! The engine's fast paths (prepared `win` entries, runs of score differences, the
//! settled window) against the plain ones, bit for bit.

use super::*;
use crate::layout::Oriented;
use crate::reach::is_reachable;
use crate::solution::InMemorySolution;

/// The slices of `below` that the slice of `prizes` reads, by upcard.
fn views_of(prizes: CardSet, below: &[Slice]) -> Vec<(u8, &Slice)> {
    LayerEngine::dependencies(prizes)
        .map(|(c, rest)| (c, &below[prize_rank(rest) as usize]))
        .collect()
}

/// Calls `visit(engine, scratch, prizes, views, range, p)` for every pattern `p` of 8
/// slices (of prize set `prizes`, reading `views`, live score differences up to
/// `range`) of every layer from 2 on of the solved `n`-card win game, with `scratch`
/// prepared for it (every such pattern is: its slices below are windowed).
fn for_sampled_win_patterns(
    n: u8,
    mut visit: impl FnMut(&LayerEngine, &mut StateScratch, CardSet, &[(u8, &Slice)], i32, usize),
) {
    let solution = InMemorySolution::solve(n, Objective::Win).expect("solves");
    let mut scratch = StateScratch::default();
    for k in 2..=n {
        let engine = LayerEngine::new(n, k, Objective::Win);
        let slices = solution.layers[k as usize].len();
        for rank in (0..slices).step_by(slices.div_ceil(8)) {
            let prizes = prize_unrank(rank as u32, k);
            let views = views_of(prizes, &solution.layers[k as usize - 1]);
            let range = Objective::Win.diff_range(prizes);
            for p in 0..engine.layout.canonical_count() {
                let (_, _, children, signs) = engine.children.of(p);
                scratch.prepare_win(p, children, signs, &views);
                assert_eq!(scratch.prepared, Some(p), "k={k}: windowed slices below");
                visit(&engine, &mut scratch, prizes, &views, range, p);
            }
        }
    }
}

fn bits(m: &[f64]) -> Vec<u64> {
    m.iter().map(|v| v.to_bits()).collect()
}

/// The prepared `win` fill, on both paths, gives, bit for bit, the matrices of
/// [`fill_matrix`]: every sampled pattern of the 7-card game, every upcard, every
/// live score difference that can occur and some beyond; each entry is exactly -1
/// below its [`WinEntry::lost_below`] and exactly +1 from its [`WinEntry::won_from`]
/// on, and nowhere else.
#[test]
fn prepared_win_fill_equals_fill_matrix_bit_for_bit() {
    let mut matrices = 0u64;
    for_sampled_win_patterns(7, |engine, scratch, prizes, views, range, p| {
        let (k, (rows, cols, children, signs)) = (engine.layout.k, engine.children.of(p));
        let size = rows * cols;
        let (mut got, mut want) = (vec![f64::NAN; size], vec![f64::NAN; size]);
        let reachable = (-range - 2..=range + 2).filter(|&d| is_reachable(7, prizes, d));
        for d in reachable {
            for (game, &(c, view)) in views.iter().enumerate() {
                let entries = &scratch.win[game * size..][..size];
                fill_matrix(Objective::Win, &mut want, children, signs, d, c, view);
                // the portable path, and the AVX2 one where the CPU has it
                matrix_fill::fill_win_portable(&mut got, entries, d, &view.values);
                assert_eq!(bits(&got), bits(&want), "k={k} p={p} d={d} c={c}");
                matrix_fill::fill_win(&mut got, entries, d, &view.values);
                assert_eq!(bits(&got), bits(&want), "k={k} p={p} d={d} c={c}");
                // and each entry is exactly -1 / +1 where its thresholds say
                for (&v, e) in got.iter().zip(entries) {
                    assert_eq!(v == -1.0, d < e.lost_below(), "{e:?} d={d}: {v}");
                    assert_eq!(v == 1.0, d >= e.won_from(), "{e:?} d={d}: {v}");
                }
                matrices += 1;
            }
        }
    });
    assert!(matrices > 100_000, "{matrices} matrices");
}

/// The `win` run fill gives, game by game, [`fill_matrix`]'s matrices bit for bit at
/// the score differences that can occur (the others read placeholders, and are not
/// solved): runs of four (the AVX2 path where the CPU has it) and three (one by one)
/// and the portable run of four, from every start around the live score
/// differences, every sampled pattern of the 7-card game.
#[test]
fn win_run_fill_equals_fill_matrix_bit_for_bit() {
    let mut matrices = 0u64;
    for_sampled_win_patterns(7, |engine, scratch, prizes, views, range, p| {
        let (k, (rows, cols, children, signs)) = (engine.layout.k, engine.children.of(p));
        let size = rows * cols;
        let mut want = vec![f64::NAN; size];
        for (game, &(c, view)) in views.iter().enumerate() {
            let entries = &scratch.win[game * size..][..size];
            for (d0, run) in (-range - 5..=range + 2).flat_map(|d0| [(d0, 4), (d0, 3)]) {
                let (mut got, mut portable) =
                    (vec![f64::NAN; run * size], vec![f64::NAN; run * size]);
                matrix_fill::fill_win_run(&mut got, entries, d0, &view.values);
                matrix_fill::fill_win_run_portable(&mut portable, entries, d0, &view.values);
                let games = got.chunks_exact(size).zip(portable.chunks_exact(size));
                for ((got, portable), d) in games.zip(d0..) {
                    if !is_reachable(7, prizes, d) {
                        continue;
                    }
                    fill_matrix(Objective::Win, &mut want, children, signs, d, c, view);
                    assert_eq!(bits(got), bits(&want), "k={k} p={p} d={d} run {run}");
                    assert_eq!(bits(portable), bits(&want), "k={k} p={p} d={d}");
                    matrices += 1;
                }
            }
        }
    });
    assert!(matrices > 100_000, "{matrices} matrices");
}

/// The window of d read off the children's windows is exactly where the values of a
/// 7-card win game solved at every d (no windows, no bisection) are neither -1 nor
/// +1: -1.0 below it, +1.0 from its end on, strictly between inside (so it is tight).
#[test]
fn unsettled_window_is_where_exhaustive_values_are_not_exact() {
    let n = 7;
    let full =
        InMemorySolution::solve_with(n, Objective::Win, DiffSearch::Exhaustive).expect("solves");
    let mut scratch = StateScratch::default();
    let mut states = 0u64;
    for k in 2..=n {
        let engine = LayerEngine::new(n, k, Objective::Win);
        let below = &full.layers[k as usize - 1];
        for (rank, slice) in full.layers[k as usize].iter().enumerate() {
            let prizes = prize_unrank(rank as u32, k);
            let views = views_of(prizes, below);
            let range = Objective::Win.diff_range(prizes);
            for p in 0..engine.layout.canonical_count() {
                let (rows, cols, children, signs) = engine.children.of(p);
                scratch.prepare_win(p, children, signs, &views);
                let (lo, hi) = scratch.unsettled_window(p, rows, cols).expect("prepared");
                let at = Oriented::new(p as u32, false);
                for d in -range..=range {
                    let v = slice.value(at, d);
                    if !is_reachable(n, prizes, d) {
                        assert!(v.is_nan() || v.abs() == 1.0, "placeholder or outside");
                        continue;
                    }
                    let want = match d {
                        d if d < lo => v == -1.0,
                        d if d >= hi => v == 1.0,
                        _ => -1.0 < v && v < 1.0,
                    };
                    assert!(want, "k={k} prizes {prizes} p={p} d={d}: {v} vs {lo}..{hi}");
                    states += 1;
                }
            }
        }
    }
    assert!(states > 100_000, "{states} states");
}

/// A pattern whose slices below are not windowed (layer 1 reads the dense terminal
/// slice) is left to [`fill_matrix`].
#[test]
fn dense_slices_below_are_not_prepared() {
    let engine = LayerEngine::new(3, 1, Objective::Win);
    let terminal = terminal_slice();
    let (_, _, children, signs) = engine.children.of(0);
    let mut scratch = StateScratch::default();
    scratch.prepare_win(0, children, signs, &[(2, &terminal)]);
    assert_eq!(scratch.prepared, None);
}

/// Upcard by upcard (games filled four score differences at a time, solved in pairs)
/// and pattern by pattern (each state's games filled and solved on their own) give the
/// same `win` slices, bit for bit (every value, the largest gap, the games solved), and
/// the placeholder [`UNREACHABLE`] at the score differences that cannot occur: every
/// slice of every layer from 2 on of the 7- and 8-card games; also with some or all
/// patterns left alone (`Plan::Alone`, solved pattern by pattern at the end).
#[test]
fn win_slices_by_upcard_equal_those_by_pattern() {
    for n in [7u8, 8] {
        let solution = InMemorySolution::solve(n, Objective::Win).expect("solves");
        for k in 2..=n {
            let engine = LayerEngine::new(n, k, Objective::Win);
            for rank in 0..solution.layers[k as usize].len() as u32 {
                let prizes = prize_unrank(rank, k);
                let views = views_of(prizes, &solution.layers[k as usize - 1]);
                assert!(engine.by_upcard(&views));
                let (width, diff_range) = (
                    Objective::Win.slice_width(prizes),
                    Objective::Win.diff_range(prizes),
                );
                let reach = engine.reach(prizes);
                let run_reach = reach.unwrap_or_else(|| Reach::full(diff_range));
                let size = engine.layout.canonical_count() * width;
                let (mut by_upcard, mut by_pattern) = (vec![0.0; size], vec![0.0; size]);
                let slice = by_upcard::SliceInProgress {
                    prizes,
                    views: &views,
                    reach: &run_reach,
                    width,
                    diff_range,
                };
                let upcard_cost = engine.solve_win_by_upcard(&slice, &mut by_upcard).unwrap();
                let pattern_cost = engine
                    .solve_by_pattern(&mut by_pattern, &views, prizes, reach.as_ref(), &run_reach)
                    .unwrap();
                let at = format!("n={n} k={k} rank={rank}");
                assert_eq!(bits(&by_upcard), bits(&by_pattern), "{at}");
                assert_eq!(upcard_cost.0.to_bits(), pattern_cost.0.to_bits(), "{at}");
                assert_eq!(upcard_cost.1, pattern_cost.1, "{at}");
                // every third pattern left alone (Plan::Alone), and every one: the same
                // values; more games (and so a gap as large or larger), as a pattern alone
                // finds its window by bisection, solving games at settled differences too
                for every in [3, 1] {
                    let mut mixed = vec![0.0; size];
                    let mixed_cost = engine
                        .solve_win_by_upcard_leaving(&slice, &mut mixed, &|p| p % every == 0)
                        .unwrap();
                    assert_eq!(bits(&mixed), bits(&by_pattern), "{at}, alone 1 in {every}");
                    assert!(
                        mixed_cost.0 >= pattern_cost.0 && mixed_cost.0 < 1e-9,
                        "{at}"
                    );
                    assert!(mixed_cost.1 >= pattern_cost.1, "{at}, alone 1 in {every}");
                }
            }
        }
    }
}
