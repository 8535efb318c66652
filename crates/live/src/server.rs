//! The live page's HTTP side (hyper, on one thread of its own with a
//! current-thread runtime): `/` the page, `/events` its parts as server-sent
//! events, `/state` the attack's document as it stands, `/metrics` the
//! OpenMetrics text. A publisher renders the picture when the source has
//! something new (at most [`FRAME`] apart, at least once a second for the
//! clock) and offers it to every reader's bounded buffer; a full buffer
//! drops the frame and counts it, a closed one drops the reader. Nothing here
//! waits on a reader, and the generator never waits on this.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, oneshot};

use crate::{Listener, Source};

/// Shortest time between two frames.
const FRAME: Duration = Duration::from_millis(200);
/// Longest time between two frames while readers are connected (the clock).
const TICK: Duration = Duration::from_secs(1);
/// Frames a reader may have waiting before the next one is dropped for it.
const BUFFER: usize = 4;
/// How long a finishing server gives readers to take the last frame.
const LAST_FRAME: Duration = Duration::from_millis(500);
/// How long a finishing server waits for its poller to read the final
/// figures (a merge reads every 0.5 s; Prometheus as often as it is told).
pub const LINGER: Duration = Duration::from_secs(5);
/// Most connections the page holds at once; one more is closed as soon as
/// it is accepted. The page shares the generator's descriptors: 230 idle
/// connections under `ulimit -n 256` once left the load none, and a clean
/// run counted 2,145 `fd_limit` errors (issue 49 finding 13).
pub const MAX_CONNECTIONS: usize = 64;
/// Longest a connection may take to send a request head, idle keep-alive
/// included (an event stream, once answered, is not a head being read).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

type Body = BoxBody<Bytes, Infallible>;

/// What the publisher and the connections share.
struct Shared {
    source: Arc<dyn Source>,
    url: String,
    loopback: bool,
    readers: Mutex<Vec<mpsc::Sender<Bytes>>>,
    /// Frames dropped because a reader's buffer was full.
    dropped: AtomicU64,
    /// Someone read `/state` or `/metrics` (a merge, a scraper).
    polled: AtomicBool,
    /// The command has finished ...
    done: AtomicBool,
    /// ... and `/state` or `/metrics` was read since.
    read_done: AtomicBool,
}

/// Why the live page could not start serving.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The socket cannot be made non-blocking.
    #[error("live page: {0}")]
    Socket(std::io::Error),
    /// No thread for it.
    #[error("live page: cannot start a thread: {0}")]
    Thread(std::io::Error),
}

/// A running live server; [`Server::finish`] pushes the last picture and stops it.
pub struct Server {
    url: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl Server {
    /// Serve `source` on `listener`, from a thread of its own.
    pub fn start(listener: Listener, source: Arc<dyn Source>) -> Result<Server, StartError> {
        let shared = Arc::new(Shared {
            source,
            url: listener.url.clone(),
            loopback: listener.loopback,
            readers: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
            polled: AtomicBool::new(false),
            done: AtomicBool::new(false),
            read_done: AtomicBool::new(false),
        });
        listener
            .socket
            .set_nonblocking(true)
            .map_err(StartError::Socket)?;
        let (stop, stopped) = oneshot::channel();
        let s = shared.clone();
        let socket = listener.socket;
        let thread = std::thread::Builder::new()
            .name("iolab-live".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => return eprintln!("live page: cannot start: {e}"),
                };
                rt.block_on(serve(socket, s, stopped));
            })
            .map_err(StartError::Thread)?;
        Ok(Server {
            url: listener.url,
            stop: Some(stop),
            thread: Some(thread),
            shared,
        })
    }

    /// The page's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Frames dropped so far because a reader was slow.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Relaxed)
    }

    /// Push the last picture to every reader, give them a moment to take
    /// it, and stop serving; when something polls `/state` or `/metrics`
    /// (a merge of shards, Prometheus), first wait for it to read the
    /// final figures, at most [`LINGER`].
    pub fn finish(mut self) {
        self.shared.done.store(true, Relaxed);
        let until = Instant::now() + LINGER;
        while self.shared.polled.load(Relaxed)
            && !self.shared.read_done.load(Relaxed)
            && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

async fn serve(
    socket: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(socket) {
        Ok(l) => l,
        Err(e) => return eprintln!("live page: {e}"),
    };
    let publisher = tokio::spawn(publish(shared.clone()));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                // Over the cap: closed at once (dropped), its descriptor freed.
                let Ok(slot) = slots.clone().try_acquire_owned() else { continue };
                tokio::spawn(connection(stream, shared.clone(), slot));
            }
        }
    }
    publisher.abort();
    // The last picture, then a moment for readers to take it.
    offer(&shared, frame(&shared));
    let until = Instant::now() + LAST_FRAME;
    while Instant::now() < until && has_waiting(&shared) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Ok(mut r) = shared.readers.lock() {
        r.clear();
    }
    // Let the connections end their streams properly before the runtime goes.
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// One connection, holding one of the [`MAX_CONNECTIONS`] slots while it
/// lasts, its heads held to [`HEAD_TIMEOUT`].
async fn connection(
    stream: tokio::net::TcpStream,
    shared: Arc<Shared>,
    _slot: tokio::sync::OwnedSemaphorePermit,
) {
    let service = hyper::service::service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(route(&shared, req)) }
    });
    let _ = http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Some reader has not taken every frame yet.
fn has_waiting(shared: &Shared) -> bool {
    shared
        .readers
        .lock()
        .map(|r| r.iter().any(|tx| tx.capacity() < BUFFER))
        .unwrap_or(false)
}

/// Render and offer a frame when there is news (or the clock is due).
async fn publish(shared: Arc<Shared>) {
    let mut seen = u64::MAX;
    let mut last = Instant::now();
    loop {
        tokio::time::sleep(FRAME).await;
        let readers = shared.readers.lock().map(|r| r.len()).unwrap_or(0);
        let version = shared.source.version();
        if readers == 0 || (version == seen && last.elapsed() < TICK) {
            continue;
        }
        seen = version;
        last = Instant::now();
        offer(&shared, frame(&shared));
    }
}

/// Offer one frame to every reader: dropped (and counted) for a full
/// buffer, the reader forgotten when it has gone.
fn offer(shared: &Shared, bytes: Bytes) {
    let Ok(mut readers) = shared.readers.lock() else {
        return;
    };
    readers.retain(|tx| match tx.try_send(bytes.clone()) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            shared.dropped.fetch_add(1, Relaxed);
            true
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    });
}

/// The picture now, as the server shows it (its own address and drops added).
fn view(shared: &Shared) -> iolab_model::live::LiveView {
    let mut v = shared.source.view();
    v.address = shared.url.clone();
    v.loopback = shared.loopback;
    v.dropped_frames += shared.dropped.load(Relaxed);
    v
}

/// One server-sent event carrying every part of the page; its id is when
/// the newest interval it shows ended (Unix ms), so a reader can tell how
/// long the picture took to reach it (`scripts/bench-live`).
fn frame(shared: &Shared) -> Bytes {
    let v = view(shared);
    let id = v
        .current
        .as_ref()
        .and_then(|r| {
            let last = r.attack.series.last()?;
            Some(r.attack.started_unix_ms as f64 + (last.t_s + r.interval_s) * 1e3)
        })
        .map_or(0, |ms| ms.round() as u64);
    let parts: serde_json::Map<String, serde_json::Value> = iolab_report::live::parts(&v)
        .into_iter()
        .map(|(id, html)| (id.to_string(), serde_json::Value::String(html)))
        .collect();
    let data = serde_json::Value::Object(parts).to_string();
    Bytes::from(format!("event: parts\nid: {id}\ndata: {data}\n\n"))
}

fn route(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n");
    }
    match req.uri().path() {
        "/" => respond(
            "text/html; charset=utf-8",
            iolab_report::live::page(&view(shared)),
        ),
        "/events" => events(shared),
        "/state" | "/metrics" => polled(shared, req.uri().path()),
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: / (the page), /events, /state, /metrics\n",
        ),
    }
}

/// `/state` and `/metrics`, noting that someone polls (and has read the
/// final figures, once the command has finished).
fn polled(shared: &Arc<Shared>, path: &str) -> Response<Body> {
    let done = shared.done.load(Relaxed);
    shared.polled.store(true, Relaxed);
    let r = match path {
        "/state" => match shared.source.state() {
            Some(doc) => respond(
                "application/json",
                serde_json::to_string(&doc).unwrap_or_default(),
            ),
            None => text(
                StatusCode::SERVICE_UNAVAILABLE,
                "no attack has started yet\n",
            ),
        },
        _ => respond(
            crate::metrics::CONTENT_TYPE,
            crate::metrics::encode(
                shared.source.metrics().as_ref(),
                shared.dropped.load(Relaxed),
            ),
        ),
    };
    if done {
        shared.read_done.store(true, Relaxed);
    }
    r
}

fn respond(content_type: &str, body: String) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r.headers_mut().insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    r
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut r = respond("text/plain; charset=utf-8", body.to_string());
    *r.status_mut() = status;
    r
}

/// A new reader: the current picture at once, then every frame offered.
fn events(shared: &Arc<Shared>) -> Response<Body> {
    let (tx, rx) = mpsc::channel(BUFFER);
    let _ = tx.try_send(Bytes::from_static(b"retry: 2000\n\n"));
    let _ = tx.try_send(frame(shared));
    if let Ok(mut r) = shared.readers.lock() {
        r.push(tx);
    }
    let mut r = Response::new(Events(rx).boxed());
    let h = r.headers_mut();
    h.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    r
}

/// A reader's stream: its buffer's frames, in order, until the server drops it.
struct Events(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}
