//! What the commands that serve or call over the network share: what a client of a
//! coordinator presents (its token, its CA), and the async runtime they run on. Token
//! files and the exposure rule are `gops_http::token_files`; TLS files are
//! `gops_proto::tls_files`.

use std::path::Path;

use gops_http::token_files::client_token;

use crate::failure::Failure;

/// What a client of the coordinator (worker, remote status) presents: the token of
/// `--token-file` and the CA certificates of `--tls-ca`, both checked before any work.
pub fn client_credentials(
    token_file: Option<&Path>,
    tls_ca: Option<&Path>,
) -> Result<(Option<String>, Option<Vec<u8>>), Failure> {
    let token = client_token(token_file)?;
    let tls_ca = tls_ca
        .map(gops_proto::tls_files::read_ca)
        .transpose()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok((token, tls_ca))
}

/// The multi-threaded async runtime of a command that serves or calls over the network.
pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(format!("cannot start the async runtime: {e}")))
}
