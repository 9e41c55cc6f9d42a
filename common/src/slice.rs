//! A slice: the values of one prize set of one layer (DESIGN §3), the unit of storage and
//! transfer. `points` slices are dense, one value per canonical pattern. `win` slices keep,
//! per canonical pattern, only the window of score differences whose values are not the
//! exact -1 below it or the exact +1 above it: lossless by construction, whatever the
//! values, and small because most states are already decided. A `win` slice of the
//! current format also knows which score differences can occur at all ([`Reach`]): it
//! stores values only for those, and holds [`UNREACHABLE`] (a NaN) in memory for the
//! others inside a window, so that windows stay contiguous for the engine's fills.

use crate::checksum::Digest;
use crate::layout::Oriented;
use crate::objective::Objective;
use crate::reach::Reach;

/// What a `win` slice holds in memory at a score difference that cannot occur: a NaN, so
/// that a read of one by mistake poisons whatever it touches (a game's certificate
/// included) instead of passing for a value. Never stored or sent.
pub const UNREACHABLE: f64 = f64::NAN;

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

#[derive(Clone, Debug)]
pub struct Slice {
    /// Values of live score differences: `-diff_range..=diff_range`.
    pub diff_range: i32,
    pub values: Vec<f64>,
    /// `None` for dense slices (one value per canonical pattern and position).
    pub windows: Option<Vec<Window>>,
    /// For a windowed slice, the positions that can occur: only their values are encoded,
    /// the others are [`UNREACHABLE`] inside a window. `None`: every position.
    pub reach: Option<Reach>,
}

/// Slices are equal when their shapes are and their values have the same bits (so two
/// [`UNREACHABLE`]s are equal, and 0.0 and -0.0 are not).
impl PartialEq for Slice {
    fn eq(&self, other: &Slice) -> bool {
        self.diff_range == other.diff_range
            && self.windows == other.windows
            && self.reach == other.reach
            && self.values.len() == other.values.len()
            && self
                .values
                .iter()
                .zip(&other.values)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
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

    /// What this copy of the slice claims: its values (by digest), largest gap and games.
    pub fn claim(&self) -> Claim {
        Claim {
            digest: self.digest,
            max_gap_bits: self.max_gap.to_bits(),
            games: self.games,
        }
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

/// What a copy of a slice claims: its values (digest), largest gap (bit for bit) and
/// games. Two honest copies claim the same; copies that differ are a dispute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub digest: Digest,
    pub max_gap_bits: u64,
    pub games: u64,
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
            reach: None,
        }
    }

    /// The windowed form of dense values, `width = 2 diff_range + 1` per pattern: each
    /// pattern's window runs from its first reachable value that is not -1 to its last
    /// that is not +1, and holds [`UNREACHABLE`] at the positions `reach` leaves out
    /// (whatever `dense` has there). `reach: None`: every position is reachable.
    pub fn windowed(diff_range: i32, dense: &[f64], reach: Option<Reach>) -> Slice {
        let width = 2 * diff_range as usize + 1;
        let reachable = |pos: usize| reach.is_none_or(|r| r.contains(pos));
        let mut values = Vec::new();
        let windows = dense
            .chunks_exact(width)
            .map(|pattern| {
                let lo = (0..width)
                    .find(|&p| reachable(p) && pattern[p] != -1.0)
                    .unwrap_or(width);
                let hi = (0..width)
                    .rev()
                    .find(|&p| reachable(p) && pattern[p] != 1.0)
                    .map_or(0, |p| p + 1);
                let len = hi.saturating_sub(lo);
                let window = Window {
                    start: values.len() as u32,
                    lo: lo as u16,
                    len: len as u16,
                };
                values.extend((lo..lo + len).map(|p| {
                    if reachable(p) {
                        pattern[p]
                    } else {
                        UNREACHABLE
                    }
                }));
                window
            })
            .collect();
        Slice {
            diff_range,
            values,
            windows: Some(windows),
            reach,
        }
    }

    /// The values the slice stores (and encodes): every one, less the [`UNREACHABLE`]
    /// placeholders of a slice with a [`Reach`].
    pub fn stored_values(&self) -> impl Iterator<Item = f64> + '_ {
        let windows = self.windows.as_deref().unwrap_or(&[]);
        let positions = windows.iter().flat_map(|w| {
            let lo = usize::from(w.lo);
            lo..lo + usize::from(w.len)
        });
        let reachable: Box<dyn Iterator<Item = bool> + '_> = match (&self.reach, &self.windows) {
            (Some(reach), Some(_)) => Box::new(positions.map(|p| reach.contains(p))),
            _ => Box::new(std::iter::repeat(true)),
        };
        self.values
            .iter()
            .zip(reachable)
            .filter_map(|(&v, stored)| stored.then_some(v))
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
    /// the values (f64 LE), of reachable positions only where the slice has a [`Reach`].
    pub fn encode(&self) -> Vec<u8> {
        let windows = self.windows.as_deref().unwrap_or(&[]);
        let mut bytes = Vec::with_capacity(4 * windows.len() + 8 * self.values.len());
        for w in windows {
            bytes.extend_from_slice(&w.lo.to_le_bytes());
            bytes.extend_from_slice(&w.len.to_le_bytes());
        }
        match (&self.reach, self.windows.as_deref()) {
            (Some(reach), Some(windows)) => {
                for w in windows {
                    let (lo, start) = (usize::from(w.lo), w.start as usize);
                    for i in 0..usize::from(w.len) {
                        if reach.contains(lo + i) {
                            bytes.extend_from_slice(&self.values[start + i].to_le_bytes());
                        }
                    }
                }
            }
            _ => {
                for v in &self.values {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        bytes
    }

    /// Decodes [`Slice::encode`]'s bytes for a slice of `patterns` canonical patterns;
    /// a windowed slice with the reachable positions `reach` (all when `None`).
    pub fn decode(
        bytes: &[u8],
        diff_range: i32,
        patterns: usize,
        windowed: bool,
        reach: Option<Reach>,
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
        let (mut start, mut stored) = (0usize, 0usize);
        for (pattern, h) in header.chunks_exact(4).enumerate() {
            let lo = u16::from_le_bytes([h[0], h[1]]);
            let len = u16::from_le_bytes([h[2], h[3]]);
            let end = usize::from(lo) + usize::from(len);
            if end > width {
                return Err(SliceDecodeError::BadWindow { pattern, width });
            }
            windows.push(Window {
                start: start as u32,
                lo,
                len,
            });
            start += usize::from(len);
            stored += reach.map_or(usize::from(len), |r| r.count_in(usize::from(lo), end));
        }
        let read = read_values(&bytes[4 * patterns..], stored)?;
        let values = match reach {
            None => read,
            Some(reach) => {
                let mut read = read.into_iter();
                let mut values = Vec::with_capacity(start);
                for w in &windows {
                    let lo = usize::from(w.lo);
                    values.extend((lo..lo + usize::from(w.len)).map(|p| {
                        if reach.contains(p) {
                            read.next().expect("counted above")
                        } else {
                            UNREACHABLE
                        }
                    }));
                }
                values
            }
        };
        Ok(Slice {
            diff_range,
            values,
            windows: Some(windows),
            reach,
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
        let shape = crate::slice_shape::SliceShape::of(n, objective, k, rank)?;
        let (range, patterns) = (shape.diff_range, shape.patterns);
        Slice::decode(body, range, patterns, shape.windowed, shape.reach).map_err(|e| e.to_string())
    }

    /// Whether the slice is in the one form [`Slice::windowed`] or [`Slice::dense`] gives
    /// its values: every window as narrow as its values allow (its ends reachable, the
    /// first not -1, the last not +1), and no reachable value a NaN. Equal values then
    /// mean equal bytes and equal digests, so copies from different workers compare by
    /// digest.
    pub fn is_canonical(&self) -> bool {
        let Some(windows) = &self.windows else {
            return true;
        };
        let reachable = |pos: usize| self.reach.is_none_or(|r| r.contains(pos));
        windows.iter().all(|w| {
            let (start, len, lo) = (w.start as usize, usize::from(w.len), usize::from(w.lo));
            match self.values.get(start..start + len) {
                Some([]) => true,
                Some(v) => {
                    reachable(lo)
                        && reachable(lo + len - 1)
                        && v[0] != -1.0
                        && v[len - 1] != 1.0
                        && v.iter()
                            .enumerate()
                            .all(|(i, x)| !reachable(lo + i) || !x.is_nan())
                }
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
            let slice = Slice::windowed(2, dense, None);
            assert_eq!(dense_of(&slice, 1), dense, "{slice:?}");
            let decoded = Slice::decode(&slice.encode(), 2, 1, true, None).unwrap();
            assert_eq!(decoded, slice);
            for (d, &v) in (-2..=2).zip(dense.iter()) {
                assert_eq!(slice.value(Oriented::new(0, true), -d), -v);
            }
            assert_eq!(slice.value(Oriented::new(0, false), 3), 1.0);
            assert_eq!(slice.value(Oriented::new(0, false), -3), -1.0);
        }
        let two = [[-1.0, 0.5, 1.0], [-1.0, -1.0, -1.0]].concat();
        let slice = Slice::windowed(1, &two, None);
        assert_eq!(slice.values, vec![0.5]);
        assert_eq!(dense_of(&slice, 2), two);
    }

    #[test]
    fn only_the_narrowest_windows_are_canonical() {
        let dense = [-1.0, -1.0, 0.25, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0];
        let slice = Slice::windowed(2, &dense, None);
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
        let slice = Slice::windowed(1, &[-1.0, 0.5, 1.0], None);
        let bytes = slice.encode();
        assert_eq!(
            Slice::decode(&bytes[..bytes.len() - 1], 1, 1, true, None),
            Err(SliceDecodeError::Truncated)
        );
        let mut long = bytes.clone();
        long.extend_from_slice(&[0; 8]);
        assert_eq!(
            Slice::decode(&long, 1, 1, true, None),
            Err(SliceDecodeError::Trailing { got: 8 })
        );
        let mut bad = bytes.clone();
        bad[0] = 3; // lo = 3 in a width of 3, len 1
        assert!(matches!(
            Slice::decode(&bad, 1, 1, true, None),
            Err(SliceDecodeError::BadWindow { .. })
        ));
        let dense = Slice::dense(0, vec![1.5, -2.5]);
        assert_eq!(
            Slice::decode(&dense.encode(), 0, 2, false, None).unwrap(),
            dense
        );
        assert_eq!(
            Slice::decode(&dense.encode(), 0, 3, false, None),
            Err(SliceDecodeError::Truncated)
        );
    }

    #[test]
    fn only_reachable_values_are_stored_and_the_rest_read_back_as_unreachable() {
        // 2 of the 3-card game left {1, 2}: 3 played, so d is -3, 0 or 3; within the
        // live range -3..=3 that is positions 0, 3 and 6
        let reach = Reach::of(3, crate::cards::CardSet::from_cards(&[1, 2]));
        assert_eq!(reach.positions().collect::<Vec<_>>(), vec![0, 3, 6]);
        let dense = [
            [-1.0, 7.0, 7.0, -0.5, 7.0, 7.0, 1.0],
            [-0.75, 9.0, 9.0, 0.0, 9.0, 9.0, 0.5],
            [-1.0, 9.0, 9.0, -1.0, 9.0, 9.0, 1.0],
        ]
        .concat();
        let slice = Slice::windowed(3, &dense, Some(reach));
        let windows = slice.windows.as_ref().unwrap();
        assert_eq!((windows[0].lo, windows[0].len), (3, 1));
        assert_eq!((windows[1].lo, windows[1].len), (0, 7));
        assert_eq!(windows[2].len, 0);
        assert!(slice.is_canonical());
        // the unreachable positions inside the second window are not stored
        let bytes = slice.encode();
        assert_eq!(bytes.len(), 4 * 3 + 8 * 4);
        let decoded = Slice::decode(&bytes, 3, 3, true, Some(reach)).unwrap();
        assert_eq!(decoded, slice);
        assert!(decoded.value(Oriented::new(1, false), -2).is_nan());
        assert_eq!(decoded.value(Oriented::new(1, false), 3), 0.5);
        assert_eq!(decoded.value(Oriented::new(1, true), -3), -0.5);
        assert_eq!(decoded.value(Oriented::new(0, false), 0), -0.5);
        assert_eq!(decoded.value(Oriented::new(2, false), 0), -1.0);
        // read as if every position were stored, the bytes are too few
        assert_eq!(
            Slice::decode(&bytes, 3, 3, true, None),
            Err(SliceDecodeError::Truncated)
        );
        // a window that ends on an unreachable position, or a NaN where a value belongs,
        // is not canonical
        let mut wide = slice.clone();
        wide.windows.as_mut().unwrap()[0].len = 2;
        wide.windows.as_mut().unwrap()[1].start = 2;
        wide.values.insert(1, UNREACHABLE);
        assert!(!wide.is_canonical());
        let mut poisoned = slice.clone();
        poisoned.values[1] = f64::NAN;
        assert!(!poisoned.is_canonical());
    }
}
