//! Odd gRPC servers: each answers a call's head, pushes `n` numbered
//! messages, waits `pause`, then ends the stream as its [`End`] says
//! (a reset, no status, an oversize or compressed message): the `h2`
//! crate's server, as grpcio cannot be told to break the protocol. A
//! stream the client resets first is noted with its reason
//! ([`Seen::resets`]).

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

/// How a stream ends after its pause.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// RST_STREAM INTERNAL_ERROR.
    Reset,
    /// DATA with END_STREAM and no trailers: no `grpc-status`.
    NoStatus,
    /// A message prefix announcing 5 MiB (over gRPC's 4 MiB).
    Oversize,
    /// A message flagged compressed (none was asked for).
    Compressed,
}

impl End {
    fn write(self, body: &mut h2::SendStream<Bytes>) {
        let bytes = |b: Vec<u8>| Bytes::from(b);
        match self {
            End::Reset => body.send_reset(Reason::INTERNAL_ERROR),
            End::NoStatus => drop(body.send_data(Bytes::new(), true)),
            End::Oversize => drop(body.send_data(bytes(vec![0, 0, 0x50, 0, 0]), false)),
            End::Compressed => drop(body.send_data(bytes(vec![1, 0, 0, 0, 1, 0]), false)),
        }
    }
}

/// Serve on a free loopback port (h2c, prior knowledge).
pub fn spawn(n: u8, pause: Duration, end: End) -> Server {
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
                tokio::spawn(connection(tcp, (n, pause, end), noted.clone()));
            }
        });
    });
    Server { addr, seen }
}

async fn connection(tcp: tokio::net::TcpStream, script: (u8, Duration, End), seen: Arc<Seen>) {
    let (n, pause, end) = script;
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
                _ = tokio::time::sleep(pause) => end.write(&mut body),
            }
            // Held until the client is done with the stream.
            let _ = std::future::poll_fn(|cx| body.poll_reset(cx)).await;
        });
    }
}
