//! The access tokens of a `--token-file`, as every `gops` server (the coordinator, the
//! explorer) and client (a worker, `gops status --coordinator`) reads them, and the rule
//! that a server other machines can reach needs one: a server's file holds one token a
//! line (`#` comments and empty lines skipped, none twice); a client's, its token on
//! the first line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use tracing::warn;

/// A token file that cannot be used, or a server that would be open to anyone: bad
/// input, found before any work.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("cannot read token file {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("token file {} is empty", .0.display())]
    Empty(PathBuf),
    #[error("token file {} holds no token", .0.display())]
    NoToken(PathBuf),
    #[error("token file {} lists a token twice", .0.display())]
    Twice(PathBuf),
    #[error(
        "--listen {listen} is reachable from other machines and no --token-file is given: anyone who reaches it could {risk}. Give --token-file FILE (e.g. `head -c 32 /dev/urandom | base64 > token`, {token_use}), or --insecure to serve without one"
    )]
    Exposed {
        listen: SocketAddr,
        risk: &'static str,
        token_use: &'static str,
    },
}

fn read(path: &Path) -> Result<String, TokenFileError> {
    std::fs::read_to_string(path).map_err(|source| TokenFileError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// A client's token (none without a file): the file's first line, trimmed; empty is
/// refused.
pub fn client_token(path: Option<&Path>) -> Result<Option<String>, TokenFileError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let token = read(path)?.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(TokenFileError::Empty(path.to_path_buf()));
    }
    Ok(Some(token))
}

/// A server's tokens (none without a file): every line that is not empty or a `#`
/// comment, trimmed; a file with none, or with one twice, is refused.
pub fn server_tokens(path: Option<&Path>) -> Result<Vec<String>, TokenFileError> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let tokens: Vec<String> = read(path)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if tokens.is_empty() {
        return Err(TokenFileError::NoToken(path.to_path_buf()));
    }
    let distinct: std::collections::HashSet<&String> = tokens.iter().collect();
    if distinct.len() != tokens.len() {
        return Err(TokenFileError::Twice(path.to_path_buf()));
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

/// Refuses to serve an address other machines can reach with no token, unless the
/// operator said `insecure` (then it warns).
pub fn check_exposure(
    listen: SocketAddr,
    has_tokens: bool,
    insecure: bool,
    exposure: &Exposure,
) -> Result<(), TokenFileError> {
    if has_tokens || listen.ip().is_loopback() {
        return Ok(());
    }
    if insecure {
        warn!(address = %listen, "{}", exposure.warning);
        return Ok(());
    }
    Err(TokenFileError::Exposed {
        listen,
        risk: exposure.risk,
        token_use: exposure.token_use,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: Exposure = Exposure {
        risk: "read it",
        token_use: "the same file",
        warning: "open",
    };

    #[test]
    fn a_server_file_holds_one_token_a_line_and_none_twice() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let good = file("good", "# the workers\n a1 \n\nb2\n");
        assert_eq!(server_tokens(Some(&good)).unwrap(), ["a1", "b2"]);
        assert_eq!(
            client_token(Some(&good)).unwrap(),
            Some("# the workers".into())
        );
        let twice = file("twice", "a1\na1\n");
        assert!(matches!(
            server_tokens(Some(&twice)),
            Err(TokenFileError::Twice(_))
        ));
        let none = file("none", "# nothing\n\n");
        assert!(matches!(
            server_tokens(Some(&none)),
            Err(TokenFileError::NoToken(_))
        ));
        let empty = file("empty", "  \nsecond\n");
        assert!(matches!(
            client_token(Some(&empty)),
            Err(TokenFileError::Empty(_))
        ));
        let missing = dir.path().join("missing");
        let e = client_token(Some(&missing)).unwrap_err();
        assert!(e.to_string().starts_with("cannot read token file"), "{e}");
        assert_eq!(server_tokens(None).unwrap(), Vec::<String>::new());
        assert_eq!(client_token(None).unwrap(), None);
    }

    #[test]
    fn only_a_reachable_address_without_a_token_is_refused() {
        let loopback: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let reachable: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(check_exposure(loopback, false, false, &OPEN).is_ok());
        assert!(check_exposure(reachable, true, false, &OPEN).is_ok());
        assert!(check_exposure(reachable, false, true, &OPEN).is_ok());
        let refused = check_exposure(reachable, false, false, &OPEN).unwrap_err();
        assert!(refused.to_string().contains("could read it"), "{refused}");
    }
}
