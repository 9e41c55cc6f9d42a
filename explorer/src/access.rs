//! Who may read the explorer: with tokens set (`--token-file`), a request must carry one,
//! as `Authorization: Bearer <token>` or as the `token` query parameter (what the page
//! is opened with and carries on to its API calls); without tokens, anyone who reaches
//! the address.

use gops_http::tokens::{bearer, constant_time_eq, query_values};

use crate::params::TOKEN_KEY;

#[derive(Clone, Debug, Default)]
pub struct Access {
    tokens: Vec<String>,
}

impl Access {
    /// Everyone is let in.
    pub fn open() -> Access {
        Access::default()
    }

    /// Only requests with one of `tokens` (empty tokens are ignored).
    pub fn tokens(tokens: Vec<String>) -> Access {
        Access {
            tokens: tokens.into_iter().filter(|t| !t.is_empty()).collect(),
        }
    }

    pub fn needs_token(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// Whether a request with this `authorization` header value and this query string
    /// is let in.
    pub fn admits(&self, authorization: Option<&[u8]>, query: Option<&str>) -> bool {
        if self.tokens.is_empty() {
            return true;
        }
        let bearer = authorization.and_then(bearer);
        let in_query = query.and_then(|q| query_values(q, TOKEN_KEY, 1).pop());
        // every token is compared with both, so the time does not say which matched
        let mut found = false;
        for token in &self.tokens {
            if let Some(given) = bearer {
                found |= constant_time_eq(given, token.as_bytes());
            }
            if let Some(given) = &in_query {
                found |= constant_time_eq(given, token.as_bytes());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_tokens_everyone_is_let_in() {
        let access = Access::open();
        assert!(!access.needs_token());
        assert!(access.admits(None, None));
        assert!(Access::tokens(vec![String::new()]).admits(None, None));
    }

    #[test]
    fn a_token_in_the_header_or_the_query_lets_in() {
        let access = Access::tokens(vec!["s3cret/+=".into(), "other".into()]);
        assert!(access.needs_token());
        assert!(access.admits(Some(b"Bearer s3cret/+="), None));
        assert!(access.admits(Some(b"Bearer other"), None));
        assert!(access.admits(None, Some("a=1&token=s3cret%2F%2B%3D")));
        assert!(access.admits(None, Some("token=s3cret/+=&a=1")));
        assert!(access.admits(None, Some("token=other")));
        for (header, query) in [
            (None, None),
            (Some(&b"Bearer wrong"[..]), None),
            (Some(&b"s3cret/+="[..]), None),
            (Some(&b"Bearer s3cret/+= "[..]), None),
            (None, Some("token=s3cret")),
            (None, Some("tokens=other")),
            (None, Some("a=other")),
        ] {
            assert!(!access.admits(header, query), "{header:?} {query:?}");
        }
    }
}
