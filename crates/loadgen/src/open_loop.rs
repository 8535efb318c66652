//! Open loop on one event loop: a dispatcher walks the computed schedule and
//! queues each due request; a pool of workers (one connection each, grown on
//! demand up to this thread's share of the cap) takes them. A request still
//! queued when its deadline (intended time + timeout) passes, or when the run
//! is cancelled, is `not_sent`; workers take the *newest* due request
//! ([`Backlog`], shared with the io_uring engine).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use iolab_model::schedule::Schedule;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::backlog::Backlog;
use crate::clock::{now_ns, PreciseTimer};
use crate::protocol::Workers;
use crate::recorder::Recorder;
use crate::request::request;
use crate::run_ctx::RunCtx;

/// Longest single sleep, so cancellation is noticed.
const MAX_SLEEP_NS: u64 = 50_000_000;
/// A yield back within this long ran no other task (see `spin`).
const IDLE_YIELD_NS: u64 = 20_000;
/// Sends dispatched back to back before yielding to the workers.
const BURST: u32 = 64;

struct Pool {
    ctx: Arc<RunCtx>,
    rec: RefCell<Recorder>,
    queue: RefCell<Backlog>,
    idle: Cell<usize>,
    workers: Cell<usize>,
    cap: usize,
    done: Cell<bool>,
    notify: Notify,
    handles: RefCell<Vec<JoinHandle<()>>>,
    /// The protocol's connections (HTTP/2: shared by the workers).
    protocol: Workers,
}

/// Run this thread's share of the schedule; returns its recorder.
pub async fn run(
    ctx: Arc<RunCtx>,
    rec: Recorder,
    mut schedule: Schedule,
    cap: usize,
    timer: &PreciseTimer,
) -> std::io::Result<Recorder> {
    let pool = Rc::new(Pool {
        ctx: ctx.clone(),
        rec: RefCell::new(rec),
        queue: RefCell::new(Backlog::default()),
        idle: Cell::new(0),
        workers: Cell::new(0),
        // Over HTTP/2 each connection carries `--streams` workers.
        cap: cap.max(1) * ctx.streams(),
        done: Cell::new(false),
        notify: Notify::new(),
        handles: RefCell::new(Vec::new()),
        protocol: Workers::of(&ctx),
    });
    let mut next = schedule.next();
    let mut burst = 0;
    let mut spin_ns = 0u64;
    while let Some(offset) = next {
        if ctx.cancelled() {
            break;
        }
        let at = ctx.start_ns + offset;
        let now = now_ns();
        if now >= ctx.hard_end_ns {
            break;
        }
        if at > now {
            burst = 0;
            spin_ns += wait_toward(&ctx, timer, at, now).await?;
            continue;
        }
        dispatch(&pool, at);
        next = schedule.next();
        burst += 1;
        if burst >= BURST {
            burst = 0;
            tokio::task::yield_now().await;
        }
    }
    let next = next.map(|o| ctx.start_ns + o);
    Backlog::cut(
        &mut pool.rec.borrow_mut(),
        ctx.start_ns,
        next,
        &mut schedule,
    );
    finish(pool, spin_ns).await
}

/// Wait, but not past the send due at `at`: spin (yielding) within the
/// spin window, else sleep until it opens (at most [`MAX_SLEEP_NS`], so a
/// cancel is seen). Returns the time spent spinning.
async fn wait_toward(
    ctx: &RunCtx,
    timer: &PreciseTimer,
    at: u64,
    now: u64,
) -> std::io::Result<u64> {
    if at - now > ctx.spin_ns {
        let wake = (at - ctx.spin_ns).min(now + MAX_SLEEP_NS);
        timer.sleep_until(wake).await?;
        return Ok(0);
    }
    // Close to the send: stay awake, letting the connections
    // run, and any other process that wants this CPU (sched_yield).
    std::thread::yield_now();
    tokio::task::yield_now().await;
    // A yield that came straight back ran nothing else: that
    // was spinning; a longer one ran the connections' work.
    let took = now_ns().saturating_sub(now);
    Ok(if took < IDLE_YIELD_NS { took } else { 0 })
}

/// Queue the send due at `at` for an idle worker, or a new one while the
/// pool is under its cap (else it waits for the next free worker).
fn dispatch(pool: &Rc<Pool>, at: u64) {
    pool.rec.borrow_mut().planned();
    pool.queue.borrow_mut().push(at);
    if pool.idle.get() > 0 {
        pool.idle.set(pool.idle.get() - 1);
        pool.notify.notify_one();
    } else if pool.workers.get() < pool.cap {
        pool.workers.set(pool.workers.get() + 1);
        let h = tokio::task::spawn_local(worker(pool.clone()));
        pool.handles.borrow_mut().push(h);
    }
}

/// The schedule is over: let the workers finish what they hold, count what
/// is still queued as not sent, and hand back the recorder.
async fn finish(pool: Rc<Pool>, spin_ns: u64) -> std::io::Result<Recorder> {
    pool.done.set(true);
    pool.notify.notify_waiters();
    loop {
        let h = pool.handles.borrow_mut().pop();
        match h {
            Some(h) => {
                let _ = h.await;
            }
            None => break,
        }
    }
    let mut rec = pool.rec.borrow_mut();
    rec.spin_ns = spin_ns;
    rec.protocol = pool.protocol.summary();
    pool.queue.borrow_mut().drain_not_sent(&mut rec);
    drop(rec);
    let pool = Rc::try_unwrap(pool)
        .map_err(|_| std::io::Error::other("open loop: a worker outlived the run"))?;
    Ok(pool.rec.into_inner())
}

async fn worker(pool: Rc<Pool>) {
    let ctx = &pool.ctx;
    let mut conn = pool.protocol.slot();
    loop {
        let item = take(&pool);
        match item {
            Some(at) => {
                let deadline = (at + ctx.timeout_ns).min(ctx.hard_end_ns);
                let _ = request(&mut conn, ctx, &pool.rec, at, deadline, true).await;
            }
            None if pool.done.get() => break,
            None => {
                pool.idle.set(pool.idle.get() + 1);
                pool.notify.notified().await;
            }
        }
    }
}

/// The newest due request not yet expired (see [`Backlog::take`]).
fn take(pool: &Pool) -> Option<u64> {
    let now = now_ns();
    let mut rec = pool.rec.borrow_mut();
    pool.queue.borrow_mut().take(&pool.ctx, now, &mut rec)
}
