//! TLS of the gateway's `https://` upstreams: the HTTP client ([`http_client`]) that rmcp's
//! streamable-HTTP transport uses, on rustls with the `ring` provider.
//!
//! The trusted roots are the platform's (read once from the system's certificate store by
//! `rustls-native-certs`: `/etc/ssl/certs` and the like, so a CA the administrator added is
//! trusted and a removed one is not), or, for an upstream with a CA file (`--upstream-ca
//! FILE`, a server's `"ca"`), the certificates of that PEM file alone (as `curl --cacert`).
//! Certificates are checked by rustls' WebPKI verifier (chain, validity dates, the URL's host
//! name); there is no switch to skip that. A verification failure is recorded in the
//! upstream's fault slot as it happens, so that the start or call that failed names the TLS
//! reason rather than the HTTP client's "error sending request". Redirects are followed only
//! within the same scheme, host and port: an `https://` upstream is never reached over
//! plain HTTP.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// Where a TLS failure of an upstream is recorded (shared with the upstream's fault slot).
pub type Slot = Arc<Mutex<Option<String>>>;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file (a private CA, `--upstream-ca`): every `CERTIFICATE`
/// section, at least one, each usable as a trust anchor.
pub fn read_ca_file(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("the CA file `{shown}`: {e}"))?;
    let mut store = RootCertStore::empty();
    for (i, cert) in CertificateDer::pem_slice_iter(&bytes).enumerate() {
        let cert = cert.map_err(|e| {
            format!(
                "the CA file `{shown}`: certificate {} is not valid PEM ({e})",
                i + 1
            )
        })?;
        store.add(cert).map_err(|e| {
            format!(
                "the CA file `{shown}`: certificate {} cannot be a trusted root ({e})",
                i + 1
            )
        })?;
    }
    if store.is_empty() {
        return Err(format!(
            "the CA file `{shown}` holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)"
        ));
    }
    Ok(store)
}

/// The platform's trusted roots, read once per process.
fn platform_roots() -> Result<Arc<RootCertStore>, String> {
    static ROOTS: OnceLock<Result<Arc<RootCertStore>, String>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut store = RootCertStore::empty();
            let (_, _unusable) = store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                let why = found
                    .errors
                    .first()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default();
                return Err(format!(
                    "no trusted root certificate was found on this system{why}; give the upstream's CA with --upstream-ca FILE or the server's \"ca\""
                ));
            }
            Ok(Arc::new(store))
        })
        .clone()
}

/// The WebPKI verifier, recording each failure in `slot` before it fails the handshake.
#[derive(Debug)]
struct Recording {
    inner: Arc<WebPkiServerVerifier>,
    slot: Slot,
}

/// The TLS reason of a refused certificate, in words.
fn describe(e: &rustls::Error, host: &ServerName<'_>) -> String {
    let host = host.to_str();
    let why = match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "its certificate is not signed by a trusted certificate authority (unknown issuer; for a private CA give --upstream-ca FILE or the server's \"ca\")".to_string()
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!("its certificate is not valid for the host `{host}` ({e})"),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => format!("its certificate has expired ({e})"),
        other => other.to_string(),
    };
    format!("the TLS handshake with `{host}` failed: {why}; nothing was sent to it")
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let r = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        if let Err(e) = &r {
            *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(describe(e, server_name));
        }
        r
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The rustls configuration of an https upstream: the roots of `ca` (a PEM file) or the
/// platform's, WebPKI verification recording failures in `slot`, HTTP/1.1 (the transport
/// rmcp's client speaks).
pub fn client_config(ca: Option<&Path>, slot: Slot) -> Result<rustls::ClientConfig, String> {
    let roots = match ca {
        Some(p) => Arc::new(read_ca_file(p)?),
        None => platform_roots()?,
    };
    let provider = provider();
    let inner = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
        .build()
        .map_err(|e| format!("the TLS verifier could not be built ({e})"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("the TLS configuration could not be built ({e})"))?
        .dangerous()
        // Not a bypass: the verifier is rustls' own WebPKI verifier, wrapped to record why
        // it refused a certificate.
        .with_custom_certificate_verifier(Arc::new(Recording { inner, slot }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The HTTP client of the upstream at `url`: for `https://`, TLS as [`client_config`]; for
/// `http://`, no TLS. Redirects stay on the URL's scheme, host and port.
pub fn http_client(url: &str, ca: Option<&Path>, slot: Slot) -> Result<reqwest::Client, String> {
    // reqwest (built without a default provider) would panic when it builds a TLS
    // configuration of its own with no process default: make `ring` the default. A provider
    // already installed is kept.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt.previous().first().is_some_and(|first| {
                first.scheme() == attempt.url().scheme()
                    && first.host_str() == attempt.url().host_str()
                    && first.port_or_known_default() == attempt.url().port_or_known_default()
            });
            if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else if same_origin {
                attempt.follow()
            } else {
                let to = attempt.url().to_string();
                attempt.error(format!(
                    "a redirect to another scheme, host or port (`{to}`) is not followed"
                ))
            }
        }));
    if url.starts_with("https://") {
        builder = builder.tls_backend_preconfigured(client_config(ca, slot)?);
    }
    builder
        .build()
        .map_err(|e| format!("the HTTP client could not be built ({e})"))
}

/// `e` and its sources, joined by `: ` (the HTTP client's errors say the useful part in a
/// source: "error sending request" → "client error (Connect)" → the reason). rmcp's
/// `StreamableHttpError::Client` does not chain the HTTP client's error: the chain goes on
/// through it.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut out = String::new();
    let mut cur = Some(e);
    while let Some(s) = cur {
        let m = s.to_string();
        if !out.contains(&m) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&m);
        }
        cur = match s.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => s.source(),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_is_missing_empty_or_not_a_certificate_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = read_ca_file(&missing).unwrap_err();
        assert!(
            e.starts_with(&format!("the CA file `{}`: ", missing.display())),
            "{e}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        assert!(
            read_ca_file(&empty)
                .unwrap_err()
                .contains("holds no PEM certificate"),
            "{}",
            read_ca_file(&empty).unwrap_err()
        );
        let garbage = dir.path().join("garbage.pem");
        std::fs::write(
            &garbage,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = read_ca_file(&garbage).unwrap_err();
        assert!(e.contains("certificate 1 cannot be a trusted root"), "{e}");
    }

    #[test]
    fn an_https_client_with_a_bad_ca_file_is_not_built() {
        let slot = Slot::default();
        let e = http_client(
            "https://127.0.0.1:1/mcp",
            Some(Path::new("/nonexistent/ca.pem")),
            slot,
        )
        .unwrap_err();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1
                .as_deref()
                .map(|l| l as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn the_chain_of_an_error_names_its_sources_once() {
        let e = Layer(
            "error sending request",
            Some(Box::new(Layer(
                "client error (Connect)",
                Some(Box::new(Layer(
                    "client error (Connect)",
                    Some(Box::new(Layer(
                        "invalid peer certificate: UnknownIssuer",
                        None,
                    ))),
                ))),
            ))),
        );
        assert_eq!(
            error_chain(&e),
            "error sending request: client error (Connect): invalid peer certificate: UnknownIssuer"
        );
    }
}
