//! Closed loop on one event loop: this thread's clients each send their next
//! request as soon as the previous one completes, until the thread's share of
//! `--requests` is used up, `--duration` has passed, or the run is cancelled.
//! There is no schedule, so latency equals service time and lag is not tracked.
//!
//! A client whose request failed without an answer (refused, reset, out of
//! ports or file descriptors) waits before its next one, 1 ms doubling to
//! 100 ms until an answer comes: a dead target then costs the generator no
//! core (wrk spins on it), and clients that do hold a connection keep theirs
//! served. Every failure is still counted.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use std::time::Duration;

use crate::clock::now_ns;
use crate::protocol::Workers;
use crate::recorder::{ErrorClass, Recorder};
use crate::request::request;
use crate::run_ctx::RunCtx;

struct Clients {
    ctx: Arc<RunCtx>,
    rec: RefCell<Recorder>,
    remaining: Cell<Option<u64>>,
    end_ns: u64,
    /// The protocol's connections (HTTP/2: shared by the clients).
    protocol: Workers,
}

/// Run `clients` clients sharing `requests` (if bounded) until `end_ns`.
pub async fn run(
    ctx: Arc<RunCtx>,
    rec: Recorder,
    clients: usize,
    requests: Option<u64>,
    end_ns: u64,
) -> std::io::Result<Recorder> {
    // Over HTTP/2 each connection carries `--streams` clients.
    let clients = clients * ctx.streams();
    let shared = Rc::new(Clients {
        protocol: Workers::of(&ctx),
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
    let mut rec = shared.rec.into_inner();
    rec.protocol = shared.protocol.summary();
    Ok(rec)
}

/// First wait after a failed request, and the longest.
const BACKOFF_MIN_NS: u64 = 1_000_000;
const BACKOFF_MAX_NS: u64 = 100_000_000;

/// The wait after `failures` failed requests in a row (0: none).
pub(crate) fn backoff_ns(failures: u32) -> u64 {
    match failures {
        0 => 0,
        n => BACKOFF_MIN_NS
            .saturating_mul(1 << (n - 1).min(16))
            .min(BACKOFF_MAX_NS),
    }
}

async fn client(c: Rc<Clients>) {
    let ctx = &c.ctx;
    let mut conn = c.protocol.slot();
    let mut failures = 0u32;
    loop {
        if failures > 0 {
            // Wake in time for the run's end; cancellation is seen after.
            let wait = backoff_ns(failures).min(c.end_ns.saturating_sub(now_ns()));
            tokio::time::sleep(Duration::from_nanos(wait)).await;
        }
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
        let answered = request(&mut conn, ctx, &c.rec, now, deadline, false).await;
        // A timeout already waited; anything else without an answer backs off.
        failures = match answered {
            Ok(_) | Err(ErrorClass::Timeout) => 0,
            Err(_) => failures.saturating_add(1),
        };
    }
}

#[cfg(test)]
mod tests {
    /// Issue 16, finding 4: a closed loop spun a core on a dead target.
    #[test]
    fn r16_04_backoff_doubles_to_a_cap() {
        let w: Vec<u64> = (0..12).map(|n| super::backoff_ns(n) / 1_000_000).collect();
        assert_eq!(w, [0, 1, 2, 4, 8, 16, 32, 64, 100, 100, 100, 100]);
        assert_eq!(super::backoff_ns(u32::MAX), 100_000_000);
    }
}
