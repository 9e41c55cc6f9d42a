//! The connection to a coordinator: the URL checked and turned into a lazily connected
//! gRPC client, TLS against a given CA or the webpki roots, keepalives, and the run's
//! token added to every call.

use std::time::Duration;

use gops_proto::v1::coordinator_client::CoordinatorClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use crate::client::ClientError;

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
