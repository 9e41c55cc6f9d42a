//! A slice: the values of one prize set of one layer (DESIGN §3), the unit of storage and
//! transfer. `points` slices are dense, one value per canonical pattern. `win` slices keep,
//! per canonical pattern, only the window of score differences whose values are not the
//! exact -1 below it or the exact +1 above it: lossless by construction, whatever the
//! values, and small because most states are already decided.

use crate::binomial::binomial;
use crate::checksum::Digest;
use crate::layout::Oriented;
use crate::objective::Objective;
use crate::pattern::PatternIndex;
use crate::prizes::prize_unrank;

/// The stored window of one pattern, in slice-relative positions `d + diff_range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Where the pattern's values start in [`Slice::values`].
    pub start: u32,
    /// Positions below `lo` have value exactly -1.
    pub lo: u16,
    /// Positions at or above `lo + len` have value exactly +1.
    pub len: u16,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Slice {
    /// Values of live score differences: `-diff_range..=diff_range`.
    pub diff_range: i32,
    pub values: Vec<f64>,
    /// `None` for dense slices (one value per canonical pattern and position).
    pub windows: Option<Vec<Window>>,
}

/// A slice as stored and sent: its encoding and that encoding's digest, with the
/// slice's largest certificate gap and matrix games. The store, a worker's submission and
/// the coordinator's fetch all carry this, made in one place ([`SliceBytes::of`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SliceBytes {
    pub body: Vec<u8>,
    pub digest: Digest,
    pub max_gap: f64,
    pub games: u64,
}

/// The version byte that opens a slice record.
const RECORD_VERSION: u8 = 1;

impl SliceBytes {
    /// Bytes of a record before its body: version, largest gap, games, digest.
    pub const RECORD_HEADER: usize = 1 + 8 + 8 + 32;
    /// Where the digest lies in a record.
    const RECORD_DIGEST: std::ops::Range<usize> = 17..49;

    /// `slice` encoded, with its digest.
    pub fn of(slice: &Slice, max_gap: f64, games: u64) -> SliceBytes {
        let body = slice.encode();
        SliceBytes {
            digest: crate::checksum::digest_bytes(&body),
            body,
            max_gap,
            games,
        }
    }

    /// The record the store writes to its data files: version, largest gap, games,
    /// digest, body. Workers that read a shared db directory decode the same bytes.
    pub fn to_record(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(Self::RECORD_HEADER + self.body.len());
        bytes.push(RECORD_VERSION);
        bytes.extend_from_slice(&self.max_gap.to_le_bytes());
        bytes.extend_from_slice(&self.games.to_le_bytes());
        bytes.extend_from_slice(&self.digest);
        bytes.extend_from_slice(&self.body);
        bytes
    }

    /// The digest a record's header names, or why the header is not one.
    pub fn record_digest(header: &[u8]) -> Result<Digest, String> {
        if header.len() < Self::RECORD_HEADER {
            return Err(format!("record of {} bytes", header.len()));
        }
        if header[0] != RECORD_VERSION {
            return Err(format!("record version {}", header[0]));
        }
        Ok(header[Self::RECORD_DIGEST]
            .try_into()
            .expect("a 32-byte range"))
    }

    /// The parts of a record, its body checked against its digest.
    pub fn from_record(bytes: &[u8]) -> Result<SliceBytes, String> {
        let digest = Self::record_digest(bytes)?;
        let body = bytes[Self::RECORD_HEADER..].to_vec();
        if crate::checksum::digest_bytes(&body) != digest {
            return Err("bytes do not match their digest".into());
        }
        let field = |at: usize| -> [u8; 8] { bytes[at..at + 8].try_into().expect("8 bytes") };
        Ok(SliceBytes {
            body,
            digest,
            max_gap: f64::from_le_bytes(field(1)),
            games: u64::from_le_bytes(field(9)),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SliceDecodeError {
    #[error("slice bytes end early")]
    Truncated,
    #[error("slice has {got} bytes left over")]
    Trailing { got: usize },
    #[error("slice window of pattern {pattern} lies outside its {width} positions")]
    BadWindow { pattern: usize, width: usize },
}

impl Slice {
    /// A dense slice: `values.len()` is patterns x (2 diff_range + 1).
    pub fn dense(diff_range: i32, values: Vec<f64>) -> Slice {
        Slice {
            diff_range,
            values,
            windows: None,
        }
    }

    /// The windowed form of dense values, `width = 2 diff_range + 1` per pattern.
    pub fn windowed(diff_range: i32, dense: &[f64]) -> Slice {
        let width = 2 * diff_range as usize + 1;
        let mut values = Vec::new();
        let windows = dense
            .chunks_exact(width)
            .map(|pattern| {
                let lo = pattern.iter().position(|&v| v != -1.0).unwrap_or(width);
                let hi = pattern.iter().rposition(|&v| v != 1.0).map_or(0, |p| p + 1);
                let len = hi.saturating_sub(lo);
                let window = Window {
                    start: values.len() as u32,
                    lo: lo as u16,
                    len: len as u16,
                };
                values.extend_from_slice(&pattern[lo..lo + len]);
                window
            })
            .collect();
        Slice {
            diff_range,
            values,
            windows: Some(windows),
        }
    }

    pub fn width(&self) -> usize {
        2 * self.diff_range as usize + 1
    }

    /// Number of canonical patterns the slice covers.
    pub fn patterns(&self) -> usize {
        match &self.windows {
            Some(w) => w.len(),
            None => self.values.len() / self.width(),
        }
    }

    /// The value of the (possibly mirrored) pattern at score difference `d`, using
    /// antisymmetry `V(A,B,C,d) = -V(B,A,C,-d)` and the exact ±1 beyond the live range.
    #[inline]
    pub fn value(&self, at: Oriented, d: i32) -> f64 {
        let (sign, d) = if at.is_mirrored() {
            (-1.0, -d)
        } else {
            (1.0, d)
        };
        let v = if d > self.diff_range {
            1.0
        } else if d < -self.diff_range {
            -1.0
        } else {
            let pos = (d + self.diff_range) as usize;
            match &self.windows {
                None => self.values[at.canonical() * self.width() + pos],
                Some(windows) => {
                    let w = windows[at.canonical()];
                    let (lo, len) = (usize::from(w.lo), usize::from(w.len));
                    if pos < lo {
                        -1.0
                    } else if pos >= lo + len {
                        1.0
                    } else {
                        self.values[w.start as usize + pos - lo]
                    }
                }
            }
        };
        sign * v
    }

    /// The slice's bytes: for windowed slices `lo` and `len` (u16 LE) per pattern, then
    /// the values (f64 LE).
    pub fn encode(&self) -> Vec<u8> {
        let windows = self.windows.as_deref().unwrap_or(&[]);
        let mut bytes = Vec::with_capacity(4 * windows.len() + 8 * self.values.len());
        for w in windows {
            bytes.extend_from_slice(&w.lo.to_le_bytes());
            bytes.extend_from_slice(&w.len.to_le_bytes());
        }
        for v in &self.values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        bytes
    }

    /// Decodes [`Slice::encode`]'s bytes for a slice of `patterns` canonical patterns.
    pub fn decode(
        bytes: &[u8],
        diff_range: i32,
        patterns: usize,
        windowed: bool,
    ) -> Result<Slice, SliceDecodeError> {
        let width = 2 * diff_range as usize + 1;
        let read_values = |b: &[u8], count: usize| -> Result<Vec<f64>, SliceDecodeError> {
            if b.len() < 8 * count {
                return Err(SliceDecodeError::Truncated);
            }
            if b.len() > 8 * count {
                return Err(SliceDecodeError::Trailing {
                    got: b.len() - 8 * count,
                });
            }
            Ok(b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect())
        };
        if !windowed {
            return Ok(Slice::dense(
                diff_range,
                read_values(bytes, patterns * width)?,
            ));
        }
        let header = bytes
            .get(..4 * patterns)
            .ok_or(SliceDecodeError::Truncated)?;
        let mut windows = Vec::with_capacity(patterns);
        let mut start = 0usize;
        for (pattern, h) in header.chunks_exact(4).enumerate() {
            let lo = u16::from_le_bytes([h[0], h[1]]);
            let len = u16::from_le_bytes([h[2], h[3]]);
            if usize::from(lo) + usize::from(len) > width {
                return Err(SliceDecodeError::BadWindow { pattern, width });
            }
            windows.push(Window {
                start: start as u32,
                lo,
                len,
            });
            start += usize::from(len);
        }
        let values = read_values(&bytes[4 * patterns..], start)?;
        Ok(Slice {
            diff_range,
            values,
            windows: Some(windows),
        })
    }

    /// Decodes the body of slice `rank` of layer `k` of the `n`-card game: the shape
    /// (patterns, score range, dense or windowed) follows from the game.
    pub fn decode_for(
        n: u8,
        objective: Objective,
        k: u8,
        rank: u32,
        body: &[u8],
    ) -> Result<Slice, String> {
        if k == 0 || k > n || u64::from(rank) >= binomial(n.into(), k.into()) {
            return Err(format!(
                "layer {k} has no slice {rank} in the {n}-card game"
            ));
        }
        let patterns = PatternIndex::new(n, k).count().div_ceil(2);
        let diff_range = objective.diff_range(prize_unrank(rank, k));
        Slice::decode(body, diff_range, patterns, objective == Objective::Win)
            .map_err(|e| e.to_string())
    }

    /// Whether the slice is in the one form [`Slice::windowed`] or [`Slice::dense`] gives
    /// its values: every window as narrow as its values allow. Equal values then mean
    /// equal bytes and equal digests, so copies from different workers compare by digest.
    pub fn is_canonical(&self) -> bool {
        let Some(windows) = &self.windows else {
            return true;
        };
        windows.iter().all(|w| {
            let (start, len) = (w.start as usize, usize::from(w.len));
            match self.values.get(start..start + len) {
                Some([]) => true,
                Some(v) => v[0] != -1.0 && v[len - 1] != 1.0,
                None => false,
            }
        })
    }

    /// The digest of the slice's encoding: equal slices, equal digests.
    pub fn digest(&self) -> Digest {
        crate::checksum::digest_bytes(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damaged_ones_are_refused() {
        let bytes = SliceBytes::of(&Slice::dense(1, vec![0.25, -1.0, 3.5]), 1e-12, 42);
        let record = bytes.to_record();
        assert_eq!(record.len(), SliceBytes::RECORD_HEADER + bytes.body.len());
        assert_eq!(SliceBytes::from_record(&record).unwrap(), bytes);
        assert_eq!(SliceBytes::record_digest(&record).unwrap(), bytes.digest);
        let mut flipped = record.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(SliceBytes::from_record(&flipped).is_err());
        let mut versioned = record.clone();
        versioned[0] = 9;
        assert!(SliceBytes::from_record(&versioned).is_err());
        assert!(SliceBytes::from_record(&record[..SliceBytes::RECORD_HEADER - 1]).is_err());
    }

    fn dense_of(slice: &Slice, patterns: usize) -> Vec<f64> {
        let r = slice.diff_range;
        (0..patterns)
            .flat_map(|p| (-r..=r).map(move |d| (p, d)))
            .map(|(p, d)| slice.value(Oriented::new(p as u32, false), d))
            .collect()
    }

    #[test]
    fn windows_are_lossless_for_any_values() {
        let cases: [&[f64]; 7] = [
            &[-1.0, -1.0, -0.5, 0.0, 1.0],
            &[-1.0, -1.0, -1.0, -1.0, -1.0],
            &[1.0, 1.0, 1.0, 1.0, 1.0],
            &[-1.0, -1.0, 1.0, 1.0, 1.0],
            &[1.0, -1.0, 0.25, -1.0, 1.0], // not monotone: still exact
            &[-0.0, 0.0, 0.5, 1.0, -1.0],
            &[-0.9, -0.8, -0.7, -0.6, -0.5],
        ];
        for dense in cases {
            let slice = Slice::windowed(2, dense);
            assert_eq!(dense_of(&slice, 1), dense, "{slice:?}");
            let decoded = Slice::decode(&slice.encode(), 2, 1, true).unwrap();
            assert_eq!(decoded, slice);
            for (d, &v) in (-2..=2).zip(dense.iter()) {
                assert_eq!(slice.value(Oriented::new(0, true), -d), -v);
            }
            assert_eq!(slice.value(Oriented::new(0, false), 3), 1.0);
            assert_eq!(slice.value(Oriented::new(0, false), -3), -1.0);
        }
        let two = [[-1.0, 0.5, 1.0], [-1.0, -1.0, -1.0]].concat();
        let slice = Slice::windowed(1, &two);
        assert_eq!(slice.values, vec![0.5]);
        assert_eq!(dense_of(&slice, 2), two);
    }

    #[test]
    fn only_the_narrowest_windows_are_canonical() {
        let dense = [-1.0, -1.0, 0.25, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0];
        let slice = Slice::windowed(2, &dense);
        assert!(slice.is_canonical());
        assert!(Slice::dense(2, dense.to_vec()).is_canonical());
        // the same values with the first window widened by one -1 on the left
        let mut wide = slice.clone();
        let windows = wide.windows.as_mut().unwrap();
        windows[0] = Window {
            start: 0,
            lo: 1,
            len: 2,
        };
        windows[1].start = 2;
        wide.values = vec![-1.0, 0.25];
        assert_eq!(dense_of(&wide, 2), dense_of(&slice, 2), "same values");
        assert!(!wide.is_canonical());
        // ... or by one +1 on the right
        let mut wide = slice.clone();
        wide.windows.as_mut().unwrap()[0].len = 2;
        wide.windows.as_mut().unwrap()[1].start = 2;
        wide.values = vec![0.25, 1.0];
        assert_eq!(dense_of(&wide, 2), dense_of(&slice, 2), "same values");
        assert!(!wide.is_canonical());
    }

    #[test]
    fn decode_rejects_damaged_bytes() {
        let slice = Slice::windowed(1, &[-1.0, 0.5, 1.0]);
        let bytes = slice.encode();
        assert_eq!(
            Slice::decode(&bytes[..bytes.len() - 1], 1, 1, true),
            Err(SliceDecodeError::Truncated)
        );
        let mut long = bytes.clone();
        long.extend_from_slice(&[0; 8]);
        assert_eq!(
            Slice::decode(&long, 1, 1, true),
            Err(SliceDecodeError::Trailing { got: 8 })
        );
        let mut bad = bytes.clone();
        bad[0] = 3; // lo = 3 in a width of 3, len 1
        assert!(matches!(
            Slice::decode(&bad, 1, 1, true),
            Err(SliceDecodeError::BadWindow { .. })
        ));
        let dense = Slice::dense(0, vec![1.5, -2.5]);
        assert_eq!(Slice::decode(&dense.encode(), 0, 2, false).unwrap(), dense);
        assert_eq!(
            Slice::decode(&dense.encode(), 0, 3, false),
            Err(SliceDecodeError::Truncated)
        );
    }
}
