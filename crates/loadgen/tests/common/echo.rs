//! A real HTTP/1.1 server that keeps every request it gets (method, path,
//! headers, body read by Content-Length) and answers `200 ok`, over plain
//! TCP or TLS (rustls, with a certificate made now by rcgen for
//! `localhost` and 127.0.0.1).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A running server; it lives until the process exits.
pub struct Echo {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub tls: bool,
}

impl Echo {
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{}", self.addr, path)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A self-signed certificate for localhost / 127.0.0.1, made now.
fn acceptor() -> tokio_rustls::TlsAcceptor {
    tokio_rustls::TlsAcceptor::from(tls_config())
}

/// A rustls server configuration with a self-signed certificate for
/// localhost / 127.0.0.1, made now.
pub fn tls_config() -> Arc<rustls::ServerConfig> {
    let key = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("rcgen makes a certificate");
    let cert = key.cert.der().clone();
    let private = rustls::pki_types::PrivateKeyDer::Pkcs8(key.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], private)
        .expect("a valid key pair");
    Arc::new(config)
}

/// Start the server on a free port, TLS when `tls`.
pub fn spawn(tls: bool) -> Echo {
    spawn_on(0, tls, true)
}

/// Start the server on `port` (0: any), keeping requests when `record`
/// (the benchmark keeps none: it only counts on the client side).
pub fn spawn_on(port: u16, tls: bool, record: bool) -> Echo {
    let std_listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let addr = std_listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    let acceptor = tls.then(acceptor);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = TcpListener::from_std(std_listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let keep = keep.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = tcp.set_nodelay(true);
                    let keep = record.then_some(keep);
                    match acceptor {
                        Some(a) => {
                            if let Ok(s) = a.accept(tcp).await {
                                connection(s, keep).await;
                            }
                        }
                        None => connection(tcp, keep).await,
                    }
                });
            }
        });
    });
    Echo { addr, seen, tls }
}

async fn connection<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    seen: Option<Arc<Mutex<Vec<Seen>>>>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let (head_len, mut req) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut r = httparse::Request::new(&mut headers);
            if let Ok(httparse::Status::Complete(n)) = r.parse(&buf) {
                let req = Seen {
                    method: r.method.unwrap_or("").to_string(),
                    path: r.path.unwrap_or("").to_string(),
                    headers: r
                        .headers
                        .iter()
                        .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into()))
                        .collect(),
                    body: Vec::new(),
                };
                break (n, req);
            }
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let want: usize = req
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_len + want {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        req.body = buf[head_len..head_len + want].to_vec();
        buf.drain(..head_len + want);
        let head = req.method == "HEAD";
        if let Some(seen) = &seen {
            seen.lock().unwrap().push(req);
        }
        let reply: &[u8] = if head {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        };
        if s.write_all(reply).await.is_err() || s.flush().await.is_err() {
            return;
        }
    }
}
