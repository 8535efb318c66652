//! HTTP/2 connections on a generator thread: each carries up to
//! `--streams` requests at once, shared by that many workers (worker `k`
//! of a thread on connection `k / streams`, so a connection fills before
//! the next one opens). A connection is opened by the first worker that
//! needs it (the others wait for that one connect), driven by its own
//! task, and forgotten when it ends (GOAWAY, reset, error): the next
//! request opens a new one.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use iolab_model::protocol::ProtocolSummary;
use tokio::sync::watch;

use super::watch::{Seen, Watched};
use crate::dial::Dial;
use crate::recorder::ErrorClass;
use crate::tls::{Stream, Tls};

/// An HTTP/2 connection's driver, its server's bytes watched.
pub type Driver = h2::client::Connection<Watched<Stream>, Bytes>;

/// How long a new connection waits for the answer to its PING (and so
/// for the server's SETTINGS, which come before it) before it is used
/// anyway: a server that never answers PING still serves (issue 49,
/// finding 1), and its first streams may then meet its stream limit late.
pub const PING_WAIT: Duration = Duration::from_secs(1);

/// Open a TCP connection (from `source` when given), TLS with ALPN `h2`
/// when `tls` is given, and make it an HTTP/2 connection whose server
/// side is watched ([`Seen`]).
pub async fn open(
    addr: SocketAddr,
    source: Option<std::net::IpAddr>,
    tls: Option<&Tls>,
) -> Result<(SendRequest<Bytes>, Driver, Arc<Seen>), ErrorClass> {
    let stream = crate::http::open_stream(addr, source, tls).await?;
    if let Stream::Tls(s) = &stream {
        if s.get_ref().1.alpn_protocol() != Some(b"h2") {
            // The server would not speak HTTP/2 on this connection.
            return Err(ErrorClass::ConnectOther);
        }
    }
    let (stream, seen) = Watched::new(stream);
    let (send, conn) = h2::client::Builder::new()
        // Answers are read and dropped at once: a large window keeps
        // flow control from pacing them (h2load opens 1 GiB windows too).
        .initial_window_size(1 << 30)
        .initial_connection_window_size(1 << 30)
        // A head is at most 1 MiB, as over HTTP/1.1 (h2's default: 16 MiB).
        .max_header_list_size(crate::response::MAX_HEAD as u32)
        .handshake(stream)
        .await
        .map_err(|e| super::classify::class(&e))?;
    Ok((send, conn, seen))
}

/// A future that waits, at most [`PING_WAIT`], for the answer to a PING
/// on `conn`: the server's SETTINGS have come by then.
pub fn settle(conn: &mut Driver) -> impl std::future::Future<Output = ()> {
    let pings = conn.ping_pong();
    async move {
        if let Some(mut pings) = pings {
            let _ = tokio::time::timeout(PING_WAIT, pings.ping(h2::Ping::opaque())).await;
        }
    }
}

/// The connection now held: its sender, what its server showed, and
/// whether its start is settled (see [`settle`]).
#[derive(Clone)]
pub struct Live {
    pub send: SendRequest<Bytes>,
    pub seen: Arc<Seen>,
    /// Which connection of this share it is (see [`Shared::forget`]).
    pub generation: u64,
    settled: watch::Receiver<bool>,
}

/// One connection, shared by the workers assigned to it.
#[derive(Default)]
pub struct Shared {
    live: RefCell<Option<Live>>,
    /// Held while a worker opens the connection, so its peers wait for it.
    connecting: tokio::sync::Mutex<()>,
    /// Bumped on each new connection: a driver that ends forgets only its own.
    generation: Cell<u64>,
    /// The server's stream limit has been read on this connection.
    limit_seen: Cell<bool>,
    stats: Rc<Stats>,
}

/// What one thread's connections saw, for the run's [`ProtocolSummary`].
#[derive(Default)]
pub struct Stats {
    opened: Cell<u64>,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS met.
    max_streams: Cell<Option<u32>>,
}

impl Shared {
    /// The connection, opened now if there is none, once its start has
    /// settled; a SETTINGS value the client refused is a `protocol_error`
    /// (nothing was written).
    pub async fn sender(self: &Rc<Self>, dial: &Dial) -> Result<Live, ErrorClass> {
        let held = self.live.borrow().clone();
        let live = match held {
            Some(live) => live,
            None => {
                let _one = self.connecting.lock().await;
                let held = self.live.borrow().clone();
                match held {
                    Some(live) => live,
                    None => self.connect(dial).await?,
                }
            }
        };
        let mut settled = live.settled.clone();
        // Ends when settled, or when the connection's tasks are gone.
        let _ = settled.wait_for(|s| *s).await;
        if let Some(fault) = live.seen.fault() {
            return Err(ErrorClass::ProtocolError(fault.code()));
        }
        Ok(live)
    }

    /// Open a connection, drive it and settle it on tasks of its own (so a
    /// request that times out meanwhile leaves it to the next), and hold it.
    async fn connect(self: &Rc<Self>, dial: &Dial) -> Result<Live, ErrorClass> {
        let (send, mut conn, seen) =
            open(dial.addr, dial.sources.pick(), dial.tls.as_ref()).await?;
        let settling = settle(&mut conn);
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        self.limit_seen.set(false);
        self.stats.opened.set(self.stats.opened.get() + 1);
        let me: Weak<Shared> = Rc::downgrade(self);
        tokio::task::spawn_local(async move {
            let _ = conn.await;
            if let Some(me) = me.upgrade() {
                me.forget(generation);
            }
        });
        // The server's SETTINGS (its stream limit) come before its answer
        // to a PING: streams opened before them may be refused.
        let (done, settled) = watch::channel(false);
        tokio::task::spawn_local(async move {
            settling.await;
            let _ = done.send(true);
        });
        let live = Live {
            send,
            seen,
            generation,
            settled,
        };
        *self.live.borrow_mut() = Some(live.clone());
        Ok(live)
    }

    /// Drop connection `generation` (ended, or refused a request).
    pub fn forget(&self, generation: u64) {
        if self.generation.get() == generation {
            self.live.borrow_mut().take();
        }
    }

    /// Note the server's stream limit, once per connection: it is known
    /// once the server's SETTINGS have arrived, surely by its first answer.
    pub fn note_limit(&self, send: &SendRequest<Bytes>) {
        if self.limit_seen.replace(true) {
            return;
        }
        let max = u32::try_from(send.current_max_send_streams()).ok();
        if let Some(max) = max {
            let s = &self.stats.max_streams;
            s.set(Some(s.get().map_or(max, |m| m.min(max))));
        }
    }
}

/// A thread's HTTP/2 connections, handed out to its workers in order.
pub struct Pool {
    streams: usize,
    conns: RefCell<Vec<Rc<Shared>>>,
    workers: Cell<usize>,
    stats: Rc<Stats>,
    version: &'static str,
    method: Option<String>,
}

impl Pool {
    /// A thread's pool for the run's HTTP/2 `requests` (none over
    /// HTTP/1.1), over TLS or not.
    pub fn of(requests: Option<&super::Requests>, tls: bool) -> Option<Pool> {
        let h2 = requests?;
        Some(Pool::new(h2.streams, tls, h2.grpc_method.clone()))
    }

    /// Connections of `streams` workers each.
    pub fn new(streams: u32, tls: bool, method: Option<String>) -> Pool {
        Pool {
            streams: streams.max(1) as usize,
            conns: RefCell::new(Vec::new()),
            workers: Cell::new(0),
            stats: Rc::default(),
            version: if tls { "h2" } else { "h2c" },
            method,
        }
    }

    /// The connection of the next worker.
    pub fn assign(&self) -> Rc<Shared> {
        let k = self.workers.get();
        self.workers.set(k + 1);
        let mut conns = self.conns.borrow_mut();
        let i = k / self.streams;
        while conns.len() <= i {
            conns.push(Rc::new(Shared {
                stats: self.stats.clone(),
                ..Shared::default()
            }));
        }
        conns[i].clone()
    }

    /// What this thread's connections saw.
    pub fn summary(&self) -> ProtocolSummary {
        ProtocolSummary {
            version: self.version.to_string(),
            streams: self.streams as u32,
            connections_opened: self.stats.opened.get(),
            server_max_streams: self.stats.max_streams.get(),
            grpc_method: self.method.clone(),
        }
    }
}
