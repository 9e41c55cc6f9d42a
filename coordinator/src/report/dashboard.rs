//! The live dashboard on the coordinator's HTTP address: `GET /` (one page, its HTML, CSS
//! and JavaScript compiled into the binary, no CDN) and `GET /api/status` (the
//! [`LiveStatus`](crate::report::status::LiveStatus) it polls), and who may read them: with
//! tokens set, a request must present one, as `Authorization: Bearer <token>`, as the
//! password of HTTP Basic (what a browser can send on navigation) or as `?token=`.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{RawQuery, State};
use axum::http::header::{
    AUTHORIZATION, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY,
    WWW_AUTHENTICATE, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
pub use gops_http::tokens::basic_password;
use gops_http::tokens::query_values;

use crate::cluster::Coordinator;
use crate::server::service::AccessTokens;

const HTML: &str = include_str!("dashboard/page.html");
const CSS: &str = include_str!("dashboard/page.css");
const SCRIPT: &str = include_str!("dashboard/page.js");

/// What the HTTP handlers (the dashboard's and `/metrics`) need: the coordinator and its
/// tokens.
pub(crate) struct Shared {
    pub(crate) core: Arc<Coordinator>,
    /// The coordinator's tokens: any of them reads the metrics and the dashboard.
    pub(crate) tokens: AccessTokens,
}

/// The page: the HTML with its style sheet and script in place.
pub fn page() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        HTML.replacen("/*STYLE*/", CSS, 1)
            .replacen("/*SCRIPT*/", SCRIPT, 1)
    })
}

/// The page's content security policy: its own inline style sheet and script only,
/// named by their SHA-256 (no `'unsafe-inline'`: an injected script or style would not
/// run), connections to its own origin, nothing else.
pub fn content_security_policy() -> &'static str {
    static POLICY: OnceLock<String> = OnceLock::new();
    POLICY.get_or_init(|| {
        format!(
            "default-src 'none'; script-src '{}'; style-src '{}'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            csp_hash(SCRIPT),
            csp_hash(CSS)
        )
    })
}

/// A CSP source that admits the inline element whose text is `text`.
fn csp_hash(text: &str) -> String {
    use base64::Engine;
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    )
}

/// `?token=` parameters looked at, at most (the rest of a query is ignored).
const MAX_QUERY_TOKENS: usize = 4;

/// Whether a request may read the dashboard: no tokens are set, or it presents one in
/// its `authorization` header (Bearer, or Basic with the token as password and any user
/// name) or as a `token` parameter of its query (percent-decoded; a `+` is a `+`).
/// Every comparison is [`AccessTokens::admits`]'s constant-time one.
pub fn admitted(tokens: &AccessTokens, authorization: Option<&[u8]>, query: Option<&str>) -> bool {
    if tokens.is_empty() {
        return true;
    }
    let by_header = authorization.is_some_and(|value| {
        tokens.admits(value) || basic_password(value).is_some_and(|p| tokens.admits_token(&p))
    });
    by_header
        || query.is_some_and(|q| {
            query_tokens(q)
                .iter()
                .any(|token| tokens.admits_token(token))
        })
}

/// The values of the `token` parameters of a query string (without its `?`),
/// percent-decoded, the first [`MAX_QUERY_TOKENS`].
pub fn query_tokens(query: &str) -> Vec<Vec<u8>> {
    query_values(query, "token", MAX_QUERY_TOKENS)
}

/// The headers of every dashboard answer: never cached (it may carry a token in its
/// address, and the data is live), never framed, and its address never sent on as a
/// referrer. The page's own script and style are inline, admitted by their hashes
/// ([`content_security_policy`]); it loads nothing else and connects only to its own
/// origin.
fn guarded(content_type: &'static str) -> [(HeaderName, &'static str); 6] {
    [
        (CONTENT_TYPE, content_type),
        (CACHE_CONTROL, "no-store"),
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (REFERRER_POLICY, "no-referrer"),
        (X_FRAME_OPTIONS, "DENY"),
        (CONTENT_SECURITY_POLICY, content_security_policy()),
    ]
}

fn authorization(headers: &HeaderMap) -> Option<&[u8]> {
    headers.get(AUTHORIZATION).map(|v| v.as_bytes())
}

const REFUSED_PAGE: &str = "This dashboard needs the coordinator's token: open it as \
    http://HOST:PORT/?token=TOKEN, or give the token as the password when the browser \
    asks (any user name).\n";

/// `GET /`: the page, or 401 with a Basic challenge so that a browser asks for the token.
pub(crate) async fn serve_page(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    if !admitted(&shared.tokens, authorization(&headers), query.as_deref()) {
        return (
            StatusCode::UNAUTHORIZED,
            [
                (WWW_AUTHENTICATE, "Basic realm=\"gops\", charset=\"UTF-8\""),
                (CONTENT_TYPE, "text/plain; charset=utf-8"),
                (CACHE_CONTROL, "no-store"),
            ],
            REFUSED_PAGE,
        )
            .into_response();
    }
    (guarded("text/html; charset=utf-8"), page()).into_response()
}

/// `GET /api/status`: the live status as JSON, or 401 (a Bearer challenge: a script's
/// request must not make the browser prompt).
pub(crate) async fn serve_status(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    if !admitted(&shared.tokens, authorization(&headers), query.as_deref()) {
        return (
            StatusCode::UNAUTHORIZED,
            [
                (WWW_AUTHENTICATE, "Bearer"),
                (CONTENT_TYPE, "application/json"),
                (CACHE_CONTROL, "no-store"),
            ],
            "{\"error\":\"missing or wrong token\"}\n",
        )
            .into_response();
    }
    let core = Arc::clone(&shared.core);
    // the status reads the store and takes the coordinator's lock: off the async threads
    let status = tokio::task::spawn_blocking(move || {
        core.live_status(Instant::now())
            .map_err(|e| e.to_string())
            .and_then(|s| serde_json::to_vec(&s).map_err(|e| e.to_string()))
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    match status {
        Ok(json) => (guarded("application/json"), json).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(CONTENT_TYPE, "application/json")],
            serde_json::json!({ "error": format!("status unavailable: {e}") }).to_string(),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    fn basic(credentials: &str) -> Vec<u8> {
        format!("Basic {}", STANDARD.encode(credentials)).into_bytes()
    }

    #[test]
    fn the_page_has_its_style_and_script_in_place() {
        let page = page();
        assert!(page.starts_with("<!doctype html>"), "{}", &page[..40]);
        assert!(!page.contains("/*STYLE*/") && !page.contains("/*SCRIPT*/"));
        assert!(page.contains(CSS) && page.contains(SCRIPT));
        // nothing is loaded from elsewhere
        assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    }

    #[test]
    fn the_policy_admits_the_page_s_own_script_and_style_by_hash_and_nothing_inline() {
        let policy = content_security_policy();
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        // the page holds one script and one style element, whose texts are hashed
        assert_eq!(page().matches("<script").count(), 1);
        assert_eq!(page().matches("<style").count(), 1);
        assert!(!page().contains(" style=\""), "an inline style attribute");
        for text in [SCRIPT, CSS] {
            assert!(
                policy.contains(&format!("'{}'", csp_hash(text))),
                "{policy}"
            );
        }
        // the known SHA-256 of "abc" (FIPS 180-2), in base64
        assert_eq!(
            csp_hash("abc"),
            "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
    }

    #[test]
    fn without_tokens_everyone_is_admitted() {
        let none = AccessTokens::none();
        assert!(admitted(&none, None, None));
        assert!(admitted(&none, Some(b"Bearer nonsense"), Some("token=x")));
    }

    #[test]
    fn a_token_is_accepted_as_bearer_basic_password_or_query() {
        let tokens = AccessTokens::of(vec!["s3cret".into(), "a+b/c=".into()]);
        assert!(!admitted(&tokens, None, None));
        assert!(admitted(&tokens, Some(b"Bearer s3cret"), None));
        assert!(admitted(&tokens, Some(&basic("anyone:s3cret")), None));
        assert!(admitted(&tokens, Some(&basic(":s3cret")), None));
        // the password is all after the first colon
        assert!(admitted(&tokens, Some(&basic("u:a+b/c=")), None));
        assert!(admitted(&tokens, Some(b"basic dTpzM2NyZXQ="), None));
        assert!(admitted(&tokens, None, Some("token=s3cret")));
        assert!(admitted(&tokens, None, Some("x=1&token=a+b/c=")));
        assert!(admitted(&tokens, None, Some("token=a%2Bb%2Fc%3D")));
        // a wrong header does not hide a right query parameter
        assert!(admitted(
            &tokens,
            Some(b"Bearer wrong"),
            Some("token=s3cret")
        ));
    }

    #[test]
    fn wrong_or_malformed_tokens_are_refused() {
        let tokens = AccessTokens::shared("s3cret".into());
        for header in [
            b"Bearer s3creT".to_vec(),
            b"Bearer s3cre".to_vec(),
            b"s3cret".to_vec(),
            b"Basic s3cret".to_vec(),
            b"Basic ".to_vec(),
            b"Basic".to_vec(),
            b"Basic !!!!".to_vec(),
            basic("s3cret"),
            basic("s3cret:"),
            basic("user:s3cret "),
            basic("user:xs3cret"),
            vec![0xff, 0xfe],
        ] {
            assert!(!admitted(&tokens, Some(&header), None), "{header:?}");
        }
        for query in [
            "",
            "token",
            "token=",
            "token=s3cre",
            "tokens=s3cret",
            "xtoken=s3cret",
            "token=s3cret%",
            "token=%73%33%63%72%65%74x",
            "token=s3cret#x",
        ] {
            assert!(!admitted(&tokens, None, Some(query)), "{query}");
        }
        assert!(admitted(&tokens, None, Some("token=%73%33%63%72%65%74")));
    }

    #[test]
    fn only_the_first_query_tokens_are_tried() {
        let tokens = AccessTokens::shared("s3cret".into());
        let mut query = "token=no&".repeat(MAX_QUERY_TOKENS);
        query.push_str("token=s3cret");
        assert!(!admitted(&tokens, None, Some(&query)));
        assert_eq!(query_tokens(&query).len(), MAX_QUERY_TOKENS);
        assert_eq!(
            query_tokens("a=1&token=%41+&token="),
            [b"A+".to_vec(), vec![]]
        );
    }
}
