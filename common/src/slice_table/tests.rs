//! Partial slices against whole ones, on every slice of small solved games, and damaged
//! tables and values refused.

use super::*;
use crate::layout::Oriented;
use crate::solution::InMemorySolution;

/// The table of `slice` (slice `rank` of layer `k` of the `n`-card game) from its bytes.
fn table_of(n: u8, objective: Objective, k: u8, rank: u32, body: &[u8]) -> SliceTable {
    let shape = SliceShape::of(n, objective, k, rank).unwrap();
    SliceTable::new(shape, &body[..shape.table_bytes()], body.len() as u64).unwrap()
}

/// The partial slice of `patterns`, read from `body` as a store reads its file.
fn partial_of(table: &SliceTable, body: &[u8], patterns: &[usize]) -> Slice {
    let reads: Vec<(usize, &[u8])> = patterns
        .iter()
        .map(|&p| {
            let r = table.values_at(p);
            (p, &body[r.start as usize..r.end as usize])
        })
        .collect();
    table.partial(&reads).unwrap()
}

/// Every pattern read gives the whole slice's bits at every score difference (beyond the
/// live range too) in both orientations; every pattern not read gives NaN inside it.
fn check_partial(whole: &Slice, partial: &Slice, read: &[usize]) {
    let range = whole.diff_range;
    for p in 0..whole.patterns() {
        for mirrored in [false, true] {
            let at = Oriented::new(p as u32, mirrored);
            for d in -range - 2..=range + 2 {
                let (w, got) = (whole.value(at, d), partial.value(at, d));
                if read.contains(&p) || d.abs() > range {
                    assert_eq!(w.to_bits(), got.to_bits(), "pattern {p} at {d}");
                } else {
                    assert!(got.is_nan(), "pattern {p} not read gives {got} at {d}");
                }
            }
        }
    }
}

#[test]
fn partial_slices_read_as_the_whole_ones_on_small_games() {
    for objective in [Objective::Points, Objective::Win] {
        let n = 6;
        let solved = InMemorySolution::solve(n, objective).unwrap();
        let mut x = 7u64;
        for k in 1..=n {
            for (rank, whole) in solved.layers[usize::from(k)].iter().enumerate() {
                let body = whole.encode();
                let table = table_of(n, objective, k, rank as u32, &body);
                assert_eq!(table.shape().patterns, whole.patterns());
                // every pattern, none, and a pseudo-random half
                let every: Vec<usize> = (0..whole.patterns()).collect();
                let half: Vec<usize> = every
                    .iter()
                    .copied()
                    .filter(|_| {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        x >> 63 == 1
                    })
                    .collect();
                for read in [&every[..], &[][..], &half[..]] {
                    check_partial(whole, &partial_of(&table, &body, read), read);
                }
            }
        }
    }
}

#[test]
fn the_values_of_a_pattern_are_where_its_window_says() {
    // the body is the table, then each pattern's stored values in order
    let n = 7;
    let solved = InMemorySolution::solve(n, Objective::Win).unwrap();
    let k = 5;
    for (rank, whole) in solved.layers[usize::from(k)].iter().enumerate() {
        let body = whole.encode();
        let table = table_of(n, Objective::Win, k, rank as u32, &body);
        let mut next = table.shape().table_bytes() as u64;
        for p in 0..whole.patterns() {
            let r = table.values_at(p);
            assert_eq!(r.start, next, "pattern {p} of slice {rank}");
            next = r.end;
        }
        assert_eq!(next, body.len() as u64);
    }
}

#[test]
fn damaged_tables_and_values_are_errors() {
    let n = 6;
    let (k, rank) = (4u8, 3u32);
    let solved = InMemorySolution::solve(n, Objective::Win).unwrap();
    let whole = &solved.layers[usize::from(k)][rank as usize];
    let body = whole.encode();
    let shape = SliceShape::of(n, Objective::Win, k, rank).unwrap();
    let cut = shape.table_bytes();
    // a body shorter or longer than its windows say
    for len in [body.len() as u64 - 8, body.len() as u64 + 8] {
        let err = SliceTable::new(shape, &body[..cut], len).unwrap_err();
        assert!(err.contains("its windows say"), "{err}");
    }
    // a table cut short
    assert!(SliceTable::new(shape, &body[..cut - 4], body.len() as u64).is_err());
    // a window beyond the positions
    let mut table = body[..cut].to_vec();
    table[2..4].copy_from_slice(&u16::MAX.to_le_bytes());
    let err = SliceTable::new(shape, &table, body.len() as u64).unwrap_err();
    assert!(err.contains("outside"), "{err}");
    // a value out of range, and bytes of the wrong length
    let good = SliceTable::new(shape, &body[..cut], body.len() as u64).unwrap();
    let p = (0..whole.patterns())
        .find(|&p| !good.values_at(p).is_empty())
        .expect("a pattern with stored values");
    let r = good.values_at(p);
    let mut bytes = body[r.start as usize..r.end as usize].to_vec();
    bytes[..8].copy_from_slice(&1.5f64.to_le_bytes());
    let err = good.partial(&[(p, &bytes[..])]).unwrap_err();
    assert!(err.contains("out of range"), "{err}");
    bytes[..8].copy_from_slice(&f64::NAN.to_le_bytes());
    assert!(good.partial(&[(p, &bytes[..])]).is_err());
    assert!(good.partial(&[(p, &bytes[8..])]).is_err());
    // a slice the game does not have
    assert!(SliceShape::of(n, Objective::Win, 7, 0).is_err());
    assert!(SliceShape::of(n, Objective::Win, k, 15).is_err());
}

#[test]
fn a_points_value_must_be_finite() {
    let n = 5;
    let solved = InMemorySolution::solve(n, Objective::Points).unwrap();
    let (k, rank) = (3u8, 2u32);
    let body = solved.layers[usize::from(k)][rank as usize].encode();
    let table = table_of(n, Objective::Points, k, rank, &body);
    let r = table.values_at(0);
    assert_eq!(r.end - r.start, 8, "one value per pattern");
    let mut bytes = body[r.start as usize..r.end as usize].to_vec();
    assert!(table.partial(&[(0, &bytes[..])]).is_ok());
    bytes.copy_from_slice(&f64::INFINITY.to_le_bytes());
    assert!(table.partial(&[(0, &bytes[..])]).is_err());
}
