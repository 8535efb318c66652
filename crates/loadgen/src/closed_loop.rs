//! Closed loop on one event loop: this thread's clients each send their next
//! request as soon as the previous one completes, until the thread's share of
//! `--requests` is used up, `--duration` has passed, or the run is cancelled.
//! There is no schedule, so latency equals service time and lag is not tracked.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use crate::clock::now_ns;
use crate::generator::RunCtx;
use crate::recorder::Recorder;
use crate::request::request;

struct Clients {
    ctx: Arc<RunCtx>,
    rec: RefCell<Recorder>,
    remaining: Cell<Option<u64>>,
    end_ns: u64,
}

/// Run `clients` clients sharing `requests` (if bounded) until `end_ns`.
pub async fn run(
    ctx: Arc<RunCtx>,
    rec: Recorder,
    clients: usize,
    requests: Option<u64>,
    end_ns: u64,
) -> std::io::Result<Recorder> {
    let shared = Rc::new(Clients {
        ctx,
        rec: RefCell::new(rec),
        remaining: Cell::new(requests),
        end_ns,
    });
    let handles: Vec<_> = (0..clients)
        .map(|_| tokio::task::spawn_local(client(shared.clone())))
        .collect();
    for h in handles {
        let _ = h.await;
    }
    let shared = Rc::try_unwrap(shared)
        .map_err(|_| std::io::Error::other("closed loop: a client outlived the run"))?;
    Ok(shared.rec.into_inner())
}

async fn client(c: Rc<Clients>) {
    let ctx = &c.ctx;
    let mut conn = None;
    loop {
        let now = now_ns();
        if ctx.cancelled() || now >= c.end_ns {
            break;
        }
        match c.remaining.get() {
            Some(0) => break,
            Some(n) => c.remaining.set(Some(n - 1)),
            None => {}
        }
        c.rec.borrow_mut().planned();
        let deadline = (now + ctx.timeout_ns).min(ctx.hard_end_ns);
        request(&mut conn, ctx, &c.rec, now, deadline, false).await;
    }
}
