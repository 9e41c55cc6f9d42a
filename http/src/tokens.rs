//! Reading an access token off an HTTP request, the same way on every `gops` HTTP
//! server: `Authorization: Bearer <token>`, the password of `Authorization: Basic`
//! (what a browser sends on navigation), or a query parameter (percent-decoded; a `+`
//! stays a `+`, as base64 tokens hold them and an address bar does not form-encode);
//! and comparing it in constant time.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::percent_decode_str;

/// The token of an `Authorization: Bearer <token>` value.
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    value.strip_prefix(b"Bearer ")
}

/// The password of an `Authorization: Basic <base64(user:password)>` value.
pub fn basic_password(value: &[u8]) -> Option<Vec<u8>> {
    let scheme = value.get(..6)?;
    if !scheme.eq_ignore_ascii_case(b"basic ") {
        return None;
    }
    let decoded = STANDARD.decode(value[6..].trim_ascii()).ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some(decoded[colon + 1..].to_vec())
}

/// The values of the `key` parameters of a query string (without its `?`),
/// percent-decoded, the first `most` of them.
pub fn query_values(query: &str, key: &str, most: usize) -> Vec<Vec<u8>> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('=').filter(|(k, _)| *k == key))
        .take(most)
        .map(|(_, value)| percent_decode_str(value).collect())
        .collect()
}

/// Equality whose time depends on the lengths only, not on where the bytes differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_read_from_each_place() {
        assert_eq!(bearer(b"Bearer s3cret"), Some(&b"s3cret"[..]));
        assert_eq!(bearer(b"bearer s3cret"), None);
        // "user:pa:ss" in base64
        assert_eq!(
            basic_password(b"Basic dXNlcjpwYTpzcw=="),
            Some(b"pa:ss".to_vec())
        );
        assert_eq!(
            basic_password(b"basic dXNlcjpwYTpzcw=="),
            Some(b"pa:ss".to_vec())
        );
        assert_eq!(basic_password(b"Basic !!!"), None);
        assert_eq!(basic_password(b"Bearer x"), None);
        assert_eq!(
            query_values("a=1&token=x%2By+z&token=w&tokens=v", "token", 4),
            vec![b"x+y+z".to_vec(), b"w".to_vec()]
        );
        assert_eq!(
            query_values("token=a&token=b", "token", 1),
            vec![b"a".to_vec()]
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
