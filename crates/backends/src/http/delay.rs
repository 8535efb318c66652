//! iolab's HTTP delay service (`iolab backend http`): `GET /delay?ms=MS`
//! answers after MS milliseconds on an async timer, so one small process can
//! hold thousands of slow calls open; `/health`; `/metrics` counts answered
//! delays (the number `iolab verify` compares with the requests sent).

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use iolab_model::steps::limits::MAX_MS;

/// The Prometheus name of the hit counter on `/metrics`.
pub const HITS_METRIC: &str = "iolab_delay_hits_total";

/// Read the hit counter out of a `/metrics` body.
pub fn parse_hits(metrics: &str) -> Option<u64> {
    metrics.lines().find_map(|l| {
        let rest = l.strip_prefix(HITS_METRIC)?.trim();
        rest.parse().ok()
    })
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)))
        .expect("static response parts are valid")
}

/// A `/delay` query the service refuses (400, the message as the body).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum DelayQueryError {
    /// No `ms=`.
    #[error("missing ms: use /delay?ms=MILLISECONDS")]
    Missing,
    /// `ms=` not a number in range.
    #[error("bad ms '{0}': use a number of milliseconds from 0 to {MAX_MS}")]
    Bad(String),
}

/// `ms=...` from a query string.
fn delay_ms(query: Option<&str>) -> Result<f64, DelayQueryError> {
    let raw = query
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("ms="))
        .ok_or(DelayQueryError::Missing)?;
    match raw.parse::<f64>() {
        Ok(ms) if ms.is_finite() && (0.0..=MAX_MS).contains(&ms) => Ok(ms),
        _ => Err(DelayQueryError::Bad(raw.to_string())),
    }
}

async fn handle(
    req: Request<hyper::body::Incoming>,
    hits: Arc<AtomicU64>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let resp = match req.uri().path() {
        "/delay" => match delay_ms(req.uri().query()) {
            Ok(ms) => {
                tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
                hits.fetch_add(1, Ordering::Relaxed);
                text(StatusCode::OK, format!("{ms}\n"))
            }
            Err(msg) => text(StatusCode::BAD_REQUEST, format!("{msg}\n")),
        },
        "/health" => text(StatusCode::OK, "ok\n".into()),
        "/metrics" => text(
            StatusCode::OK,
            format!(
                "# HELP {HITS_METRIC} Delay calls answered.\n# TYPE {HITS_METRIC} counter\n{HITS_METRIC} {}\n",
                hits.load(Ordering::Relaxed)
            ),
        ),
        other => text(
            StatusCode::NOT_FOUND,
            format!("no route {other}: use /delay?ms=MS, /health or /metrics\n"),
        ),
    };
    Ok(resp)
}

/// Serve the delay routes on `listener` until the task is dropped.
pub async fn serve(listener: tokio::net::TcpListener, hits: Arc<AtomicU64>) -> io::Result<()> {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            // Out of file descriptors and the like: back off, keep serving.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let hits = hits.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(req, hits.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

/// Run the delay service in the foreground until Ctrl-C: `on_ready` gets the
/// base URL once the port is bound (the CLI prints it as its first line).
pub fn run_until_ctrl_c(bind: SocketAddr, on_ready: impl FnOnce(&str)) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(bind).await?;
        on_ready(&format!("http://{}", listener.local_addr()?));
        tokio::select! {
            r = serve(listener, Arc::new(AtomicU64::new(0))) => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}

/// A delay service running on its own thread (for tests and embedding);
/// stopped when dropped.
#[derive(Debug)]
pub struct DelayService {
    url: String,
    hits: Arc<AtomicU64>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DelayService {
    /// Bind `bind` (port 0 for a free one) and serve in the background.
    pub fn start(bind: SocketAddr) -> io::Result<DelayService> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = rt.block_on(tokio::net::TcpListener::bind(bind))?;
        let url = format!("http://{}", listener.local_addr()?);
        let hits = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let h = hits.clone();
        let thread = std::thread::Builder::new()
            .name("iolab-delay".into())
            .spawn(move || {
                rt.block_on(async move {
                    tokio::select! {
                        _ = serve(listener, h) => {}
                        _ = stopped => {}
                    }
                })
            })?;
        Ok(DelayService {
            url,
            hits,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Its base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Delay calls answered so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
}

impl Drop for DelayService {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ms_parameter_is_checked() {
        assert_eq!(delay_ms(Some("ms=200")).unwrap(), 200.0);
        assert_eq!(delay_ms(Some("x=1&ms=0.5")).unwrap(), 0.5);
        assert!(delay_ms(None)
            .unwrap_err()
            .to_string()
            .contains("missing ms"));
        assert!(delay_ms(Some("ms=-1")).is_err());
        assert!(delay_ms(Some("ms=NaN")).is_err());
    }

    #[test]
    fn hits_are_read_back_from_metrics() {
        let body = format!("# TYPE {HITS_METRIC} counter\n{HITS_METRIC} 42\n");
        assert_eq!(parse_hits(&body), Some(42));
        assert_eq!(parse_hits("nothing"), None);
    }
}
