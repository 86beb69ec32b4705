//! TLS to the PostgreSQL server, through rustls, read from the database
//! URL's parameters as libpq reads them: `sslmode=disable|prefer|require|
//! verify-ca|verify-full` (default `prefer`: TLS when the server offers it,
//! plain otherwise) and `sslrootcert=FILE` for a private certificate
//! authority (the system's roots otherwise). `prefer` and `require` encrypt
//! without checking the certificate unless `sslrootcert` names an
//! authority, when they check the chain as libpq does; `verify-ca` checks
//! the chain, `verify-full` the chain and the host name. `require` and
//! stricter refuse a server without TLS. [`Tls`] is the one connector every
//! connection shed makes to the server goes through (the pool, the
//! listener, the copy of `shed migrate --to`, a read's cancel); it offers
//! the server certificate's hash for SCRAM channel binding.
//!
//! tokio-postgres reads `sslmode` too but knows only disable, prefer and
//! require, so [`split`] takes both parameters out of the URL and leaves
//! tokio-postgres the rest.

use std::fmt;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use percent_encoding::percent_decode_str;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use sha2::{Digest, Sha256, Sha384, Sha512};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::Socket;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

/// How much TLS a connection asks of the server, as libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// The mode a URL names as `value`, as [`Display`](fmt::Display) writes it.
    fn parse(value: &str) -> Option<SslMode> {
        use SslMode::*;
        [Disable, Prefer, Require, VerifyCa, VerifyFull]
            .into_iter()
            .find(|mode| mode.to_string() == value)
    }

    /// What tokio-postgres is told: whether it asks for TLS, and whether
    /// a server without it is refused.
    pub(crate) fn for_tokio_postgres(self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode as Theirs;
        match self {
            SslMode::Disable => Theirs::Disable,
            SslMode::Prefer => Theirs::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => Theirs::Require,
        }
    }

    /// Whether a server without TLS is refused.
    fn demands_tls(self) -> bool {
        self.for_tokio_postgres() == tokio_postgres::config::SslMode::Require
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        })
    }
}

/// Which certificate authorities a checked certificate must chain to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The system's (`sslrootcert` unset).
    System,
    /// The certificates (PEM) of this file.
    File(PathBuf),
}

/// The URL's TLS parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    pub mode: SslMode,
    pub roots: Roots,
}

/// Takes `sslmode` and `sslrootcert` out of the query of `url`: the URL
/// tokio-postgres is given, and the settings. A refusal says why in a
/// clause, for the URL's sentence.
pub(crate) fn split(url: &str) -> Result<(String, Settings), String> {
    let mut settings = Settings {
        mode: SslMode::Prefer,
        roots: Roots::System,
    };
    // The query starts at the first `?` after the credentials, as
    // tokio-postgres finds it (a password may hold a `?`).
    let after_credentials = url.find('@').map_or(0, |at| at + 1);
    let Some(question) = url[after_credentials..].find('?') else {
        return Ok((url.to_string(), settings));
    };
    let (base, query) = url.split_at(after_credentials + question);
    let mut kept = Vec::new();
    for pair in query[1..].split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
        match decoded(key).as_str() {
            "sslmode" => {
                let value = decoded(value);
                settings.mode = SslMode::parse(&value).ok_or_else(|| {
                    format!(
                        "sslmode={value} is not a mode shed knows: give disable, prefer, require, verify-ca or verify-full"
                    )
                })?;
            }
            "sslrootcert" => {
                let value = decoded(value);
                if value.is_empty() {
                    return Err("sslrootcert is empty: give the path of a CA certificate (PEM), or leave it out for the system's roots".into());
                }
                settings.roots = Roots::File(PathBuf::from(value));
            }
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, settings))
}

/// The connector of every connection to the server: rustls configured for
/// the URL's settings, and its mode for the sentences of a failure.
#[derive(Clone)]
pub(crate) struct Tls {
    config: Arc<ClientConfig>,
    mode: SslMode,
}

impl Tls {
    /// The connector for `settings`; refused with a clause when the root
    /// certificates it needs cannot be read.
    pub(crate) fn new(settings: &Settings) -> Result<Tls, String> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let checks_chain = settings.mode == SslMode::VerifyCa
            || settings.mode == SslMode::VerifyFull
            || (settings.roots != Roots::System && settings.mode != SslMode::Disable);
        let chain = if checks_chain {
            let roots = Arc::new(root_store(&settings.roots)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| format!("the root certificates cannot check a server: {e}"))?;
            Some(webpki)
        } else {
            None
        };
        let verifier: Arc<dyn ServerCertVerifier> = match chain {
            Some(webpki) if settings.mode == SslMode::VerifyFull => webpki,
            chain => Arc::new(Lenient {
                chain,
                algorithms: provider.signature_verification_algorithms,
            }),
        };
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS cannot be set up: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        // What libpq sends, and what a server taking direct TLS requires.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            mode: settings.mode,
        })
    }

    /// How much TLS the connections ask for.
    pub(crate) fn mode(&self) -> SslMode {
        self.mode
    }
}

/// The root certificates of `roots`.
fn root_store(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let shown = path.display();
            let certificates = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("sslrootcert={shown} cannot be read ({e}) — give the path of the CA certificate (PEM) that signed the server's"))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("sslrootcert={shown} is not a PEM certificate file ({e})"))?;
            let (added, _) = store.add_parsable_certificates(certificates);
            if added == 0 {
                return Err(format!(
                    "sslrootcert={shown} holds no certificate — give the path of the CA certificate (PEM) that signed the server's"
                ));
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err("this machine has no root certificates to check the server's (install ca-certificates), or name its CA with sslrootcert=FILE".into());
            }
        }
    }
    Ok(store)
}

/// The sentence for a connection TLS refused, or `None` when it failed
/// for another reason: `address` is the server's `host:port`.
pub(crate) fn refusal(e: &tokio_postgres::Error, address: &str, mode: SslMode) -> Option<String> {
    let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(error) = cause {
        if let Some(failed) = error.downcast_ref::<Failed>() {
            return Some(failed.sentence(address, host));
        }
        // tokio-postgres's own words when the server answers that it has no TLS.
        if mode.demands_tls() && error.to_string() == "server does not support TLS" {
            return Some(format!(
                "the database server at {address} does not offer TLS, and sslmode={mode} asks for it — turn TLS on at the server (ssl = on, with ssl_cert_file and ssl_key_file), or set sslmode=prefer in the URL on a network you trust"
            ));
        }
        cause = error.source();
    }
    None
}

/// Why a TLS connection failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failed {
    #[error("{0} is not a host name TLS can check")]
    Name(String),
    #[error("the TLS handshake failed: {0}")]
    Handshake(io::Error),
}

impl Failed {
    fn sentence(&self, address: &str, host: &str) -> String {
        let io = match self {
            Failed::Name(name) => {
                return format!(
                    "the database server's host {name} is not a name TLS can check — name the server by a DNS name or an IP address, or set sslmode=disable"
                );
            }
            Failed::Handshake(io) => io,
        };
        let Some(rustls::Error::InvalidCertificate(why)) =
            io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>())
        else {
            return format!(
                "TLS with the database server at {address} failed ({io}) — check the server's TLS settings, or set sslmode=disable in the URL on a network you trust"
            );
        };
        match why {
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!(
                    "the certificate of the database server at {address} does not name {host}, and sslmode=verify-full checks the name — connect by a name the certificate holds, or set sslmode=verify-ca to check only who signed it"
                )
            }
            CertificateError::UnknownIssuer => format!(
                "the certificate of the database server at {address} is not signed by an authority shed trusts — name the server's CA certificate with sslrootcert=FILE in the URL, or set sslmode=require to encrypt without checking"
            ),
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => format!(
                "the certificate of the database server at {address} has expired — renew the server's certificate"
            ),
            other => format!(
                "the certificate of the database server at {address} was refused ({other:?}) — check the server's certificate and sslrootcert"
            ),
        }
    }
}

impl MakeTlsConnect<Socket> for Tls {
    type Stream = TlsStream;
    type TlsConnect = Connect;
    type Error = Failed;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Connect, Failed> {
        let name = ServerName::try_from(domain.to_string())
            .map_err(|_| Failed::Name(domain.to_string()))?;
        Ok(Connect {
            connector: tokio_rustls::TlsConnector::from(self.config.clone()),
            name,
        })
    }
}

/// One connection's TLS handshake, to the server of one name.
pub(crate) struct Connect {
    connector: tokio_rustls::TlsConnector,
    name: ServerName<'static>,
}

impl TlsConnect<Socket> for Connect {
    type Stream = TlsStream;
    type Error = Failed;
    type Future = Pin<Box<dyn Future<Output = Result<TlsStream, Failed>> + Send>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let stream = self
                .connector
                .connect(self.name, stream)
                .await
                .map_err(Failed::Handshake)?;
            Ok(TlsStream(stream))
        })
    }
}

/// A connection to the server over TLS.
pub(crate) struct TlsStream(tokio_rustls::client::TlsStream<Socket>);

impl tokio_postgres::tls::TlsStream for TlsStream {
    /// `tls-server-end-point` (RFC 5929): the server certificate's hash,
    /// by its signature's hash algorithm (SHA-256 for MD5 and SHA-1), so
    /// SCRAM proves the password to the server that holds the certificate.
    fn channel_binding(&self) -> ChannelBinding {
        let Some(certificate) = self
            .0
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|c| c.first())
        else {
            return ChannelBinding::none();
        };
        match end_point(certificate) {
            Some(hash) => ChannelBinding::tls_server_end_point(hash),
            None => ChannelBinding::none(),
        }
    }
}

/// The `tls-server-end-point` hash of `certificate`, or `None` for a
/// signature algorithm the RFC gives no hash for (Ed25519).
fn end_point(certificate: &CertificateDer<'_>) -> Option<Vec<u8>> {
    use x509_parser::oid_registry as oid;
    let (_, parsed) = x509_parser::parse_x509_certificate(certificate).ok()?;
    let algorithm = &parsed.signature_algorithm.algorithm;
    let by = |list: &[&x509_parser::der_parser::oid::Oid<'_>]| list.contains(&algorithm);
    if by(&[
        &oid::OID_PKCS1_SHA384WITHRSA,
        &oid::OID_SIG_ECDSA_WITH_SHA384,
    ]) {
        Some(Sha384::digest(certificate).to_vec())
    } else if by(&[
        &oid::OID_PKCS1_SHA512WITHRSA,
        &oid::OID_SIG_ECDSA_WITH_SHA512,
    ]) {
        Some(Sha512::digest(certificate).to_vec())
    } else if by(&[
        &oid::OID_PKCS1_SHA256WITHRSA,
        &oid::OID_SIG_ECDSA_WITH_SHA256,
        &oid::OID_PKCS1_SHA1WITHRSA,
        &oid::OID_PKCS1_MD5WITHRSAENC,
        &oid::OID_SIG_ECDSA_WITH_SHA224,
    ]) {
        Some(Sha256::digest(certificate).to_vec())
    } else {
        None
    }
}

impl AsyncRead for TlsStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// The check of every connection's certificate short of `verify-full`. With
/// no `chain` (`prefer` and `require` without `sslrootcert`, as libpq) the
/// connection is encrypted and its handshake signed by the certificate's
/// key, but whose certificate it is goes unchecked. With one (`verify-ca`,
/// and `prefer` or `require` with `sslrootcert`) the chain must lead to a
/// trusted authority, whatever host name the certificate holds: rustls
/// checks the name only after the chain, so a refusal for the name alone
/// means the chain held.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            checked => checked,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_parameters_are_taken_out_of_the_url_and_the_rest_kept() {
        let (url, settings) = split(
            "postgres://u:p?w@db.example:5432/shed?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(
            url,
            "postgres://u:p?w@db.example:5432/shed?application_name=x"
        );
        assert_eq!(
            settings,
            Settings {
                mode: SslMode::VerifyFull,
                roots: Roots::File("/etc/ca.pem".into())
            }
        );
        let (url, settings) = split("postgres://u@h/d").unwrap();
        assert_eq!(url, "postgres://u@h/d");
        assert_eq!(settings.mode, SslMode::Prefer);
        assert_eq!(settings.roots, Roots::System);
        let (url, _) = split("postgres://u@h/d?sslmode=disable").unwrap();
        assert_eq!(url, "postgres://u@h/d");
    }

    #[test]
    fn an_unknown_sslmode_is_refused_naming_the_modes() {
        let why = split("postgres://u@h/d?sslmode=allow").unwrap_err();
        assert!(
            why.contains("sslmode=allow") && why.contains("verify-full"),
            "{why}"
        );
    }
}
