//! The server shared by the three event-loop models: a tokio runtime with
//! `--workers` threads (tokio's default: one per core) serving HTTP/1.1
//! ([`loop_http1`]: light, so a waiting request holds no buffer) and, on the
//! same port, HTTP/2 with prior knowledge (h2c, through hyper: the client's
//! preface tells them apart), so one model can be measured with many
//! connections or with many streams on one.
//! The models differ only in how they run a step ([`AsyncSteps`]); the two
//! that await their IO share one walk of the steps ([`walk`]) and differ only
//! in how a leaf IO step is served ([`ServeIo`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::TcpListener;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use iolab_model::cpu::leibniz;
use iolab_model::{IoCall, Step};

use crate::ctx::Ctx;
use crate::exec::{first_error, StepResult};
use crate::loop_http1::{self, Live, Opening};
use crate::routes::{route, Reply};
use crate::ServeError;

/// Listen backlog of the loop models when `--backlog` is not given (the
/// kernel caps it at net.core.somaxconn, which is what Netty uses).
pub const LOOP_BACKLOG: u32 = 4096;

/// A boxed future that may borrow.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How an event-loop model runs a workload.
pub trait AsyncSteps: Send + Sync + 'static {
    /// Run `step`; whatever blocks here blocks the worker thread polling it.
    fn run<'a>(&'a self, ctx: &'a Arc<Ctx>, step: &'a Step) -> BoxFuture<'a, StepResult>;

    /// Adjust the runtime before it is built (e.g. the blocking pool size).
    fn configure(&self, _runtime: &mut tokio::runtime::Builder) {}
}

/// How a model that awaits its IO serves one leaf (`sleep`, `pg`, ...).
pub trait ServeIo: Send + Sync + 'static {
    /// Serve `call`; the future is awaited on the request's own task.
    fn io<'a>(&'a self, ctx: &'a Arc<Ctx>, call: &'a IoCall) -> BoxFuture<'a, StepResult>;
}

/// Run `step` on the request's task: `cpu` on the worker polling it (as on
/// any event loop), IO leaves through `leaves`, `seq(...)` in order, and
/// `par(...)` children joined on this same task ([`join_all`]).
pub fn walk<'a, L: ServeIo>(
    leaves: &'a L,
    ctx: &'a Arc<Ctx>,
    step: &'a Step,
) -> BoxFuture<'a, StepResult> {
    Box::pin(async move {
        match step {
            Step::Cpu { terms } => {
                iolab_spans::running(|| leibniz(*terms));
                Ok(None)
            }
            Step::Io(call) => leaves.io(ctx, call).await,
            Step::Seq(children) => {
                let mut last = None;
                for child in children {
                    last = walk(leaves, ctx, child).await?.or(last);
                }
                Ok(last)
            }
            Step::Par(children) => {
                join_all(children.iter().map(|c| walk(leaves, ctx, c)).collect()).await
            }
        }
    })
}

/// Serve until shutdown with `exec` running the steps.
pub fn serve<E: AsyncSteps>(
    ctx: Arc<Ctx>,
    listener: TcpListener,
    exec: E,
) -> Result<(), ServeError> {
    socket2::SockRef::from(&listener)
        .listen(
            ctx.params
                .backlog
                .unwrap_or(LOOP_BACKLOG)
                .min(i32::MAX as u32) as i32,
        )
        .map_err(ServeError::io("setting the listen backlog"))?;
    listener
        .set_nonblocking(true)
        .map_err(ServeError::io("making the listener non-blocking"))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(ctx.params.workers(cores) as usize)
        .thread_name("iolab-loop")
        .enable_all();
    exec.configure(&mut builder);
    let runtime = builder
        .build()
        .map_err(ServeError::io("starting the event loop"))?;
    let result = runtime.block_on(accept_loop(ctx, listener, Arc::new(exec)));
    // Workers still stuck in a blocking step are abandoned, not awaited.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

async fn accept_loop<E: AsyncSteps>(
    ctx: Arc<Ctx>,
    listener: TcpListener,
    exec: Arc<E>,
) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(ServeError::io("registering the listener"))?;
    let graceful = GracefulShutdown::new();
    let live = Arc::new(Live::default());
    let mut h2 = http2::Builder::new(TokioExecutor::new());
    h2.timer(TokioTimer::new());
    loop {
        tokio::select! {
            biased;
            _ = ctx.shutdown.wait() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let (ctx, exec, live) = (ctx.clone(), exec.clone(), live.clone());
                    let (h2, watcher) = (h2.clone(), graceful.watcher());
                    tokio::spawn(async move {
                        connection(ctx, exec, live, stream, h2, watcher).await;
                    });
                }
                // Out of file descriptors and the like: back off, keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
        }
    }
    drop(listener);
    let h1_done = async {
        while live.count() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        _ = async { tokio::join!(graceful.shutdown(), h1_done) } => {}
        _ = tokio::time::sleep(ctx.grace) => {}
    }
    Ok(())
}

/// One connection: HTTP/1.1 served by [`loop_http1`], h2c by hyper.
async fn connection<E: AsyncSteps>(
    ctx: Arc<Ctx>,
    exec: Arc<E>,
    live: Arc<Live>,
    stream: tokio::net::TcpStream,
    h2: http2::Builder<TokioExecutor>,
    watcher: Watcher,
) {
    match loop_http1::open(&ctx, stream).await {
        Opening::H1(stream, buf) => {
            let answer = |method: String, target: String| {
                let (ctx, exec) = (ctx.clone(), exec.clone());
                async move { answer(&ctx, &*exec, &method, &target).await }
            };
            loop_http1::serve_h1(&ctx, &live, stream, buf, answer).await;
        }
        Opening::H2(io) => {
            let service = service_fn(move |req| handle(ctx.clone(), exec.clone(), req));
            // Boxed: hyper's HTTP/2 connection is large, and every HTTP/1
            // connection's task would otherwise be the size of this branch.
            let conn = Box::pin(watcher.watch(h2.serve_connection(TokioIo::new(io), service)));
            let _ = conn.await;
        }
        Opening::Gone => {}
    }
}

/// The reply to one request, whatever the protocol.
async fn answer<E: AsyncSteps>(ctx: &Arc<Ctx>, exec: &E, method: &str, target: &str) -> Reply {
    match ctx.quick(route(method, target)) {
        Ok(reply) => reply,
        Err(work) => {
            let guard = ctx.metrics.start();
            let started = Instant::now();
            let (result, tag) =
                crate::spans::traced(ctx.spans.as_ref(), exec.run(ctx, &work.step)).await;
            let reply = ctx.finish(&work, result, started, guard);
            crate::spans::done(tag.as_ref(), started, &reply);
            reply
        }
    }
}

/// An HTTP/2 request, through hyper.
async fn handle<E: AsyncSteps>(
    ctx: Arc<Ctx>,
    exec: Arc<E>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let target = req.uri().path_and_query().map_or("/", |p| p.as_str());
    let reply = answer(&ctx, &*exec, req.method().as_str(), target).await;
    Ok(to_response(reply))
}

fn to_response(reply: Reply) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(reply.body));
    *resp.status_mut() = hyper::StatusCode::from_u16(reply.status)
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(reply.content_type),
    );
    resp
}

/// Poll every future to completion on this task (no extra tasks, no extra
/// threads) and give the first error: how `par(...)` joins futures.
pub async fn join_all(mut futures: Vec<BoxFuture<'_, StepResult>>) -> StepResult {
    let mut results: Vec<Option<StepResult>> = vec![None; futures.len()];
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (fut, slot) in futures.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(r) => *slot = Some(r),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    first_error(results.into_iter().map(|r| r.unwrap_or(Ok(None))))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use iolab_model::ModelKind;

    use super::*;
    use crate::exec::StepError;
    use crate::{ServeConfig, Shutdown};

    /// Serves each leaf by noting it, answering with its text (or failing
    /// the `sleep:13` leaf).
    #[derive(Default)]
    struct Note(Mutex<Vec<String>>);

    impl ServeIo for Note {
        fn io<'a>(&'a self, _: &'a Arc<Ctx>, call: &'a IoCall) -> BoxFuture<'a, StepResult> {
            Box::pin(async move {
                self.0.lock().unwrap().push(call.to_string());
                match call.to_string().as_str() {
                    "sleep:13" => Err(StepError {
                        status: 502,
                        message: "unlucky".into(),
                    }),
                    text => Ok(Some(Bytes::from(text.to_string()))),
                }
            })
        }
    }

    fn walk_steps(steps: &str) -> (StepResult, Vec<String>) {
        let config = ServeConfig::new(ModelKind::LoopAsync);
        let ctx = Arc::new(Ctx::new(&config, Shutdown::new()));
        let step = iolab_model::steps::parse(steps).unwrap();
        let leaves = Note::default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let result = rt.block_on(walk(&leaves, &ctx, &step));
        (result, leaves.0.into_inner().unwrap())
    }

    #[test]
    fn every_leaf_goes_through_the_model_and_the_last_value_wins() {
        let (r, served) = walk_steps("seq(sleep:1,par(sleep:2,cpu:10,sleep:3),sleep:4)");
        assert_eq!(served, ["sleep:1", "sleep:2", "sleep:3", "sleep:4"]);
        assert_eq!(r.unwrap(), Some(Bytes::from("sleep:4")));
    }

    #[test]
    fn par_runs_every_child_and_keeps_the_first_error_seq_stops_at_it() {
        let (r, served) = walk_steps("par(sleep:13,sleep:2)");
        assert_eq!(served, ["sleep:13", "sleep:2"]);
        assert_eq!(r.unwrap_err().status, 502);
        let (r, served) = walk_steps("seq(sleep:13,sleep:2)");
        assert_eq!(served, ["sleep:13"]);
        assert!(r.is_err());
    }
}
