//! Slices on the wire: a stored slice's bytes into a [`SliceData`] message and back, with
//! the form of the message checked (the coordinator checks the content).

use gops_common::kernel::PivotStart;
use gops_common::slice::SliceBytes;

use crate::v1::SliceData;

/// [`PivotStart`] as `HelloReply.pivot_start` carries it.
pub fn pivot_start_to_wire(start: PivotStart) -> u32 {
    match start {
        PivotStart::Leftmost => 0,
        PivotStart::Minimax => 1,
    }
}

/// `HelloReply.pivot_start` as a [`PivotStart`]; an error for a value this build does not
/// know (a newer coordinator's arithmetic).
pub fn pivot_start_from_wire(value: u32) -> Result<PivotStart, String> {
    match value {
        0 => Ok(PivotStart::Leftmost),
        1 => Ok(PivotStart::Minimax),
        other => Err(format!(
            "the coordinator's kernel starts its simplex in a way this build does not know ({other}): use the coordinator's gops version"
        )),
    }
}

/// A slice message for `rank` of `layer`.
pub fn slice_data(layer: u8, rank: u32, bytes: SliceBytes) -> SliceData {
    SliceData {
        layer: u32::from(layer),
        prize_rank: rank,
        digest: bytes.digest.to_vec(),
        body: bytes.body,
        max_gap: bytes.max_gap,
        games: bytes.games,
    }
}

/// A slice message as `(layer, rank, bytes)`; an error names the field of the wrong form.
pub fn slice_parts(data: SliceData) -> Result<(u8, u32, SliceBytes), String> {
    let layer =
        u8::try_from(data.layer).map_err(|_| format!("layer {} is out of range", data.layer))?;
    let digest = data
        .digest
        .as_slice()
        .try_into()
        .map_err(|_| format!("digest of {} bytes, expected 32", data.digest.len()))?;
    Ok((
        layer,
        data.prize_rank,
        SliceBytes {
            body: data.body,
            digest,
            max_gap: data.max_gap,
            games: data.games,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::checksum::digest_bytes;

    #[test]
    fn a_slice_crosses_the_wire_unchanged() {
        let bytes = SliceBytes {
            body: vec![1, 2, 3],
            digest: digest_bytes(&[1, 2, 3]),
            max_gap: 1e-12,
            games: 9,
        };
        let (layer, rank, back) = slice_parts(slice_data(4, 17, bytes.clone())).unwrap();
        assert_eq!((layer, rank, back), (4, 17, bytes));
    }

    #[test]
    fn a_message_of_the_wrong_form_is_refused() {
        let mut data = slice_data(
            1,
            0,
            SliceBytes {
                body: vec![],
                digest: [0; 32],
                max_gap: 0.0,
                games: 0,
            },
        );
        data.digest.pop();
        assert!(slice_parts(data.clone()).unwrap_err().contains("31 bytes"));
        data.digest.push(0);
        data.layer = 256;
        assert!(slice_parts(data).unwrap_err().contains("256"));
    }
}
