//! Reading a few patterns of a stored slice instead of the whole of it: the slice's
//! shape, where each pattern's stored values lie in its body ([`SliceTable`]), and the
//! partial [`Slice`] that the values read make. A middle-layer slice of the 13-card win
//! game is several MB, while a lookup (a state's value, or the game after an upcard)
//! needs one pattern, or the `k x k` children of one.
//!
//! A partial slice holds the patterns read bit for bit as the whole slice does, in the
//! windowed form (a dense slice's pattern is a window over all its positions), and
//! every pattern not read as a window of [`UNREACHABLE`] NaNs over all positions, so that
//! a read of one by mistake poisons what it touches (a game's certificate included)
//! instead of passing for a value. The values beyond the live range read as the exact
//! ±1 they are, as in any windowed slice.
//!
//! The whole-slice digest cannot be checked on a part. What can be is: the window table
//! (every window within its positions, the body exactly as long as the windows say) and
//! every value read (a `win` value within [-1, 1], a `points` value finite).

use std::ops::Range;

use crate::objective::Objective;
use crate::slice::{Slice, UNREACHABLE, Window};
pub use crate::slice_shape::SliceShape;

/// Where each pattern's stored values lie in the body of one slice.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceTable {
    shape: SliceShape,
    /// A windowed slice's windows, `start` counting stored values (the reachable
    /// positions of the windows before); empty for a dense slice.
    windows: Vec<Window>,
}

impl SliceTable {
    /// The table of a slice of `shape` whose body is `body_len` bytes and opens with
    /// `table` (its first [`SliceShape::table_bytes`] bytes). A window beyond its
    /// positions, or a body longer or shorter than the windows say, is an error.
    pub fn new(shape: SliceShape, table: &[u8], body_len: u64) -> Result<SliceTable, String> {
        if table.len() != shape.table_bytes() {
            return Err(format!(
                "window table of {} bytes, {} expected",
                table.len(),
                shape.table_bytes()
            ));
        }
        let width = shape.width();
        let mut windows = Vec::with_capacity(shape.patterns * usize::from(shape.windowed));
        let mut stored = 0u64;
        if shape.windowed {
            for (pattern, h) in table.chunks_exact(4).enumerate() {
                let lo = u16::from_le_bytes([h[0], h[1]]);
                let len = u16::from_le_bytes([h[2], h[3]]);
                let end = usize::from(lo) + usize::from(len);
                if end > width {
                    return Err(format!(
                        "slice window of pattern {pattern} lies outside its {width} positions"
                    ));
                }
                let start = u32::try_from(stored)
                    .map_err(|_| "slice of more than 2^32 values".to_string())?;
                windows.push(Window { start, lo, len });
                stored += shape
                    .reach
                    .map_or(usize::from(len), |r| r.count_in(usize::from(lo), end))
                    as u64;
            }
        } else {
            stored = (shape.patterns * width) as u64;
        }
        let want = shape.table_bytes() as u64 + 8 * stored;
        if body_len != want {
            return Err(format!(
                "slice body of {body_len} bytes, its windows say {want}"
            ));
        }
        Ok(SliceTable { shape, windows })
    }

    pub fn shape(&self) -> &SliceShape {
        &self.shape
    }

    /// Pattern `pattern`'s window: its first position and its positions.
    fn window(&self, pattern: usize) -> (usize, usize) {
        match self.windows.get(pattern) {
            Some(w) => (usize::from(w.lo), usize::from(w.len)),
            None => (0, self.shape.width()),
        }
    }

    /// The bytes of the body that hold the stored values of `pattern`, which must be
    /// one of the slice's (`pattern < patterns`).
    pub fn values_at(&self, pattern: usize) -> Range<u64> {
        assert!(
            pattern < self.shape.patterns,
            "pattern {pattern} out of range"
        );
        let (lo, len) = self.window(pattern);
        let (first, count) = match self.windows.get(pattern) {
            Some(w) => (
                u64::from(w.start),
                self.shape.reach.map_or(len, |r| r.count_in(lo, lo + len)),
            ),
            None => ((pattern * len) as u64, len),
        };
        let start = self.shape.table_bytes() as u64 + 8 * first;
        start..start + 8 * count as u64
    }

    /// The partial slice of the patterns read: each with the bytes of
    /// [`SliceTable::values_at`], each pattern at most once. A value out of range is an
    /// error naming its pattern.
    pub fn partial(&self, reads: &[(usize, &[u8])]) -> Result<Slice, String> {
        let width = self.shape.width();
        let all = Window {
            start: 0,
            lo: 0,
            len: u16::try_from(width).map_err(|_| format!("{width} positions"))?,
        };
        // the poison window every pattern not read points to
        let mut values = vec![UNREACHABLE; width];
        let mut windows = vec![all; self.shape.patterns];
        for &(pattern, bytes) in reads {
            let range = self.values_at(pattern);
            if bytes.len() as u64 != range.end - range.start {
                return Err(format!(
                    "{} bytes read for pattern {pattern}, {} stored",
                    bytes.len(),
                    range.end - range.start
                ));
            }
            let (lo, len) = self.window(pattern);
            let start = u32::try_from(values.len())
                .map_err(|_| "partial slice of more than 2^32 values".to_string())?;
            let mut stored = bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")));
            for pos in lo..lo + len {
                if !self.shape.reachable(pos) {
                    values.push(UNREACHABLE);
                    continue;
                }
                let v = stored
                    .next()
                    .expect("values_at counts the reachable positions");
                let in_range = match self.shape.objective {
                    Objective::Win => (-1.0..=1.0).contains(&v),
                    Objective::Points => v.is_finite(),
                };
                if !in_range {
                    return Err(format!("value {v} of pattern {pattern} is out of range"));
                }
                values.push(v);
            }
            windows[pattern] = Window {
                start,
                lo: lo as u16,
                len: len as u16,
            };
        }
        Ok(Slice {
            diff_range: self.shape.diff_range,
            values,
            windows: Some(windows),
            reach: self.shape.reach,
        })
    }
}

impl crate::cache::Weigh for SliceTable {
    fn weight(&self) -> usize {
        8 * self.windows.len() + 64
    }
}

#[cfg(test)]
mod tests;
