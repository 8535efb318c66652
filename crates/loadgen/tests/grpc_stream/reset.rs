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
    /// The reasons of the client's RST_STREAMs, in order.
    pub resets: Arc<Mutex<Vec<Reason>>>,
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
    let resets = Arc::new(Mutex::new(Vec::new()));
    let noted = resets.clone();
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
    Server { addr, resets }
}

async fn connection(
    tcp: tokio::net::TcpStream,
    n: u8,
    pause: Duration,
    resets: Arc<Mutex<Vec<Reason>>>,
) {
    let Ok(mut conn) = h2::server::handshake(tcp).await else {
        return;
    };
    while let Some(Ok((_req, mut respond))) = conn.accept().await {
        let head = http::Response::builder()
            .header("content-type", "application/grpc")
            .body(())
            .unwrap();
        let Ok(mut body) = respond.send_response(head, false) else {
            continue;
        };
        let resets = resets.clone();
        tokio::spawn(async move {
            for seq in 0..n {
                // A Tick with `seq` (field 1, varint), framed.
                let _ = body.send_data(Bytes::from(vec![0, 0, 0, 0, 2, 0x08, seq]), false);
            }
            let client = std::future::poll_fn(|cx| body.poll_reset(cx));
            tokio::select! {
                reason = client => resets.lock().unwrap().extend(reason.ok()),
                _ = tokio::time::sleep(pause) => body.send_reset(Reason::INTERNAL_ERROR),
            }
        });
    }
}
