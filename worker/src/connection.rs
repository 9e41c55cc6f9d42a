//! The connection to a coordinator: the URL checked and turned into a lazily connected
//! gRPC client, TLS against a given CA or the webpki roots, keepalives, and the run's
//! token added to every call.

use std::time::Duration;

use gops_proto::v1::coordinator_client::CoordinatorClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use crate::error::ClientError;

/// Adds the run's token to every call.
#[derive(Clone)]
pub struct AddToken(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for AddToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

pub type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// Checks the form of a coordinator URL: `http://` or `https://`, a host, a port from 1 to
/// 65535, no path. What is wrong is said at once, rather than retried for minutes.
pub fn check_url(url: &str) -> Result<(), String> {
    let uri: tonic::codegen::http::Uri = url
        .parse()
        .map_err(|e| format!("not a URL ({e}); write it as http://HOST:PORT"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => {
            return Err(format!(
                "scheme {other}:// is not spoken; use http:// or https://"
            ));
        }
        None => return Err(format!("no scheme; write it as http://{url}")),
    }
    let authority = uri.authority().ok_or("no host")?;
    if authority.host().is_empty() {
        return Err("no host".into());
    }
    if authority.as_str().contains('@') {
        return Err(
            "user information in the URL is not used; give the token with --token-file".into(),
        );
    }
    let port = authority.as_str().rsplit_once(':').map(|(_, p)| p);
    // an IPv6 host without a port ends in ']'
    if let Some(port) = port.filter(|p| !p.ends_with(']')) {
        match port.parse::<u16>() {
            Ok(p) if p > 0 => {}
            _ => return Err(format!("port {port} is not between 1 and 65535")),
        }
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err("a coordinator URL has no path".into());
    }
    Ok(())
}

/// A client for `url` with `token`; connects lazily, reconnects as needed. An
/// `https://` URL is verified against the webpki roots.
pub fn connect(url: &str, token: Option<&str>) -> Result<Client, ClientError> {
    connect_with_ca(url, token, None)
}

/// [`connect`], trusting only `ca_pem` (PEM certificates) for an `https://` URL when it
/// is given; `ca_pem` with a URL that is not `https://` is refused.
pub fn connect_with_ca(
    url: &str,
    token: Option<&str>,
    ca_pem: Option<&[u8]>,
) -> Result<Client, ClientError> {
    let bad = |why: String| ClientError::Address(url.to_string(), why);
    check_url(url).map_err(bad)?;
    let endpoint = Endpoint::from_shared(url.to_string()).map_err(|e| bad(e.to_string()))?;
    let uri = endpoint.uri().clone();
    let https = uri.scheme_str() == Some("https");
    let endpoint = match (https, ca_pem) {
        (false, Some(_)) => {
            return Err(bad("a TLS CA is given but the URL is not https://".into()));
        }
        (false, None) => endpoint,
        (true, ca) => {
            // an IPv6 host comes bracketed in the URL, not in the certificate
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let tls = ClientTlsConfig::new()
                .domain_name(host)
                .timeout(Duration::from_secs(10));
            let tls = match ca {
                Some(pem) => tls.ca_certificate(Certificate::from_pem(pem)),
                None => tls.with_webpki_roots(),
            };
            endpoint
                .tls_config(tls)
                .map_err(|e| bad(format!("TLS set-up failed: {e}")))?
        }
    };
    let endpoint = endpoint
        .connect_timeout(Duration::from_secs(5))
        // a coordinator host that vanishes must surface as an error, not a hang
        .timeout(Duration::from_secs(600))
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true)
        .tcp_keepalive(Some(Duration::from_secs(30)))
        .tcp_nodelay(true);
    let token = token
        .map(|t| {
            format!("Bearer {t}")
                .parse()
                .map_err(|_| bad("token has characters not allowed in a header".into()))
        })
        .transpose()?;
    Ok(
        CoordinatorClient::with_interceptor(endpoint.connect_lazy(), AddToken(token))
            .max_decoding_message_size(gops_proto::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(gops_proto::MAX_MESSAGE_BYTES),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_coordinator_urls_are_refused_with_the_reason() {
        for good in [
            "http://127.0.0.1:7700",
            "https://coord.example.org:7700/",
            "http://[::1]:7700",
            "https://coord.example.org",
        ] {
            assert_eq!(check_url(good), Ok(()), "{good}");
        }
        for (bad, says) in [
            ("127.0.0.1:7710", "scheme"),
            ("foo", "scheme"),
            ("ftp://x:1", "ftp"),
            ("http://x:99999", "99999"),
            ("http://x:0", "port 0"),
            ("http://x:7700/gops", "path"),
            ("http://user:pw@x:7700", "token"),
            ("", "URL"),
        ] {
            let why = check_url(bad).expect_err(bad);
            assert!(why.contains(says), "{bad}: {why}");
        }
    }
}
