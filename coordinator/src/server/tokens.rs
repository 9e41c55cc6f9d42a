//! Who may call the coordinator: the tokens it accepts (none, one shared, one per
//! worker), and the interceptor that checks every call's token, marks the call with the
//! per-worker [`Credential`], and tells the connection it may stay open
//! ([`crate::server::admission`]).

use std::sync::Arc;

use gops_proto::ids::constant_time_eq;
use tonic::{Request, Status};

use crate::cluster::registry::Credential;
use crate::server::admission::ConnInfo;

/// The tokens a coordinator accepts: none (an open coordinator), one shared by every
/// worker, or one per worker. With one per worker, the token a worker presented is its
/// [`Credential`], and rejections count against it across reconnects.
#[derive(Clone, Debug, Default)]
pub struct AccessTokens {
    /// The `authorization` value of each token (`Bearer <token>`), made once rather than
    /// on every call.
    expected: Vec<String>,
}

impl AccessTokens {
    /// No token: every caller is let in.
    pub fn none() -> AccessTokens {
        AccessTokens::default()
    }

    /// One token shared by all.
    pub fn shared(token: String) -> AccessTokens {
        AccessTokens::of(vec![token])
    }

    /// Several tokens (one per worker when more than one).
    pub fn of(tokens: Vec<String>) -> AccessTokens {
        AccessTokens {
            expected: tokens.iter().map(|t| format!("Bearer {t}")).collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.expected.is_empty()
    }

    /// Whether `given` (the whole `authorization` value) presents an accepted token, or
    /// no token is needed.
    pub fn admits(&self, given: &[u8]) -> bool {
        self.is_empty() || self.matching(given).is_some()
    }

    /// Whether `token` itself (not an `authorization` value: a password or a query
    /// parameter) is an accepted token, or no token is needed. Constant time, as
    /// [`AccessTokens::admits`].
    pub fn admits_token(&self, token: &[u8]) -> bool {
        self.admits(&[b"Bearer ".as_slice(), token].concat())
    }

    /// The index of the token `given` (the whole `authorization` value) presents.
    fn matching(&self, given: &[u8]) -> Option<usize> {
        // every token is compared, so the time does not say which one matched
        let mut found = None;
        for (i, expected) in self.expected.iter().enumerate() {
            if constant_time_eq(given, expected.as_bytes()) {
                found = Some(i);
            }
        }
        found
    }
}

/// Refuses every call without `authorization: Bearer <token>` of an accepted token, when
/// tokens are set; marks the call with its [`Credential`] when there is one per worker.
#[derive(Clone)]
pub struct TokenCheck {
    tokens: Arc<AccessTokens>,
}

impl TokenCheck {
    pub fn new(tokens: AccessTokens) -> Self {
        TokenCheck {
            tokens: Arc::new(tokens),
        }
    }
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        let admitted = |request: Request<()>| {
            // the connection carried a call that passed: it may stay open
            if let Some(connection) = request.extensions().get::<ConnInfo>() {
                connection.mark_authenticated();
            }
            Ok(request)
        };
        if self.tokens.is_empty() {
            return admitted(request);
        }
        let given = request
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        match self.tokens.matching(given) {
            Some(i) => {
                if self.tokens.expected.len() > 1 {
                    request.extensions_mut().insert(Credential(i as u32));
                }
                admitted(request)
            }
            None => Err(Status::unauthenticated("missing or wrong token")),
        }
    }
}
