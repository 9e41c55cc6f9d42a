//! The TLS files of both sides (`--tls-cert`, `--tls-key` of a coordinator, `--tls-ca`
//! of its clients): PEM read and checked before any work, each error one line naming the
//! flag and the file. rustls alone would skip a broken CA certificate silently, and the
//! handshake would then fail with a puzzling "unknown issuer".

use std::path::Path;

use rustls::RootCertStore;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A TLS file that cannot be read or does not hold what its flag needs: bad input.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsFileError(String);

fn read(flag: &str, path: &Path) -> Result<Vec<u8>, TlsFileError> {
    std::fs::read(path)
        .map_err(|e| TlsFileError(format!("cannot read {flag} file {}: {e}", path.display())))
}

fn pem_problem(flag: &str, path: &Path, what: &str, e: pem::Error) -> TlsFileError {
    let why = match e {
        pem::Error::NoItemsFound => format!("no PEM {what} in it"),
        pem::Error::MissingSectionEnd { .. } => "a PEM section has no END line".into(),
        pem::Error::IllegalSectionStart { .. } => "a malformed PEM BEGIN line".into(),
        other => format!("not valid PEM: {other}"),
    };
    TlsFileError(format!("{flag} file {}: {why}", path.display()))
}

/// Checks that a PEM file holds at least one certificate and that each parses as X.509.
fn check_certificates(flag: &str, path: &Path, pem: &[u8]) -> Result<(), TlsFileError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_problem(flag, path, "certificate", e))?;
    if certs.is_empty() {
        return Err(pem_problem(
            flag,
            path,
            "certificate",
            pem::Error::NoItemsFound,
        ));
    }
    let mut roots = RootCertStore::empty();
    for (i, cert) in certs.into_iter().enumerate() {
        roots.add(cert).map_err(|e| {
            let why = match e {
                rustls::Error::InvalidCertificate(c) => format!("{c:?}"),
                other => other.to_string(),
            };
            TlsFileError(format!(
                "{flag} file {}: certificate {} is not usable ({why})",
                path.display(),
                i + 1
            ))
        })?;
    }
    Ok(())
}

/// The PEM of `--tls-ca`, as read, once it is known to hold usable certificates: the
/// certificates a client trusts.
pub fn read_ca(path: &Path) -> Result<Vec<u8>, TlsFileError> {
    let pem = read("--tls-ca", path)?;
    check_certificates("--tls-ca", path, &pem)?;
    Ok(pem)
}

/// The PEM of `--tls-cert` and of `--tls-key`, as read, once the one is known to hold
/// usable certificates and the other a private key.
pub fn read_identity(cert: &Path, key: &Path) -> Result<(Vec<u8>, Vec<u8>), TlsFileError> {
    let cert_pem = read("--tls-cert", cert)?;
    let key_pem = read("--tls-key", key)?;
    check_certificates("--tls-cert", cert, &cert_pem)?;
    PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| pem_problem("--tls-key", key, "private key", e))?;
    Ok((cert_pem, key_pem))
}
