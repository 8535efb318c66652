//! A gRPC server that answers each call's head, pushes `n` numbered
//! messages, waits `pause`, then resets the stream (RST_STREAM
//! INTERNAL_ERROR): the `h2` crate's server, as grpcio cannot be told to
//! reset a stream. A stream the client resets first is noted with its
//! reason ([`Server::resets`]).

use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use h2::Reason;

/// A running server (lives until the test process exits).
pub struct Server {
    pub addr: SocketAddr,
    /// What the server saw of its clients.
    pub seen: Arc<Seen>,
}

/// What the server saw, in order.
#[derive(Default)]
pub struct Seen {
    /// The reasons of the client's RST_STREAMs.
    pub resets: Mutex<Vec<Reason>>,
    /// Each call's `x-tenant` metadata.
    pub tenants: Mutex<Vec<String>>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("grpc://{}", self.addr)
    }
}

/// Serve on a free loopback port (h2c, prior knowledge).
pub fn spawn(n: u8, pause: Duration) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let seen = Arc::new(Seen::default());
    let noted = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(connection(tcp, n, pause, noted.clone()));
            }
        });
    });
    Server { addr, seen }
}

async fn connection(tcp: tokio::net::TcpStream, n: u8, pause: Duration, seen: Arc<Seen>) {
    let Ok(mut conn) = h2::server::handshake(tcp).await else {
        return;
    };
    while let Some(Ok((req, mut respond))) = conn.accept().await {
        let tenant = req.headers().get("x-tenant").and_then(|v| v.to_str().ok());
        seen.tenants
            .lock()
            .unwrap()
            .extend(tenant.map(str::to_string));
        let head = http::Response::builder()
            .header("content-type", "application/grpc")
            .body(())
            .unwrap();
        let Ok(mut body) = respond.send_response(head, false) else {
            continue;
        };
        let seen = seen.clone();
        tokio::spawn(async move {
            for seq in 0..n {
                // A Tick with `seq` (field 1, varint), framed.
                let _ = body.send_data(Bytes::from(vec![0, 0, 0, 0, 2, 0x08, seq]), false);
            }
            let client = std::future::poll_fn(|cx| body.poll_reset(cx));
            tokio::select! {
                reason = client => seen.resets.lock().unwrap().extend(reason.ok()),
                _ = tokio::time::sleep(pause) => body.send_reset(Reason::INTERNAL_ERROR),
            }
        });
    }
}
