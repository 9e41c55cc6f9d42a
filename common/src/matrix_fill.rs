//! The fast fills of payoff matrices from the slices below, each on a portable path and,
//! where the CPU has AVX2 (detected here), four entries at a time with a gather; all give
//! the bits [`crate::slice::Slice::value`] gives entry by entry: the same values loaded,
//! the same exact -1 and +1, negated by the sign bit, the same additions.
//! - `points` ([`fill_points`]): the prize `c s` plus the child's value; the dense branch
//!   of [`crate::engine::fill_matrix`].
//! - `win` ([`fill_win`]): a pattern's games filled score difference after score
//!   difference, each entry's window in the slice below looked up once ([`WinEntry`],
//!   made by the engine per pattern), then a position and a load per entry.
//! - `win` runs ([`fill_win_run`]): one game at four neighbouring score differences at
//!   once, which the engine solves pattern by pattern: an entry's four positions lie
//!   side by side in its window, so one masked load (no gather) reads them.

#![expect(
    unsafe_code,
    reason = "AVX2 gathers of the matrix fill, each block with its SAFETY comment"
)]

#[cfg(target_arch = "x86_64")]
use crate::cpu::Avx2;
use crate::layout::Oriented;
use crate::slice::Window;

/// The sign bit of an f64.
const SIGN_BIT: u64 = 1 << 63;

/// One entry of a `win` matrix with what does not depend on the score difference d
/// looked up once per pattern: its child's window in the slice below, and the offset
/// that turns the child's oriented d into a position in that window. Four `i32`s in
/// this order (`repr(C)`): the AVX2 fill loads four entries as a 4 x 4 block.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct WinEntry {
    /// -1 for a mirrored child, else 0: `(d ^ flip) - flip` is the child's `d`, and
    /// `flip`'s sign bit flips the value's ([`Oriented::orient_diff`], [`Oriented::orient`]).
    flip: i32,
    /// `orient(c s) + diff_range - lo`: position = `orient(d) + offset`.
    offset: i32,
    /// The window's first value in the slice below (at most `i32::MAX`), and its length.
    start: i32,
    len: i32,
}

impl WinEntry {
    /// The entry of `child` (mirrored or not) for bid comparison `sign` under `upcard`,
    /// whose window in a slice of `diff_range` holding `values` values is `window`.
    /// `None` when the window does not lie inside the values or the values are too many
    /// for 32-bit positions: such a slice is left to `fill_matrix`, which checks every
    /// index.
    pub(crate) fn new(
        child: Oriented,
        sign: i8,
        upcard: u8,
        diff_range: i32,
        window: Window,
        values: usize,
    ) -> Option<WinEntry> {
        let end = window.start as usize + usize::from(window.len);
        if end > values || values > i32::MAX as usize {
            return None;
        }
        Some(WinEntry {
            flip: -i32::from(child.is_mirrored()),
            offset: child.orient_diff(i32::from(upcard) * i32::from(sign)) + diff_range
                - i32::from(window.lo),
            start: window.start as i32,
            len: i32::from(window.len),
        })
    }

    /// The entry is exactly -1 (after orientation) for every d below this.
    pub(crate) fn lost_below(&self) -> i32 {
        // unmirrored: position d + offset < 0; mirrored: -d + offset >= len
        if self.flip == 0 {
            -self.offset
        } else {
            self.offset - self.len + 1
        }
    }

    /// The entry is exactly +1 (after orientation) for every d from this on.
    pub(crate) fn won_from(&self) -> i32 {
        // unmirrored: position d + offset >= len; mirrored: -d + offset < 0
        if self.flip == 0 {
            self.len - self.offset
        } else {
            self.offset + 1
        }
    }
}

/// Fills `matrix` at score difference `d` from `entries` (made by [`WinEntry::new`] for
/// the slice whose values are `values`), four entries at a time where the CPU has AVX2.
/// An entry whose window lies beyond `values` panics, as [`fill_win_portable`] does.
#[inline]
pub(crate) fn fill_win(matrix: &mut [f64], entries: &[WinEntry], d: i32, values: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = Avx2::detect().filter(|_| values.len() <= i32::MAX as usize) {
        // SAFETY: `avx2` proves that the CPU has AVX2; values fit 32-bit indices.
        unsafe { fill_win_avx2(avx2, matrix, entries, d, values) };
        return;
    }
    fill_win_portable(matrix, entries, d, values);
}

/// Fills `matrices`, `matrices.len() / entries.len()` games one after the other, with
/// the game of `entries` at the score differences `d0`, `d0 + 1`, ...: each bit for bit
/// what [`fill_win`] gives at its d. Four games at once where the CPU has AVX2: an
/// entry's positions at four neighbouring d are neighbours in its window, so one masked
/// load reads all four (no gather).
#[inline]
pub(crate) fn fill_win_run(matrices: &mut [f64], entries: &[WinEntry], d0: i32, values: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = Avx2::detect()
        .filter(|_| matrices.len() == 4 * entries.len() && values.len() <= i32::MAX as usize)
    {
        // SAFETY: `avx2` proves that the CPU has AVX2; four games; values fit 32-bit
        // indices.
        unsafe { fill_win_run4_avx2(avx2, matrices, entries, d0, values) };
        return;
    }
    fill_win_run_portable(matrices, entries, d0, values);
}

/// [`fill_win_run`] one game at a time.
pub(crate) fn fill_win_run_portable(
    matrices: &mut [f64],
    entries: &[WinEntry],
    d0: i32,
    values: &[f64],
) {
    for (matrix, d) in matrices.chunks_exact_mut(entries.len()).zip(d0..) {
        fill_win(matrix, entries, d, values);
    }
}

/// [`fill_win_run`] for four games, four entries at a time: for each entry, the four
/// positions its child takes at `d0..d0 + 4` lie side by side in the child's window
/// (ascending, or descending for a mirrored child), so one masked load reads those
/// inside it (lanes outside read nothing and keep -1 or +1); a mirrored entry's vector
/// is reversed and negated by its sign bit; the four entries' vectors are transposed
/// into the four games. A block with an entry whose window lies beyond `values`
/// (entries made for another slice), and the last `len % 4` entries, go the portable
/// way, which panics where it reads beyond.
///
/// # Safety
/// `matrices.len() == 4 * entries.len()` and `values.len() <= i32::MAX` (the `Avx2`
/// proves that the CPU has AVX2; the function is unsafe to call only for its
/// `target_feature`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_win_run4_avx2(
    _avx2: Avx2,
    matrices: &mut [f64],
    entries: &[WinEntry],
    d0: i32,
    values: &[f64],
) {
    use std::arch::x86_64::*;
    let size = entries.len();
    let whole = size / 4 * 4;
    let (m0, rest) = matrices.split_at_mut(size);
    let (m1, rest) = rest.split_at_mut(size);
    let (m2, m3) = rest.split_at_mut(size);
    let lanes = _mm_setr_epi32(0, 1, 2, 3);
    let zero = _mm_setzero_si128();
    let one = _mm256_set1_pd(1.0);
    let minus_one = _mm256_set1_pd(-1.0);
    let sign = _mm256_set1_pd(-0.0);
    // one entry's four values, at d0..d0 + 4 in its lanes; a macro, not a closure, so
    // that it is inlined (a closure called four times a block was not, and its
    // constants were loaded through its captures on every call)
    macro_rules! entry_run {
        ($e:expr) => {{
            let e: &WinEntry = $e;
            // SAFETY: AVX2 is present (the caller's `Avx2`); the masked load reads
            // only lanes inside the window, at `start + position < start + len <=
            // values.len()` (checked for this block), and the pointer is formed with
            // wrapping arithmetic (masked lanes may lie outside the values).
            unsafe {
                let at0 = ((d0 ^ e.flip) - e.flip) + e.offset;
                // the lowest of the four positions (a mirrored child's descend from at0)
                let low = at0 + 3 * e.flip;
                let positions = _mm_add_epi32(_mm_set1_epi32(low), lanes);
                let below = _mm_cmpgt_epi32(zero, positions);
                let inside =
                    _mm_andnot_si128(below, _mm_cmpgt_epi32(_mm_set1_epi32(e.len), positions));
                let bound = _mm256_blendv_pd(
                    one,
                    minus_one,
                    _mm256_castsi256_pd(_mm256_cvtepi32_epi64(below)),
                );
                let inside = _mm256_cvtepi32_epi64(inside);
                let from = values
                    .as_ptr()
                    .wrapping_offset(e.start as isize + low as isize);
                let loaded = _mm256_maskload_pd(from, inside);
                let v = _mm256_blendv_pd(bound, loaded, _mm256_castsi256_pd(inside));
                // mirrored: positions descend with d (reverse the lanes), values negated
                let flip = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::from(e.flip)));
                let reversed = _mm256_permute4x64_pd::<0b00_01_10_11>(v);
                let v = _mm256_blendv_pd(v, reversed, flip);
                _mm256_xor_pd(v, _mm256_and_pd(flip, sign))
            }
        }};
    }
    let fits = |e: &WinEntry| e.start as usize + e.len as usize <= values.len();
    for b in (0..whole).step_by(4) {
        let block = &entries[b..b + 4];
        if !block.iter().all(fits) {
            for (j, m) in [&mut *m0, &mut *m1, &mut *m2, &mut *m3]
                .into_iter()
                .enumerate()
            {
                fill_win_portable(&mut m[b..b + 4], block, d0 + j as i32, values);
            }
            continue;
        }
        let (r0, r1) = (entry_run!(&block[0]), entry_run!(&block[1]));
        let (r2, r3) = (entry_run!(&block[2]), entry_run!(&block[3]));
        // transpose: games j = 0..4 of the four entries
        let (lo01, hi01) = (_mm256_unpacklo_pd(r0, r1), _mm256_unpackhi_pd(r0, r1));
        let (lo23, hi23) = (_mm256_unpacklo_pd(r2, r3), _mm256_unpackhi_pd(r2, r3));
        let g0 = _mm256_permute2f128_pd::<0x20>(lo01, lo23);
        let g1 = _mm256_permute2f128_pd::<0x20>(hi01, hi23);
        let g2 = _mm256_permute2f128_pd::<0x31>(lo01, lo23);
        let g3 = _mm256_permute2f128_pd::<0x31>(hi01, hi23);
        // SAFETY: b + 4 <= whole <= size, the length of each of the four games
        unsafe {
            _mm256_storeu_pd(m0.as_mut_ptr().add(b), g0);
            _mm256_storeu_pd(m1.as_mut_ptr().add(b), g1);
            _mm256_storeu_pd(m2.as_mut_ptr().add(b), g2);
            _mm256_storeu_pd(m3.as_mut_ptr().add(b), g3);
        }
    }
    for (j, m) in [m0, m1, m2, m3].into_iter().enumerate() {
        fill_win_portable(&mut m[whole..], &entries[whole..], d0 + j as i32, values);
    }
}

/// The portable `win` fill, entry by entry.
pub(crate) fn fill_win_portable(matrix: &mut [f64], entries: &[WinEntry], d: i32, values: &[f64]) {
    for (m, e) in matrix.iter_mut().zip(entries) {
        let at = ((d ^ e.flip) - e.flip) + e.offset;
        let v: f64 = if at < 0 {
            -1.0
        } else if at >= e.len {
            1.0
        } else {
            values[e.start as usize + at as usize]
        };
        *m = f64::from_bits(v.to_bits() ^ (i64::from(e.flip) as u64 & SIGN_BIT));
    }
}

/// The `win` fill four entries at a time: positions in 32-bit lanes, the values inside their
/// windows loaded by one masked gather (lanes outside load nothing and keep -1 or +1),
/// the mirrored lanes negated by their sign bit. A block with a position inside its
/// window but beyond `values` (entries made for another slice) goes the portable way,
/// which panics there; the last `len % 4` entries too.
///
/// # Safety
/// `values.len() <= i32::MAX` (the `Avx2` proves that the CPU has AVX2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_win_avx2(
    _avx2: Avx2,
    matrix: &mut [f64],
    entries: &[WinEntry],
    d: i32,
    values: &[f64],
) {
    use std::arch::x86_64::*;
    let n = matrix.len().min(entries.len());
    let whole = n / 4 * 4;
    let d_v = _mm_set1_epi32(d);
    let count = _mm_set1_epi32(values.len() as i32);
    let zero = _mm_setzero_si128();
    let one = _mm256_set1_pd(1.0);
    let minus_one = _mm256_set1_pd(-1.0);
    let sign = _mm256_set1_epi64x(SIGN_BIT as i64);
    for (m, block) in matrix[..whole]
        .chunks_exact_mut(4)
        .zip(entries[..whole].chunks_exact(4))
    {
        // SAFETY: AVX2 is present (the caller's `Avx2`); the loads are of four
        // whole `WinEntry`s (16 bytes each, `repr(C)`), the store of four f64s of `m`;
        // the gather reads only lanes inside their windows, and only when each of those
        // indices is below `values.len()` (checked here; `start` and the position are
        // both non-negative there, and their sum fits: `WinEntry::new`).
        unsafe {
            let e = block.as_ptr().cast::<__m128i>();
            let (e0, e1) = (_mm_loadu_si128(e), _mm_loadu_si128(e.add(1)));
            let (e2, e3) = (_mm_loadu_si128(e.add(2)), _mm_loadu_si128(e.add(3)));
            // transpose: flip, offset, start and len of the four entries
            let (t0, t1) = (_mm_unpacklo_epi32(e0, e1), _mm_unpacklo_epi32(e2, e3));
            let (t2, t3) = (_mm_unpackhi_epi32(e0, e1), _mm_unpackhi_epi32(e2, e3));
            let flip = _mm_unpacklo_epi64(t0, t1);
            let offset = _mm_unpackhi_epi64(t0, t1);
            let start = _mm_unpacklo_epi64(t2, t3);
            let len = _mm_unpackhi_epi64(t2, t3);
            let at = _mm_add_epi32(_mm_sub_epi32(_mm_xor_si128(d_v, flip), flip), offset);
            let below = _mm_cmpgt_epi32(zero, at);
            let inside = _mm_andnot_si128(below, _mm_cmpgt_epi32(len, at));
            let index = _mm_add_epi32(start, at);
            let beyond = _mm_andnot_si128(_mm_cmpgt_epi32(count, index), inside);
            if _mm_movemask_epi8(beyond) != 0 {
                fill_win_portable(m, block, d, values);
                continue;
            }
            let bound = _mm256_blendv_pd(
                one,
                minus_one,
                _mm256_castsi256_pd(_mm256_cvtepi32_epi64(below)),
            );
            let v = _mm256_mask_i32gather_pd::<8>(
                bound,
                values.as_ptr(),
                index,
                _mm256_castsi256_pd(_mm256_cvtepi32_epi64(inside)),
            );
            let negate = _mm256_and_si256(_mm256_cvtepi32_epi64(flip), sign);
            let v = _mm256_xor_pd(v, _mm256_castsi256_pd(negate));
            _mm256_storeu_pd(m.as_mut_ptr(), v);
        }
    }
    fill_win_portable(&mut matrix[whole..n], &entries[whole..n], d, values);
}

/// Fills the `points` matrix of a game under `upcard` whose entries are `children` and
/// bid comparisons `signs`, from a dense slice of one value per canonical pattern
/// (`values`): `c s + orient(value)`, four entries at a time where the CPU has AVX2. A
/// child beyond `values` panics. This is [`crate::engine::fill_matrix`]'s dense branch.
#[inline]
pub(crate) fn fill_points(
    matrix: &mut [f64],
    children: &[Oriented],
    signs: &[i8],
    upcard: u8,
    values: &[f64],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = Avx2::detect().filter(|_| values.len() <= i32::MAX as usize) {
        // SAFETY: `avx2` proves that the CPU has AVX2; values fit 32-bit indices.
        unsafe { fill_points_avx2(avx2, matrix, children, signs, upcard, values) };
        return;
    }
    fill_points_portable(matrix, children, signs, upcard, values);
}

/// The portable `points` fill, entry by entry.
fn fill_points_portable(
    matrix: &mut [f64],
    children: &[Oriented],
    signs: &[i8],
    upcard: u8,
    values: &[f64],
) {
    let c = i32::from(upcard);
    for ((m, &child), &s) in matrix.iter_mut().zip(children).zip(signs) {
        *m = f64::from(c * i32::from(s)) + child.orient(values[child.canonical()]);
    }
}

/// The `points` fill four entries at a time: the four children's values gathered, the
/// mirrored ones negated by the sign bit, the prizes `c s` converted exactly and added.
/// A block with a child beyond `values` goes the portable way, which panics there as
/// `fill_matrix` does; the last `len % 4` entries too.
///
/// # Safety
/// `values.len() <= i32::MAX` (the `Avx2` proves that the CPU has AVX2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_points_avx2(
    _avx2: Avx2,
    matrix: &mut [f64],
    children: &[Oriented],
    signs: &[i8],
    upcard: u8,
    values: &[f64],
) {
    use std::arch::x86_64::*;
    let n = matrix.len().min(children.len()).min(signs.len());
    let whole = n / 4 * 4;
    let c = _mm_set1_epi32(i32::from(upcard));
    let count = _mm_set1_epi32(values.len() as i32);
    let canonical_mask = _mm_set1_epi32(i32::MAX);
    let sign = _mm256_set1_epi64x(SIGN_BIT as i64);
    for ((m, children), signs) in matrix[..whole]
        .chunks_exact_mut(4)
        .zip(children[..whole].chunks_exact(4))
        .zip(signs[..whole].chunks_exact(4))
    {
        // SAFETY: AVX2 is present (the caller's `Avx2`); the loads are of four
        // `Oriented` (u32) and four i8 of these chunks, the store of four f64s of `m`;
        // the gather runs only when every index is below `values.len()` (checked here).
        unsafe {
            let raw = _mm_loadu_si128(children.as_ptr().cast::<__m128i>());
            let canonical = _mm_and_si128(raw, canonical_mask);
            if _mm_movemask_epi8(_mm_cmpgt_epi32(count, canonical)) != 0xffff {
                fill_points_portable(m, children, signs, upcard, values);
                continue;
            }
            let mirrored = _mm_srai_epi32::<31>(raw);
            let bids = _mm_cvtepi8_epi32(_mm_cvtsi32_si128(i32::from_le_bytes([
                signs[0] as u8,
                signs[1] as u8,
                signs[2] as u8,
                signs[3] as u8,
            ])));
            let prize = _mm256_cvtepi32_pd(_mm_mullo_epi32(c, bids));
            let v = _mm256_i32gather_pd::<8>(values.as_ptr(), canonical);
            let negate = _mm256_and_si256(_mm256_cvtepi32_epi64(mirrored), sign);
            let v = _mm256_xor_pd(v, _mm256_castsi256_pd(negate));
            _mm256_storeu_pd(m.as_mut_ptr(), _mm256_add_pd(prize, v));
        }
    }
    fill_points_portable(
        &mut matrix[whole..n],
        &children[whole..n],
        &signs[whole..n],
        upcard,
        values,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::LayerEngine;
    use crate::objective::Objective;
    use crate::prizes::{prize_rank, prize_unrank};
    use crate::solution::InMemorySolution;

    /// Both `points` paths give bit for bit `c s` plus what `Slice::value` reads, entry
    /// by entry: every pattern of several slices of every layer of the solved 8-card
    /// game, every upcard.
    #[test]
    fn points_fill_equals_slice_values_bit_for_bit() {
        let n = 8;
        let solution = InMemorySolution::solve(n, Objective::Points).expect("solves");
        let mut matrices = 0u64;
        for k in 1..=n {
            let engine = LayerEngine::new(n, k, Objective::Points);
            let slices = solution.layers[k as usize].len();
            for rank in (0..slices).step_by(slices.div_ceil(8)) {
                let prizes = prize_unrank(rank as u32, k);
                for p in 0..engine.layout.canonical_count() {
                    let (rows, cols, children, signs) = engine.children.of(p);
                    let mut got = vec![0.0; rows * cols];
                    for (c, rest) in LayerEngine::dependencies(prizes) {
                        let below = &solution.layers[k as usize - 1][prize_rank(rest) as usize];
                        let want: Vec<u64> = children
                            .iter()
                            .zip(signs)
                            .map(|(&child, &s)| {
                                let prize = i32::from(c) * i32::from(s);
                                (f64::from(prize) + below.value(child, 0)).to_bits()
                            })
                            .collect();
                        let bits = |m: &[f64]| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                        // the portable path, and the AVX2 one where the CPU has it
                        fill_points_portable(&mut got, children, signs, c, &below.values);
                        assert_eq!(bits(&got), want, "k={k} p={p} c={c} portable");
                        fill_points(&mut got, children, signs, c, &below.values);
                        assert_eq!(bits(&got), want, "k={k} p={p} c={c}");
                        matrices += 1;
                    }
                }
            }
        }
        assert!(matrices > 10_000, "{matrices} matrices");
    }

    /// A child beyond the slice's values is refused by a panic, as `fill_matrix`
    /// refuses it: never read.
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn points_fill_refuses_a_child_beyond_the_values() {
        let children = [0, 1, 2, 7].map(|c| Oriented::new(c, false));
        let mut m = [0.0; 4];
        fill_points(&mut m, &children, &[1, 0, -1, 1], 3, &[0.5; 4]);
    }

    /// A mirrored child's entry (bid sign 1, upcard 4, `diff_range` 6: offset 0) whose
    /// window holds values 10..15 of a slice of 15.
    fn entry_made_for_15_values() -> WinEntry {
        let window = Window {
            start: 10,
            lo: 2,
            len: 5,
        };
        WinEntry::new(Oriented::new(3, true), 1, 4, 6, window, 15).expect("inside")
    }

    /// Entries made for one slice and filled from a shorter one: a position inside its
    /// window but beyond the values is refused by a panic, never read.
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn win_fill_refuses_a_window_beyond_the_values() {
        let entry = entry_made_for_15_values();
        // mirrored, offset 0: at d = -2 the position is 2, value 12 of a slice of 12
        let mut m = [0.0; 4];
        fill_win(&mut m, &[entry; 4], -2, &[0.5; 12]);
    }

    /// The same for a run of four games: a block whose window lies beyond the values
    /// is refused by a panic, never read.
    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn win_run_refuses_a_window_beyond_the_values() {
        let entry = entry_made_for_15_values();
        // positions 3, 2, 1, 0 at d = -3..1: values 13, 12, 11, 10 of a slice of 12
        let mut m = [0.0; 16];
        fill_win_run(&mut m, &[entry; 4], -3, &[0.5; 12]);
    }

    /// A window that does not lie inside its slice's values, or values beyond 32-bit
    /// positions, give no entry (the engine then fills with bounds checks).
    #[test]
    fn entries_exist_only_for_windows_inside_their_values() {
        let child = Oriented::new(3, true);
        let window = Window {
            start: 10,
            lo: 2,
            len: 5,
        };
        let entry = WinEntry::new(child, 1, 4, 6, window, 15).expect("inside");
        // mirrored: offset = -(4 * 1) + 6 - 2
        assert_eq!(
            (entry.flip, entry.offset, entry.start, entry.len),
            (-1, 0, 10, 5)
        );
        assert!(WinEntry::new(child, 1, 4, 6, window, 14).is_none());
        assert!(WinEntry::new(child, 1, 4, 6, window, i32::MAX as usize + 1).is_none());
    }
}
