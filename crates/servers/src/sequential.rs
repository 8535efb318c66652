//! `sequential`: one thread accepts a connection, serves its one request and
//! closes it, then accepts the next. Everyone else waits in the kernel's
//! listen backlog (`--backlog`); `par(...)` children run one after another.
//!
//! The answer carries `Connection: close`: holding a keep-alive connection
//! open would let one client starve the rest, which is not what the model
//! (the 100 s loop, a single-reactor server) is about; for the same reason
//! `GET /ws` and `GET /events` (held connections) are answered 501.

use std::net::TcpListener;
use std::sync::Arc;

use crate::accept;
use crate::ctx::Ctx;
use crate::exec::{run_blocking, InOrder};
use crate::http1::{answer_and_linger, read_request, write_reply, Incoming, REQUEST_TIMEOUT};
use crate::routes::Reply;
use crate::ServeError;

/// Why `/ws` and `/events` are refused here.
const HOLDS_NOTHING: &str =
    "sequential serves one request per connection: it holds no /ws or /events connection";

/// Serve until shutdown; the calling thread is the only one that works.
pub fn serve(ctx: Arc<Ctx>, listener: TcpListener) -> Result<(), ServeError> {
    accept::prepare(&listener, ctx.params.backlog())?;
    while let Some(mut stream) = accept::next(&listener, &ctx.shutdown) {
        let _ = stream.set_read_timeout(Some(accept::TICK));
        let mut buf = Vec::new();
        let outcome = read_request(&mut stream, &mut buf, &|waited, partial| {
            waited < REQUEST_TIMEOUT && (partial || !ctx.shutdown.is_triggered())
        });
        let (reply, head_only) = match outcome {
            Ok(Incoming::Request(req)) if crate::held::route(&req).is_some() => {
                (Reply::error(501, HOLDS_NOTHING), false)
            }
            Ok(Incoming::Request(req)) => {
                let reply = ctx.answer(&req.method, &req.target, |step| {
                    run_blocking(step, &ctx.backends, &InOrder)
                });
                (reply, req.method == "HEAD")
            }
            Ok(Incoming::Bad(reply)) => {
                answer_and_linger(&mut stream, &reply);
                continue;
            }
            Ok(Incoming::Closed) | Err(_) => continue,
        };
        let _ = write_reply(&mut stream, &reply, false, head_only);
    }
    drop(listener);
    Ok(())
}
