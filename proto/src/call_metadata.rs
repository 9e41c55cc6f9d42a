//! What a `Submit` call says about its sender in its metadata (protocol 7): the worker,
//! the lease and the session key, repeated from the message so that the coordinator
//! can refuse an unknown or banned session before it reads (and decodes) a message of
//! up to [`crate::MAX_MESSAGE_BYTES`].

use tonic::Request;
use tonic::metadata::{MetadataMap, MetadataValue};

use crate::ids::{Caller, LeaseId, SessionKey, WorkerId};
use crate::v1::SubmitRequest;

/// The worker id, in decimal.
pub const WORKER_HEADER: &str = "gops-worker";
/// The lease id, in decimal.
pub const LEASE_HEADER: &str = "gops-lease";
/// The session key, in lower-case hexadecimal.
pub const SESSION_KEY_HEADER: &str = "gops-session-key";

/// The gRPC path of `Submit`, the call whose metadata is read first.
pub const SUBMIT_PATH: &str = "/gops.v1.Coordinator/Submit";

/// `request` as a call whose metadata names its sender, as a coordinator of protocol 7
/// requires.
pub fn submit_call(request: SubmitRequest) -> Request<SubmitRequest> {
    let headers = [
        (WORKER_HEADER, request.worker_id.to_string()),
        (LEASE_HEADER, request.lease_id.to_string()),
        (SESSION_KEY_HEADER, hex(&request.session_key)),
    ];
    let mut call = Request::new(request);
    for (name, value) in headers {
        // decimal digits and hex digits are always valid ASCII metadata
        if let Ok(value) = MetadataValue::try_from(value.as_str()) {
            call.metadata_mut().insert(name, value);
        }
    }
    call
}

/// The sender a `Submit` call's metadata names, or why it names none.
pub fn submit_sender(metadata: &MetadataMap) -> Result<(Caller, LeaseId), String> {
    let worker = number(metadata, WORKER_HEADER)?;
    let lease = number(metadata, LEASE_HEADER)?;
    let key = text(metadata, SESSION_KEY_HEADER)?;
    let key = unhex(key)
        .and_then(|bytes| SessionKey::from_wire(&bytes))
        .ok_or_else(|| {
            format!(
                "{SESSION_KEY_HEADER} must be {} hexadecimal digits",
                SessionKey::LEN * 2
            )
        })?;
    Ok((
        Caller {
            worker: WorkerId(worker),
            key,
        },
        LeaseId(lease),
    ))
}

fn text<'a>(metadata: &'a MetadataMap, name: &str) -> Result<&'a str, String> {
    let value = metadata.get(name).ok_or_else(|| {
        format!(
            "a Submit call must name its sender in metadata ({WORKER_HEADER}, {LEASE_HEADER}, \
             {SESSION_KEY_HEADER}; protocol version {}): {name} is missing",
            crate::PROTOCOL_VERSION
        )
    })?;
    value
        .to_str()
        .map_err(|_| format!("{name} is not plain ASCII"))
}

fn number(metadata: &MetadataMap, name: &str) -> Result<u64, String> {
    text(metadata, name)?
        .parse()
        .map_err(|_| format!("{name} must be a decimal number below 2^64"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SubmitRequest {
        SubmitRequest {
            worker_id: 7,
            lease_id: u64::MAX,
            slices: Vec::new(),
            session_key: (0..32).collect(),
        }
    }

    #[test]
    fn the_metadata_names_the_sender_of_the_message() {
        let call = submit_call(request());
        let (caller, lease) = submit_sender(call.metadata()).unwrap();
        assert_eq!(caller.worker, WorkerId(7));
        assert_eq!(lease, LeaseId(u64::MAX));
        assert_eq!(caller.key.to_wire(), request().session_key);
    }

    #[test]
    fn missing_or_malformed_metadata_is_refused_with_its_reason() {
        let missing = submit_sender(&MetadataMap::new()).unwrap_err();
        assert!(missing.contains("gops-worker is missing"), "{missing}");
        assert!(missing.contains("protocol version"), "{missing}");

        let mut short_key = submit_call(request());
        let short = MetadataValue::try_from("abcd").unwrap();
        short_key.metadata_mut().insert(SESSION_KEY_HEADER, short);
        let why = submit_sender(short_key.metadata()).unwrap_err();
        assert!(why.contains("64 hexadecimal digits"), "{why}");

        let mut not_hex = submit_call(request());
        let bad = MetadataValue::try_from("zz".repeat(32).as_str()).unwrap();
        not_hex.metadata_mut().insert(SESSION_KEY_HEADER, bad);
        assert!(submit_sender(not_hex.metadata()).is_err());

        let mut negative = submit_call(request());
        negative
            .metadata_mut()
            .insert(LEASE_HEADER, MetadataValue::try_from("-1").unwrap());
        let why = submit_sender(negative.metadata()).unwrap_err();
        assert!(why.contains("gops-lease must be a decimal number"), "{why}");
    }
}
