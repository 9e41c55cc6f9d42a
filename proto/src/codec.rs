//! The codec of the gRPC service: prost's encoding, with a bound checked on each
//! message's wire bytes before it is decoded. A message is decoded into structs that can
//! be far larger than its bytes (an empty `SliceData` entry is 2 bytes on the wire and
//! about 80 in memory), so an 8 MiB `SubmitRequest` of empty entries once cost 296 MB
//! before anything was checked. Now every message type has a byte limit (1 MiB, or
//! [`MAX_MESSAGE_BYTES`] for the few that carry slices) and a bound on its repeated
//! entries: a submission holds at most [`MAX_SUBMIT_SLICES`] slices, as many as the
//! largest layer has. What a message costs to decode is then at most about twice its
//! bytes (prost copies `bytes` fields out of the buffer) plus a bounded overhead.

use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic_prost::{ProstCodec, ProstEncoder};

use crate::MAX_MESSAGE_BYTES;
use crate::v1::*;

/// The largest message of a type that carries no slices.
pub const SMALL_MESSAGE_BYTES: usize = 1 << 20;

/// The most slices one `Submit` may carry: the prize sets of the largest layer of the
/// largest game (C(16, 8)); a shard never holds more.
pub const MAX_SUBMIT_SLICES: usize = 12_870;

/// What a message type may weigh on the wire, checked before it is decoded.
pub trait WireBound {
    /// Its largest encoding.
    const MAX_BYTES: usize = SMALL_MESSAGE_BYTES;

    /// Checks the encoded message beyond its size (entries of a repeated field).
    fn check_entries(_bytes: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

macro_rules! small {
    ($($message:ty),* $(,)?) => { $(impl WireBound for $message {})* };
}

macro_rules! carries_slices {
    ($($message:ty),* $(,)?) => {
        $(impl WireBound for $message { const MAX_BYTES: usize = MAX_MESSAGE_BYTES; })*
    };
}

small!(
    HelloRequest,
    HelloReply,
    LeaseRequest,
    LeaseReply,
    HeartbeatRequest,
    HeartbeatReply,
    FetchRequest,
    SubmitReply,
    ReleaseRequest,
    ReleaseReply,
    LeaveRequest,
    LeaveReply,
    StatusRequest,
);

// from the coordinator to its workers and status readers
carries_slices!(SliceData, LocateReply, StatusReply);

impl WireBound for SubmitRequest {
    const MAX_BYTES: usize = MAX_MESSAGE_BYTES;

    fn check_entries(bytes: &[u8]) -> Result<(), String> {
        let slices = count_field(bytes, 3)?;
        if slices > MAX_SUBMIT_SLICES {
            return Err(format!(
                "a submission carries at most {MAX_SUBMIT_SLICES} slices, this one {slices}"
            ));
        }
        Ok(())
    }
}

/// How often field `number` occurs at the top level of an encoded message, walking
/// its fields without decoding them.
pub fn count_field(bytes: &[u8], number: u32) -> Result<usize, String> {
    let mut rest = bytes;
    let mut count = 0;
    while !rest.is_empty() {
        let key = varint(&mut rest)?;
        let skip = match key & 7 {
            0 => {
                varint(&mut rest)?;
                0
            }
            1 => 8,
            2 => usize::try_from(varint(&mut rest)?).map_err(|_| "length out of range")?,
            5 => 4,
            wire => return Err(format!("wire type {wire} is not valid here")),
        };
        if skip > rest.len() {
            return Err("a field runs past the end of the message".into());
        }
        rest = &rest[skip..];
        if key >> 3 == u64::from(number) {
            count += 1;
        }
    }
    Ok(count)
}

/// Reads a base-128 varint off the front of `bytes`.
fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first().ok_or("a varint runs past the end")?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a varint is longer than 10 bytes".into())
}

/// prost's codec with [`WireBound`] checked before every decode.
#[derive(Debug, Clone)]
pub struct BoundedCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for BoundedCodec<T, U> {
    fn default() -> Self {
        BoundedCodec(PhantomData)
    }
}

impl<T, U> Codec for BoundedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + WireBound + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = BoundedDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::raw_encoder(BufferSettings::default())
    }

    fn decoder(&mut self) -> Self::Decoder {
        BoundedDecoder(PhantomData)
    }
}

#[derive(Debug)]
pub struct BoundedDecoder<U>(PhantomData<U>);

impl<U: Message + Default + WireBound> Decoder for BoundedDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        use prost::bytes::Buf;
        let size = buf.remaining();
        if size > U::MAX_BYTES {
            return Err(Status::resource_exhausted(format!(
                "message of {size} bytes, more than the {} this call takes",
                U::MAX_BYTES
            )));
        }
        // tonic hands the whole message in one contiguous buffer
        if buf.chunk().len() == size {
            U::check_entries(buf.chunk()).map_err(Status::invalid_argument)?;
        } else {
            let bytes = buf.copy_to_bytes(size);
            U::check_entries(&bytes).map_err(Status::invalid_argument)?;
            return U::decode(bytes).map(Some).map_err(decode_error);
        }
        U::decode(buf).map(Some).map_err(decode_error)
    }
}

fn decode_error(e: prost::DecodeError) -> Status {
    Status::internal(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_counted_without_decoding() {
        let request = SubmitRequest {
            worker_id: 7,
            lease_id: 300,
            slices: vec![SliceData::default(); 5],
            session_key: vec![1; 40],
        };
        assert_eq!(count_field(&request.encode_to_vec(), 3), Ok(5));
        assert_eq!(count_field(&request.encode_to_vec(), 1), Ok(1));
        assert!(SubmitRequest::check_entries(&request.encode_to_vec()).is_ok());
        let flood = SubmitRequest {
            slices: vec![SliceData::default(); MAX_SUBMIT_SLICES + 1],
            ..request
        };
        let why = SubmitRequest::check_entries(&flood.encode_to_vec()).unwrap_err();
        assert!(why.contains("at most 12870 slices"), "{why}");
    }

    #[test]
    fn malformed_bytes_are_refused_not_read_past() {
        assert!(
            count_field(&[0x1a, 0x05, 0x00], 3).is_err(),
            "length past the end"
        );
        assert!(count_field(&[0x0b], 1).is_err(), "wire type 3");
        assert!(count_field(&[0x08, 0xff], 1).is_err(), "unfinished varint");
        assert_eq!(count_field(&[], 3), Ok(0));
    }
}
