//! An error and the errors behind it on one line, for logs and messages: tonic's
//! transport errors say only "transport error" at the top ("connection refused" is
//! further down). Shared by the coordinator and the worker.

use std::error::Error;

/// `top` followed by the text of each error in `e`'s source chain (`e` itself not
/// included), each after ": ", leaving out a text that `top` or an earlier one already
/// contains.
pub fn with_sources(top: String, e: &(dyn Error + 'static)) -> String {
    let mut text = top;
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// `e` and every error behind it on one line.
pub fn error_chain(e: &(dyn Error + 'static)) -> String {
    with_sources(e.to_string(), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with the one below it.
    #[derive(Debug)]
    struct Layer {
        text: &'static str,
        below: Option<Box<Layer>>,
    }

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.text)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.below.as_deref().map(|b| b as &(dyn Error + 'static))
        }
    }

    fn chain(texts: &[&'static str]) -> Layer {
        texts
            .iter()
            .rev()
            .fold(None, |below, &text| {
                Some(Layer {
                    text,
                    below: below.map(Box::new),
                })
            })
            .expect("one layer at least")
    }

    #[test]
    fn the_chain_is_joined_and_repeats_left_out() {
        let e = chain(&["transport error", "tcp connect error", "connection refused"]);
        assert_eq!(
            error_chain(&e),
            "transport error: tcp connect error: connection refused"
        );
        // a source whose text the line holds already is not said twice
        let e = chain(&["transport error: connection refused", "connection refused"]);
        assert_eq!(error_chain(&e), "transport error: connection refused");
        assert_eq!(
            with_sources("call failed".into(), &chain(&["top", "why"])),
            "call failed: why"
        );
    }
}
