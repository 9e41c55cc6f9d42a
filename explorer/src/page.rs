//! The explorer's page, embedded in the binary: one HTML document with its style sheet
//! and script put inline when served (so the token that lets the page in is the only
//! one it needs, and nothing is fetched from elsewhere), and the content security policy
//! that allows exactly those, by a nonce fresh for each response.

const HTML: &str = include_str!("../assets/index.html");
const STYLE: &str = include_str!("../assets/style.css");
const SCRIPT: &str = include_str!("../assets/app.js");
const COACH_HTML: &str = include_str!("../assets/coach.html");
const COACH_SCRIPT: &str = include_str!("../assets/coach.js");
/// `readSearch`, which both pages' scripts use: put inline before each.
const SEARCH: &str = include_str!("../assets/search.js");

/// The page, its inline style and script marked with `nonce`.
pub fn html(nonce: &str) -> String {
    HTML.replace("{{NONCE}}", nonce)
        .replace("/*{{STYLE}}*/", STYLE)
        .replace("/*{{SCRIPT}}*/", &format!("{SEARCH}\n{SCRIPT}"))
}

/// The coach's page, its inline style and script marked with `nonce`.
pub fn coach_html(nonce: &str) -> String {
    COACH_HTML
        .replace("{{NONCE}}", nonce)
        .replace("/*{{STYLE}}*/", STYLE)
        .replace("/*{{SCRIPT}}*/", &format!("{SEARCH}\n{COACH_SCRIPT}"))
}

/// What the page may load and run: its own inline style and script (by `nonce`), calls
/// to this server, nothing else; and it may not be framed.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; \
         connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_whole_and_carries_its_nonce() {
        let page = html("abc123");
        assert!(page.contains("<script nonce=\"abc123\">"));
        assert!(page.contains("<style nonce=\"abc123\">"));
        assert!(!page.contains("{{"), "a placeholder was left");
        assert!(page.contains("function selftest"), "the script is inline");
        // nothing from elsewhere: no external script, style or font
        for outside in ["src=\"http", "href=\"http", "@import", "url(http"] {
            assert!(!page.contains(outside), "{outside}");
        }
        assert!(content_security_policy("abc123").contains("'nonce-abc123'"));
    }
}
