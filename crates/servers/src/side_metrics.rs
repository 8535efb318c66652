//! `/metrics` on a listener of its own (`iolab serve --metrics-port`): one
//! plain thread the model never uses, serving one short request at a time,
//! so a saturated pool or a blocked event loop cannot starve the lab's view
//! of the target (Spring Boot's management port does the same). It answers
//! `/metrics`, `/health` and `/spans`; everything else is a 404.

use std::net::TcpListener;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::accept;
use crate::ctx::Ctx;
use crate::http1::{read_request, write_reply, Incoming};
use crate::routes::{route, Reply, Route};
use crate::ServeError;

/// Longest a scraper may take to send its request.
const READ_LIMIT: Duration = Duration::from_secs(2);

/// Serve `/metrics` of `ctx` on `listener` from a thread of its own until
/// the server shuts down.
pub fn spawn(ctx: Arc<Ctx>, listener: TcpListener) -> Result<JoinHandle<()>, ServeError> {
    accept::prepare(&listener, 64)?;
    std::thread::Builder::new()
        .name("iolab-metrics".into())
        .stack_size(crate::THREAD_STACK)
        .spawn(move || serve(&ctx, &listener))
        .map_err(ServeError::io("starting the metrics thread"))
}

fn serve(ctx: &Ctx, listener: &TcpListener) {
    while let Some(mut stream) = accept::next(listener, &ctx.shutdown) {
        let _ = stream.set_read_timeout(Some(accept::TICK));
        let _ = stream.set_write_timeout(Some(READ_LIMIT));
        let mut buf = Vec::new();
        let reply = match read_request(&mut stream, &mut buf, &|waited, _| waited < READ_LIMIT) {
            Ok(Incoming::Request(req)) => match route(&req.method, &req.target) {
                r @ (Route::Metrics | Route::Health | Route::Spans { .. }) => {
                    ctx.quick(r).unwrap_or_else(|_| unreachable())
                }
                _ => Reply::not_found(&req.target),
            },
            Ok(Incoming::Bad(reply)) => reply,
            Ok(Incoming::Closed) | Err(_) => continue,
        };
        let _ = write_reply(&mut stream, &reply, false, false);
    }
}

fn unreachable() -> Reply {
    Reply::error(500, "the metrics listener ran a workload")
}
