//! The `win` matrices of one pattern filled for score difference after score difference:
//! each entry's window in the slice below looked up once ([`WinEntry`], made by the
//! engine per pattern), then, for each d, a position and a load per entry, on a portable
//! path or, where the CPU has AVX2, four entries at a time with a masked gather. Both
//! give the bits [`crate::engine::fill_matrix`] gives: the same integer positions, the
//! same values loaded, the same exact -1 and +1, negated by the sign bit.

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
/// the slice whose values are `values`), on the AVX2 path when `avx2` (which callers set
/// only where the CPU has AVX2).
#[inline]
pub(crate) fn fill(matrix: &mut [f64], entries: &[WinEntry], d: i32, values: &[f64], avx2: bool) {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: `avx2` is set only where the CPU has AVX2; the entries come from
        // `WinEntry::new` for these values (see `fill_avx2`).
        unsafe { fill_avx2(matrix, entries, d, values) };
        return;
    }
    let _ = avx2;
    fill_portable(matrix, entries, d, values);
}

/// The portable fill, entry by entry: the reference semantics.
pub(crate) fn fill_portable(matrix: &mut [f64], entries: &[WinEntry], d: i32, values: &[f64]) {
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

/// The fill four entries at a time: positions in 32-bit lanes, the values inside their
/// windows loaded by one masked gather (lanes outside load nothing and keep -1 or +1),
/// the mirrored lanes negated by their sign bit. The last `len % 4` entries go the
/// portable way.
///
/// # Safety
/// The CPU must have AVX2, and every entry must come from [`WinEntry::new`] for
/// `values`: then a lane inside its window (0 <= position < len) reads
/// `start + position < start + len <= values.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_avx2(matrix: &mut [f64], entries: &[WinEntry], d: i32, values: &[f64]) {
    use std::arch::x86_64::*;
    let n = matrix.len().min(entries.len());
    let whole = n / 4 * 4;
    let d_v = _mm_set1_epi32(d);
    let zero = _mm_setzero_si128();
    let one = _mm256_set1_pd(1.0);
    let minus_one = _mm256_set1_pd(-1.0);
    let sign = _mm256_set1_epi64x(SIGN_BIT as i64);
    for (m, e) in matrix[..whole]
        .chunks_exact_mut(4)
        .zip(entries[..whole].chunks_exact(4))
    {
        // SAFETY: AVX2 is present (the caller's contract); the loads are of four
        // whole `WinEntry`s (16 bytes each, `repr(C)`), the store of four f64s of `m`;
        // the gather reads only lanes inside their windows (see the function's contract).
        unsafe {
            let e = e.as_ptr().cast::<__m128i>();
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
            let bound = _mm256_blendv_pd(
                one,
                minus_one,
                _mm256_castsi256_pd(_mm256_cvtepi32_epi64(below)),
            );
            let v = _mm256_mask_i32gather_pd::<8>(
                bound,
                values.as_ptr(),
                _mm_add_epi32(start, at),
                _mm256_castsi256_pd(_mm256_cvtepi32_epi64(inside)),
            );
            let negate = _mm256_and_si256(_mm256_cvtepi32_epi64(flip), sign);
            let v = _mm256_xor_pd(v, _mm256_castsi256_pd(negate));
            _mm256_storeu_pd(m.as_mut_ptr(), v);
        }
    }
    fill_portable(&mut matrix[whole..n], &entries[whole..n], d, values);
}

#[cfg(test)]
mod tests {
    use super::*;

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
