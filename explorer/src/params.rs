//! The API's query strings read into typed values: the decoded `key=value` pairs (only
//! the keys a route knows, each at most once), a state with the command line's defaults,
//! and whole numbers. Every refusal is a [`BadRequest`] of one line.

use gops_common::state::GameState;
use gops_db::read::StateText;
use percent_encoding::percent_decode_str;

/// Why a request was refused: one line, shown to the caller as the body of a 400.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest(pub String);

/// The longest reason sent back: an echoed value is cut, not the request.
const MAX_REASON: usize = 300;

impl BadRequest {
    /// A reason made fit for one line of a response: control characters (an encoded
    /// newline in a value, say) become `?`, and a long one is cut.
    pub fn new(reason: impl Into<String>) -> BadRequest {
        let reason: String = reason
            .into()
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        if reason.chars().count() > MAX_REASON {
            let cut: String = reason.chars().take(MAX_REASON).collect();
            return BadRequest(format!("{cut}..."));
        }
        BadRequest(reason)
    }
}

/// The key every route accepts: the access token (checked before the route runs).
pub const TOKEN_KEY: &str = "token";

/// A query string's pairs, decoded.
#[derive(Debug, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Decodes `raw` (the part of the URI after `?`, if any); a key that is not in
    /// `allowed` (or [`TOKEN_KEY`]), a key given twice or a value that is not UTF-8 once
    /// decoded is refused.
    pub fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<Query, BadRequest> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for piece in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = piece.split_once('=').unwrap_or((piece, ""));
            let (key, value) = (decode(key)?, decode(value)?);
            if key != TOKEN_KEY && !allowed.contains(&key.as_str()) {
                let known = allowed.join(", ");
                return Err(BadRequest::new(format!(
                    "unknown parameter '{key}' (this route takes: {known})"
                )));
            }
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(BadRequest::new(format!("parameter '{key}' is given twice")));
            }
            pairs.push((key, value));
        }
        Ok(Query { pairs })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The whole number under `key`, if given.
    pub fn int(&self, key: &str) -> Result<Option<i64>, BadRequest> {
        self.get(key)
            .map(|text| {
                text.trim()
                    .parse::<i64>()
                    .map_err(|_| BadRequest::new(format!("{key}: '{text}' is not a whole number")))
            })
            .transpose()
    }

    /// The whole number under `key`, which must be given; `why` says what it is for.
    pub fn required_int(&self, key: &str, why: &str) -> Result<i64, BadRequest> {
        self.int(key)?
            .ok_or_else(|| BadRequest::new(format!("{key} is missing: {why}")))
    }

    /// The state of the `n`-card game the query names: `a`, `b` and `prizes` (card lists
    /// such as `1,3`; left out: all N cards) and `diff` (A's score minus B's; left out:
    /// 0), exactly as `gops value` reads `--a`, `--b`, `--prizes` and `--diff`.
    pub fn state(&self, n: u8) -> Result<GameState, BadRequest> {
        let text = StateText {
            a: self.get("a"),
            b: self.get("b"),
            prizes: self.get("prizes"),
            diff: self.int("diff")?.unwrap_or(0),
        };
        text.parse(n, ["a", "b", "prizes"])
            .map_err(|e| BadRequest::new(e.to_string()))
    }
}

/// The keys of a state, for [`Query::parse`].
pub const STATE_KEYS: [&str; 4] = ["a", "b", "prizes", "diff"];

fn decode(text: &str) -> Result<String, BadRequest> {
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| BadRequest::new("the query string is not UTF-8 once decoded"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gops_common::CardSet;

    fn state_query(raw: &str) -> Result<Query, BadRequest> {
        Query::parse(Some(raw), &STATE_KEYS)
    }

    #[test]
    fn a_state_reads_like_the_command_line() {
        let q = state_query("a=1,3&b=2%2C3&prizes=2,+3&diff=-1").unwrap();
        let state = q.state(5).unwrap();
        assert_eq!(state.a, CardSet::from_cards(&[1, 3]));
        assert_eq!(state.b, CardSet::from_cards(&[2, 3]));
        assert_eq!(state.prizes, CardSet::from_cards(&[2, 3]));
        assert_eq!(state.diff, -1);
        // nothing given: the start of the game
        let start = Query::parse(None, &STATE_KEYS).unwrap().state(4).unwrap();
        assert_eq!(start, GameState::initial(4));
        // an empty list is the empty set, as `--a ''` is
        let end = state_query("a=&b=&prizes=").unwrap().state(4).unwrap();
        assert_eq!(end.prizes, CardSet::EMPTY);
    }

    #[test]
    fn bad_states_are_refused_with_a_reason() {
        let reason = |raw: &str| state_query(raw).and_then(|q| q.state(5)).unwrap_err().0;
        assert_eq!(reason("a=1,9"), "a: card 9 is outside 1..=5");
        assert_eq!(reason("b=x"), "b: 'x' is not a card number");
        assert_eq!(reason("prizes=2,2"), "prizes: card 2 is listed twice");
        assert!(reason("a=1&b=1,2&prizes=1").contains("same size"));
        assert!(reason("diff=99").contains("out of range"));
        assert_eq!(reason("diff=1.5"), "diff: '1.5' is not a whole number");
        assert!(reason("colour=red").starts_with("unknown parameter 'colour'"));
        assert_eq!(reason("a=1&a=2"), "parameter 'a' is given twice");
        assert!(reason("a=%FF").contains("not UTF-8"));
    }

    #[test]
    fn reasons_stay_on_one_short_line() {
        let q = state_query("a=1%0A2").unwrap();
        let reason = q.state(5).unwrap_err().0;
        assert!(!reason.contains('\n'), "{reason}");
        let long = format!("b={}", "x".repeat(5000));
        let reason = state_query(&long).unwrap().state(5).unwrap_err().0;
        assert!(reason.len() < 400 && reason.ends_with("..."), "{reason}");
    }

    #[test]
    fn the_token_is_accepted_everywhere_and_required_numbers_say_why() {
        let q = Query::parse(Some("token=abc&upcard=3"), &["upcard"]).unwrap();
        assert_eq!(q.get(TOKEN_KEY), Some("abc"));
        assert_eq!(q.required_int("upcard", "it is needed").unwrap(), 3);
        let missing = Query::parse(None, &["upcard"]).unwrap();
        assert_eq!(
            missing
                .required_int("upcard", "it is needed")
                .unwrap_err()
                .0,
            "upcard is missing: it is needed"
        );
    }
}
