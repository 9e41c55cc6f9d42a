//! What the commands that serve or call over the network share: the tokens of a
//! `--token-file`, the refusal to serve a reachable address without one, what a client
//! of a coordinator presents (token, CA), and the async runtime they run on.

use std::path::Path;

use gops_coordinator::service::AccessTokens;
use tracing::warn;

use crate::failure::Failure;

/// The token in a file: its first line, trimmed; empty is refused.
pub fn read_token(path: Option<&Path>) -> Result<Option<String>, Failure> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read token file {}: {e}", path.display())))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(Failure::Usage(format!(
            "token file {} is empty",
            path.display()
        )));
    }
    Ok(Some(token))
}

/// The tokens a coordinator accepts, from `--token-file`: every line that is not empty
/// or a `#` comment, trimmed (one line: a shared token; several: one per worker).
pub fn read_tokens(path: Option<&Path>) -> Result<AccessTokens, Failure> {
    Ok(AccessTokens::of(token_lines(path)?))
}

/// The tokens of a `--token-file` (none without one): every line that is not empty or a
/// `#` comment, trimmed; a file with none, or with one twice, is refused.
pub fn token_lines(path: Option<&Path>) -> Result<Vec<String>, Failure> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read token file {}: {e}", path.display())))?;
    let tokens: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if tokens.is_empty() {
        return Err(Failure::Usage(format!(
            "token file {} holds no token",
            path.display()
        )));
    }
    let distinct: std::collections::HashSet<&String> = tokens.iter().collect();
    if distinct.len() != tokens.len() {
        return Err(Failure::Usage(format!(
            "token file {} lists a token twice",
            path.display()
        )));
    }
    Ok(tokens)
}

/// What a server reachable without a token would let anyone do, for [`check_exposure`].
pub struct Exposure {
    /// What anyone who reaches the address could do ("join the run or waste its work").
    pub risk: &'static str,
    /// How the token file is then used, after the command that makes one.
    pub token_use: &'static str,
    /// The warning logged when `--insecure` serves it anyway.
    pub warning: &'static str,
}

/// A coordinator's gRPC port.
pub const COORDINATOR_EXPOSURE: Exposure = Exposure {
    risk: "join the run or waste its work",
    token_use: "the same file for the workers",
    warning: "serving without a token (--insecure): anyone who reaches this address can join the run",
};

/// Refuses to serve an address other machines can reach with no token, unless the
/// operator said `--insecure`.
pub fn check_exposure(
    listen: std::net::SocketAddr,
    tokens: &AccessTokens,
    insecure: bool,
    exposure: &Exposure,
) -> Result<(), Failure> {
    if !tokens.is_empty() || listen.ip().is_loopback() {
        return Ok(());
    }
    if insecure {
        warn!(address = %listen, "{}", exposure.warning);
        return Ok(());
    }
    Err(Failure::Usage(format!(
        "--listen {listen} is reachable from other machines and no --token-file is given: anyone who reaches it could {}. Give --token-file FILE (e.g. `head -c 32 /dev/urandom | base64 > token`, {}), or --insecure to serve without one",
        exposure.risk, exposure.token_use
    )))
}

/// What a client of the coordinator (worker, remote status) presents: the token of
/// `--token-file` and the CA certificates of `--tls-ca`, both checked before any work.
pub fn client_credentials(
    token_file: Option<&Path>,
    tls_ca: Option<&Path>,
) -> Result<(Option<String>, Option<Vec<u8>>), Failure> {
    let token = read_token(token_file)?;
    let tls_ca = tls_ca.map(crate::tls::read_ca).transpose()?;
    Ok((token, tls_ca))
}

/// The multi-threaded async runtime of a command that serves or calls over the network.
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(format!("cannot start the async runtime: {e}")))
}
