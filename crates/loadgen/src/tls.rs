//! HTTPS: a rustls client (ring provider, TLS 1.2 and 1.3, ALPN
//! `http/1.1`, or `h2` alone with `--http2`) verifying against Mozilla's roots built into the binary, or
//! accepting any certificate with `--insecure` (signatures are still checked,
//! so the handshake is a real one and costs what it costs). One config per
//! attack: its session cache lets `--new-connection` resume sessions, as a
//! browser or vegeta would.
//!
//! [`Stream`] is what a connection reads and writes: plain TCP or TLS over it.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// Why TLS cannot be used against a target.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rustls refused its own configuration.
    #[error("cannot set up TLS: {0}")]
    Config(rustls::Error),
    /// The host is neither a DNS name nor an IP address.
    #[error("'{host}' is not a name TLS can verify: {why}")]
    Name {
        /// The host.
        host: String,
        /// Why.
        why: rustls::pki_types::InvalidDnsNameError,
    },
    /// No event loop for the handshake check.
    #[error("cannot build an event loop: {0}")]
    EventLoop(io::Error),
    /// The handshake was refused: a certificate, or a port without TLS.
    #[error("TLS handshake with {host} failed: {why}{}", advice(why))]
    Handshake {
        /// The host.
        host: String,
        /// What the handshake said.
        why: io::Error,
    },
}

/// The TLS side of an attack: connector and the name the server must prove.
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
}

impl Tls {
    /// A client for `host` (a DNS name or an IP address), offering
    /// HTTP/2 alone by ALPN when `http2` (a server that will not agree is
    /// refused before the run), else HTTP/1.1.
    pub fn new(host: &str, insecure: bool, http2: bool) -> Result<Tls, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?;
        let mut config = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            builder.with_root_certificates(roots).with_no_client_auth()
        };
        config.alpn_protocols = match http2 {
            true => vec![b"h2".to_vec()],
            false => vec![b"http/1.1".to_vec()],
        };
        let name = ServerName::try_from(host.to_string()).map_err(|why| TlsError::Name {
            host: host.to_string(),
            why,
        })?;
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            name,
        })
    }

    /// Handshake over an open TCP connection.
    pub async fn wrap(&self, tcp: TcpStream) -> io::Result<TlsStream<TcpStream>> {
        self.connector.connect(self.name.clone(), tcp).await
    }
}

/// `--insecure`: any certificate chain is accepted; handshake signatures are
/// verified with the provider's algorithms.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A connection's byte stream: plain TCP or TLS over TCP.
pub enum Stream {
    /// `http://`.
    Plain(TcpStream),
    /// `https://` (boxed: a TLS session is large beside a socket).
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Check, before the run, that a TLS handshake with `addr` succeeds: a
/// refused certificate would otherwise turn every request into a
/// `connect_other` error with no word on why. A target that cannot be
/// reached at all is left to the run, which counts that as data.
pub fn preflight(tls: &Tls, addr: std::net::SocketAddr, host: &str) -> Result<(), TlsError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(TlsError::EventLoop)?;
    let limit = std::time::Duration::from_secs(5);
    rt.block_on(async {
        let Ok(Ok(tcp)) = tokio::time::timeout(limit, TcpStream::connect(addr)).await else {
            return Ok(());
        };
        match tokio::time::timeout(limit, tls.wrap(tcp)).await {
            Ok(Err(why)) if why.kind() == io::ErrorKind::InvalidData => Err(TlsError::Handshake {
                host: host.to_string(),
                why,
            }),
            // A reset or a slow handshake is the target's behaviour: data.
            _ => Ok(()),
        }
    })
}

/// What to do about a failed handshake, by its cause: only a certificate
/// that does not verify is helped by `--insecure` (which, once given,
/// accepts any); bytes that are not TLS at all mean a plain-HTTP port.
fn advice(e: &io::Error) -> &'static str {
    match e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidCertificate(_)) => {
            " (for a self-signed certificate add --insecure)"
        }
        Some(rustls::Error::InvalidMessage(_)) => {
            " (the port does not speak TLS: for plain HTTP use http://)"
        }
        _ => "",
    }
}
