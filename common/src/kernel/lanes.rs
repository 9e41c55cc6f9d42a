//! The two hot loops of the simplex, the ratio test and the pivot, in two
//! implementations: [`Portable`] (plain Rust, any CPU) and [`Avx2`] (x86-64 AVX2
//! intrinsics, four f64 lanes). Both perform the same IEEE operations on every entry in
//! the same order (a multiply, then a subtract: never a fused multiply-add, whose single
//! rounding would change the bits), so they give bit-identical tableaux and results;
//! `tests/kernel_paths.rs` checks that on millions of games.
//!
//! A tableau column holds `B` vectors of [`LANES`] entries: the constraint rows, the
//! objective row, then zero padding, which stays zero (it is only ever multiplied by zero
//! factors and skipped).

#![expect(
    unsafe_code,
    reason = "AVX2 intrinsics of the simplex lanes, each block with its SAFETY comment"
)]

use super::{Column, FEASIBILITY_TOL, LANES, MAX_STRATEGIES, PIVOT_EPS, PivotRule, non_negative};
#[cfg(target_arch = "x86_64")]
use crate::cpu::Avx2;

/// One implementation of the ratio test and the pivot.
pub(super) trait Isa: Copy {
    /// Harris's two-pass ratio test on entering column `q`: the largest step that keeps
    /// every basic variable above `-FEASIBILITY_TOL`, then, among the rows that block
    /// within that step, the one with the largest pivot entry (Dantzig) or the smallest
    /// label (Bland). Taking the largest entry among near-ties keeps tiny pivots, which
    /// wreck degenerate games (GOPS games often have equal rows and columns), out of the
    /// tableau. `t` holds columns 0..cols and the right-hand side at `cols`. Returns the
    /// row and `1 / a_pq`.
    fn leaving_row<const B: usize>(
        self,
        t: &[Column],
        rows: usize,
        cols: usize,
        q: usize,
        rule: PivotRule,
        row_label: &[u8; MAX_STRATEGIES],
    ) -> Option<(usize, f64)>;

    /// Pivots on entry (p, q) of the tableau `t` (columns 0..cols, then the right-hand
    /// side). The right-hand sides of the constraint rows are clamped at 0: the ratio test
    /// may step up to FEASIBILITY_TOL past zero, and the basis must stay feasible.
    /// `inv` is `1 / a_pq`.
    fn pivot<const B: usize>(self, t: &mut [Column], rows: usize, p: usize, q: usize, inv: f64);

    /// Fills the tableau `t` (columns 0..cols, then the right-hand side) from the
    /// row-major `rows x cols` matrix `m`: entry i of column j is
    /// `(m[i][j] - lo) * inv_range + 1`, its objective entry -1; the right-hand side is 1
    /// on the constraint rows and 0 on the objective row; the padding is 0.
    fn fill<const B: usize>(
        self,
        t: &mut [Column],
        m: &[f64],
        rows: usize,
        lo: f64,
        inv_range: f64,
    );

    /// The saddle check's pass over one row: for each entry `v` of `row`,
    /// `col_max = if v > col_max { v } else { col_max }` (a strict maximum, the earlier of
    /// equals kept) and `probe += v * 0.0` (a zero while every entry is finite, NaN from
    /// the first infinity or NaN on).
    fn fold_row<const C: usize>(self, col_max: &mut [f64; C], probe: &mut [f64; C], row: &[f64; C]);
}

/// Plain Rust: the reference semantics.
#[derive(Clone, Copy)]
pub(super) struct Portable;

impl Isa for Portable {
    #[inline(always)]
    fn fold_row<const C: usize>(
        self,
        col_max: &mut [f64; C],
        probe: &mut [f64; C],
        row: &[f64; C],
    ) {
        for ((c, p), &v) in col_max.iter_mut().zip(probe).zip(row) {
            fold_entry(c, p, v);
        }
    }

    #[inline(always)]
    fn fill<const B: usize>(
        self,
        t: &mut [Column],
        m: &[f64],
        rows: usize,
        lo: f64,
        inv_range: f64,
    ) {
        let (columns, rhs) = t.split_at_mut(t.len() - 1);
        let cols = columns.len();
        for (j, column) in columns.iter_mut().enumerate() {
            let column = column.flat_mut();
            column[..B * LANES].fill(0.0);
            for (c, &v) in column[..rows].iter_mut().zip(m[j..].iter().step_by(cols)) {
                *c = (v - lo) * inv_range + 1.0;
            }
            column[rows] = -1.0;
        }
        let rhs = rhs[0].flat_mut();
        rhs[..B * LANES].fill(0.0);
        rhs[..rows].fill(1.0);
    }

    #[inline(always)]
    fn leaving_row<const B: usize>(
        self,
        t: &[Column],
        rows: usize,
        cols: usize,
        q: usize,
        rule: PivotRule,
        row_label: &[u8; MAX_STRATEGIES],
    ) -> Option<(usize, f64)> {
        let a = &t[q].flat()[..rows];
        let rhs = &t[cols].flat()[..rows];
        let mut reciprocals = [0.0; MAX_STRATEGIES];
        let mut max_step = f64::INFINITY;
        for ((&a, &b), r) in a.iter().zip(rhs).zip(&mut reciprocals) {
            *r = 1.0 / a;
            if a > PIVOT_EPS {
                // a strict minimum: the step is never NaN for a finite tableau and, if it
                // were, both paths skip it
                let step = (b + FEASIBILITY_TOL) * *r;
                max_step = if step < max_step { step } else { max_step };
            }
        }
        let mut candidates = 0u32;
        for (i, ((&a, &b), &r)) in a.iter().zip(rhs).zip(&reciprocals).enumerate() {
            if a <= PIVOT_EPS || b * r > max_step {
                continue;
            }
            candidates |= 1 << i;
        }
        choose_row(candidates, a, rule, row_label).map(|p| (p, reciprocals[p]))
    }

    #[inline(always)]
    fn pivot<const B: usize>(self, t: &mut [Column], rows: usize, p: usize, q: usize, inv: f64) {
        let cols = t.len() - 1;
        let mut f = [[0.0; LANES]; B];
        for (f, a) in f.as_flattened_mut().iter_mut().zip(t[q].flat()) {
            *f = a * inv;
        }
        let f = f.as_flattened();
        // column q too: it is overwritten below, and skipping it would cost a branch
        for column in t.iter_mut() {
            let column = column.0[..B].as_flattened_mut();
            let g = column[p];
            for (i, (c, &f)) in column.iter_mut().zip(f).enumerate() {
                if i != p {
                    *c -= f * g;
                }
            }
            column[p] = g * inv;
        }
        for v in &mut t[cols].flat_mut()[..rows] {
            *v = non_negative(*v);
        }
        let column_q = t[q].0[..B].as_flattened_mut();
        for (c, &f) in column_q.iter_mut().zip(f) {
            *c = -f;
        }
        column_q[p] = inv;
    }
}

/// One entry of [`Isa::fold_row`]: the strict maximum and the finiteness probe. Shared by
/// both paths (the AVX2 one for the entries after its whole vectors).
#[inline(always)]
fn fold_entry(col_max: &mut f64, probe: &mut f64, v: f64) {
    *probe += v * 0.0;
    *col_max = if v > *col_max { v } else { *col_max };
}

/// Among the candidate rows (bits of `candidates`, ascending), the one with the largest
/// entry `a` (Dantzig: strictly larger replaces, so the first of equals stays) or the
/// smallest label (Bland). Shared by both paths.
#[inline(always)]
fn choose_row(
    mut candidates: u32,
    a: &[f64],
    rule: PivotRule,
    row_label: &[u8; MAX_STRATEGIES],
) -> Option<usize> {
    if candidates == 0 {
        return None;
    }
    let mut best = candidates.trailing_zeros() as usize;
    candidates &= candidates - 1;
    while candidates != 0 {
        let i = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        let better = match rule {
            PivotRule::Dantzig => a[i] > a[best],
            PivotRule::Bland => row_label[i] < row_label[best],
        };
        if better {
            best = i;
        }
    }
    Some(best)
}

/// AVX2 intrinsics, four lanes, on the proof that the CPU has them: every method takes
/// an [`Avx2`], which exists only once AVX2 was detected. They run inlined into
/// `GameSolver::solve_avx2`, compiled with AVX2 enabled, which is what makes them fast.
#[cfg(target_arch = "x86_64")]
impl Isa for Avx2 {
    #[inline(always)]
    fn fold_row<const C: usize>(
        self,
        col_max: &mut [f64; C],
        probe: &mut [f64; C],
        row: &[f64; C],
    ) {
        use std::arch::x86_64::*;
        let whole = C / LANES * LANES;
        // SAFETY: `self` proves that this CPU has AVX2 (an `Avx2` exists only once it was
        // detected);
        // the unaligned loads and stores are of entries j..j + 4 <= whole <= C of the
        // three arrays.
        unsafe {
            let zero = _mm256_setzero_pd();
            for j in (0..whole).step_by(LANES) {
                let v = _mm256_loadu_pd(row.as_ptr().add(j));
                let c = _mm256_loadu_pd(col_max.as_ptr().add(j));
                let p = _mm256_loadu_pd(probe.as_ptr().add(j));
                // MAXPD(v, c) is `v > c ? v : c`, lane by lane: the portable select
                _mm256_storeu_pd(col_max.as_mut_ptr().add(j), _mm256_max_pd(v, c));
                let p = _mm256_add_pd(p, _mm256_mul_pd(v, zero));
                _mm256_storeu_pd(probe.as_mut_ptr().add(j), p);
            }
        }
        for j in whole..C {
            fold_entry(&mut col_max[j], &mut probe[j], row[j]);
        }
    }

    #[inline(always)]
    fn fill<const B: usize>(
        self,
        t: &mut [Column],
        m: &[f64],
        rows: usize,
        lo: f64,
        inv_range: f64,
    ) {
        use std::arch::x86_64::*;
        let (t, rhs) = t.split_at_mut(t.len() - 1);
        let cols = t.len();
        let m = &m[..rows * cols];
        // block by block of four rows, each column's four entries gathered from the four
        // rows (row pointers fixed for the block, the column an offset); the block that
        // holds row `rows` takes the objective entry and the padding from `tail` (where
        // `from_tail`), its rows beyond the matrix reading its last row; later blocks
        // are zero
        // SAFETY: `self` proves that this CPU has AVX2 (an `Avx2` exists only once it was
        // detected);
        // the stores are of whole aligned blocks of a `Column`, b < B <= BLOCKS; the
        // unchecked reads are of m[i][j] with i <= rows - 1 (clamped) and j < cols,
        // inside `m`, which holds rows * cols entries (sliced above).
        unsafe {
            let lo_v = _mm256_set1_pd(lo);
            let inv_v = _mm256_set1_pd(inv_range);
            let one = _mm256_set1_pd(1.0);
            let rows_v = _mm256_set1_pd(index_f64(rows));
            for b in 0..B {
                let first = LANES * b;
                if first > rows {
                    for column in t.iter_mut() {
                        _mm256_store_pd(column.0[b].as_mut_ptr(), _mm256_setzero_pd());
                    }
                    continue;
                }
                let row = |k: usize| m.as_ptr().add((first + k).min(rows - 1) * cols);
                let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
                let index = _mm256_add_pd(
                    _mm256_set_pd(3.0, 2.0, 1.0, 0.0),
                    _mm256_set1_pd(index_f64(first)),
                );
                let from_tail = _mm256_cmp_pd::<_CMP_GE_OQ>(index, rows_v);
                let tail = _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_EQ_OQ>(index, rows_v),
                    _mm256_set1_pd(-1.0),
                );
                let whole = first + LANES <= rows;
                for (j, column) in t.iter_mut().enumerate() {
                    let v = _mm256_set_pd(*r3.add(j), *r2.add(j), *r1.add(j), *r0.add(j));
                    // written out, not a closure: a closure would not inherit AVX2
                    let mut v = _mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(v, lo_v), inv_v), one);
                    if !whole {
                        v = _mm256_blendv_pd(v, tail, from_tail);
                    }
                    _mm256_store_pd(column.0[b].as_mut_ptr(), v);
                }
            }
            // the right-hand side by whole blocks too: a vector load after scalar stores
            // to the same block would wait for them (no store forwarding)
            let mut index = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
            for block in &mut rhs[0].0[..B] {
                let constraint = _mm256_cmp_pd::<_CMP_LT_OQ>(index, rows_v);
                _mm256_store_pd(block.as_mut_ptr(), _mm256_and_pd(constraint, one));
                index = _mm256_add_pd(index, _mm256_set1_pd(LANES as f64));
            }
        }
    }

    #[inline(always)]
    fn leaving_row<const B: usize>(
        self,
        t: &[Column],
        rows: usize,
        cols: usize,
        q: usize,
        rule: PivotRule,
        row_label: &[u8; MAX_STRATEGIES],
    ) -> Option<(usize, f64)> {
        use std::arch::x86_64::*;
        let (a, rhs) = (&t[q], &t[cols]);
        // 1 / a for every row, divided beside the ratios rather than after the choice;
        // B blocks, every one written below (a whole `Column` would be zeroed first)
        let mut reciprocals = Blocks::<B>([[0.0; LANES]; B]);
        // SAFETY: `self` proves that this CPU has AVX2 (an `Avx2` exists only once it was
        // detected);
        // every load is of a whole aligned block of a `Column` (align 32), B <= BLOCKS.
        let candidates = unsafe {
            let eps = _mm256_set1_pd(PIVOT_EPS);
            let tol = _mm256_set1_pd(FEASIBILITY_TOL);
            let rows_v = _mm256_set1_pd(index_f64(rows));
            let four = _mm256_set1_pd(LANES as f64);
            let mut min = _mm256_set1_pd(f64::INFINITY);
            let mut index = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
            let mut live = [_mm256_setzero_pd(); B];
            for (b, live) in live.iter_mut().enumerate() {
                let av = _mm256_load_pd(a.0[b].as_ptr());
                let bv = _mm256_load_pd(rhs.0[b].as_ptr());
                *live = _mm256_cmp_pd::<_CMP_LT_OQ>(index, rows_v);
                index = _mm256_add_pd(index, four);
                let positive = _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(av, eps), *live);
                let reciprocal = _mm256_div_pd(_mm256_set1_pd(1.0), av);
                let step = _mm256_mul_pd(_mm256_add_pd(bv, tol), reciprocal);
                _mm256_store_pd(reciprocals.0[b].as_mut_ptr(), reciprocal);
                // step < min ? step : min, as the portable strict minimum (NaN skipped)
                let step = _mm256_blendv_pd(min, step, positive);
                min = _mm256_min_pd(step, min);
            }
            // the steps are positive or infinite, never NaN: their minimum is exact in
            // any order
            let half = _mm_min_pd(_mm256_castpd256_pd128(min), _mm256_extractf128_pd::<1>(min));
            let max_step = _mm_min_sd(half, _mm_unpackhi_pd(half, half));
            let max_step = _mm256_broadcastsd_pd(max_step);
            let mut candidates = 0u32;
            for (b, &live) in live.iter().enumerate() {
                let av = _mm256_load_pd(a.0[b].as_ptr());
                let bv = _mm256_load_pd(rhs.0[b].as_ptr());
                let rv = _mm256_load_pd(reciprocals.0[b].as_ptr());
                // !(a <= eps) and !(b / a > max_step), as the portable skip
                let keep = _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_NLE_UQ>(av, eps),
                    _mm256_cmp_pd::<_CMP_NGT_UQ>(_mm256_mul_pd(bv, rv), max_step),
                );
                let bits = _mm256_movemask_pd(_mm256_and_pd(keep, live)) as u32;
                candidates |= bits << (LANES * b);
            }
            candidates
        };
        choose_row(candidates, &a.flat()[..rows], rule, row_label)
            .map(|p| (p, reciprocals.0.as_flattened()[p]))
    }

    #[inline(always)]
    fn pivot<const B: usize>(self, t: &mut [Column], rows: usize, p: usize, q: usize, inv: f64) {
        pivot_in_block::<B>(self, t, rows, p, q, inv)
    }
}

/// `B` vectors of [`LANES`] f64s, aligned for vector loads and stores.
#[cfg(target_arch = "x86_64")]
#[repr(C, align(32))]
struct Blocks<const B: usize>([[f64; LANES]; B]);

/// A row index or count (at most [`HEIGHT`]) as an f64 lane value, exactly. Through
/// `u32`: a `usize` converts to f64 by a five-instruction sequence on x86-64 without
/// AVX-512 (there is no unsigned 64-bit conversion), a `u32` by one.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn index_f64(n: usize) -> f64 {
    debug_assert!(n <= super::HEIGHT);
    f64::from(n as u32)
}

/// [`Avx2::pivot`]: `c - f g` on every lane, then the lane of row p replaced by
/// `c / pivot` (as the portable path: `f g` is subtracted wherever `f` is 0 too, which
/// leaves `c` but for the sign of a zero).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pivot_in_block<const B: usize>(
    avx2: Avx2,
    t: &mut [Column],
    rows: usize,
    p: usize,
    q: usize,
    inv: f64,
) {
    use std::arch::x86_64::*;
    let cols = t.len() - 1;
    // SAFETY: `avx2` proves that this CPU has AVX2 (an `Avx2` exists only once it was
    // detected); every load and store is of a whole aligned block of a `Column` (align 32),
    // B <= BLOCKS, p < rows + 1 <= LANES * B, so P < B.
    unsafe {
        let inv_v = _mm256_set1_pd(inv);
        let zero = _mm256_setzero_pd();
        let rows_v = _mm256_set1_pd(index_f64(rows));
        let four = _mm256_set1_pd(LANES as f64);
        let mut index = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
        let p_v = _mm256_set1_pd(index_f64(p));
        let mut f = [zero; B];
        let mut constraint = [zero; B];
        let mut is_p = [zero; B];
        for b in 0..B {
            f[b] = _mm256_mul_pd(_mm256_load_pd(t[q].0[b].as_ptr()), inv_v);
            constraint[b] = _mm256_cmp_pd::<_CMP_LT_OQ>(index, rows_v);
            is_p[b] = _mm256_cmp_pd::<_CMP_EQ_OQ>(index, p_v);
            index = _mm256_add_pd(index, four);
        }
        let masks = PivotMasks {
            f,
            constraint,
            is_p,
            inv: inv_v,
            p,
        };
        // column q too: it is overwritten below, and skipping it would cost a branch
        let (columns, rhs) = t.split_at_mut(cols);
        for column in columns.iter_mut() {
            update_column::<B>(avx2, column, &masks, false);
        }
        update_column::<B>(avx2, &mut rhs[0], &masks, true);
        let negative_zero = _mm256_set1_pd(-0.0);
        let column_q = &mut t[q];
        for (b, &f) in f.iter().enumerate() {
            let r = _mm256_xor_pd(f, negative_zero);
            let r = _mm256_blendv_pd(r, inv_v, masks.is_p[b]);
            _mm256_store_pd(column_q.0[b].as_mut_ptr(), r);
        }
    }
}

/// What one AVX2 pivot applies to every column.
#[cfg(target_arch = "x86_64")]
struct PivotMasks<const B: usize> {
    /// The factors `a_iq / a_pq`.
    f: [std::arch::x86_64::__m256d; B],
    /// Lanes of constraint rows (not the objective row, not padding).
    constraint: [std::arch::x86_64::__m256d; B],
    /// The lane of row p (all clear in the other blocks).
    is_p: [std::arch::x86_64::__m256d; B],
    inv: std::arch::x86_64::__m256d,
    p: usize,
}

/// Updates one column for a pivot: `c - f g` on every lane, with `g` the column's
/// pivot-row entry, then row p overwritten with `g * (1 / pivot)` by a scalar store (a
/// multiply and a blend per block cost more; the next vector load of that block comes a
/// whole pivot later, when the store has left the store buffer); `clamp` (the
/// right-hand side) sets negative constraint entries to +0. A function, not a closure,
/// so that it inlines into the AVX2 code (a closure would be compiled without AVX2).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn update_column<const B: usize>(
    _avx2: Avx2,
    column: &mut Column,
    masks: &PivotMasks<B>,
    clamp: bool,
) {
    use std::arch::x86_64::*;
    // SAFETY: `_avx2` proves that this CPU has AVX2; the loads and stores are of whole
    // aligned blocks of the column, B <= BLOCKS.
    unsafe {
        let zero = _mm256_setzero_pd();
        let g_scalar = column.flat()[masks.p];
        let g = _mm256_set1_pd(g_scalar);
        for b in 0..B {
            let block = column.0[b].as_mut_ptr();
            let c = _mm256_load_pd(block);
            let mut r = _mm256_sub_pd(c, _mm256_mul_pd(masks.f[b], g));
            if clamp {
                // r > 0 ? r : 0, as `non_negative`, on the constraint rows
                r = _mm256_blendv_pd(r, _mm256_max_pd(r, zero), masks.constraint[b]);
            }
            _mm256_store_pd(block, r);
        }
        // row p: c / pivot, over the lane just stored (rows below stay c - f g)
        let at_p = g_scalar * _mm256_cvtsd_f64(masks.inv);
        column.flat_mut()[masks.p] = if clamp { non_negative(at_p) } else { at_p };
    }
}
