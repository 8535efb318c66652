//! `pool`: Tomcat's NIO connector with its three knobs.
//!
//! - An acceptor holds at most `--max-connections` connections (8,192) and
//!   stops accepting while at the cap; new connections then wait in the
//!   kernel's listen backlog (`--backlog`, Tomcat's acceptCount, 100), past
//!   which the kernel drops them.
//! - A poller parks idle keep-alive connections without a thread; a readable
//!   one joins a FIFO queue.
//! - Up to `--threads` workers (200; started on demand, like Tomcat's
//!   executor) take connections from the queue in order, read the request,
//!   run its steps blocking, answer, and hand the connection back.
//!
//! `par(...)` borrows pool threads, fork/join style: the first child runs on
//! the request's own thread, the others are queued (behind waiting requests,
//! FIFO) for other workers; when its own child is done the parent takes back
//! any child no worker has started yet and runs it itself, so a pool whose
//! every thread waits for children can never deadlock.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use iolab_model::spans::SpanState;
use iolab_model::Step;

use crate::accept;
use crate::ctx::Ctx;
use crate::exec::{first_error, run_blocking, Fanout, RunChild, StepResult};
use crate::http1::{
    answer_and_linger, read_request, write_reply, Incoming, KEEP_ALIVE, REQUEST_TIMEOUT,
};
use crate::poller::{Conn, ConnLimit, Poller};
use crate::{ServeError, THREAD_STACK};

/// Longest a worker waits for more of a request that is not whole before
/// parking it again (the poller wakes it when more arrives).
const HEAD_SLICE: Duration = Duration::from_millis(10);
/// Threads started with the pool (Tomcat minSpareThreads 10).
const MIN_SPARE: usize = 10;

enum Job {
    /// A connection with a request ready to read, and since when it waits
    /// (noted only while a span sample is open).
    Conn(Conn, Option<Instant>),
    /// A `par(...)` child waiting for a thread.
    Child(Arc<Child>),
}

struct Queue {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
    conns_waiting: usize,
}

/// One server's pool, poller and connection limit.
struct Pool {
    ctx: Arc<Ctx>,
    max_threads: usize,
    queue: Mutex<Queue>,
    ready: Condvar,
    poller: Poller,
    exit: AtomicBool,
}

/// Serve until shutdown; the calling thread is the acceptor.
pub fn serve(ctx: Arc<Ctx>, listener: TcpListener) -> Result<(), ServeError> {
    accept::prepare(&listener, ctx.params.backlog())?;
    let max_conns = ctx.params.max_connections() as usize;
    let pool = Arc::new(Pool {
        max_threads: ctx.params.threads() as usize,
        ctx: ctx.clone(),
        queue: Mutex::new(Queue {
            jobs: VecDeque::new(),
            threads: 0,
            idle: 0,
            conns_waiting: 0,
        }),
        ready: Condvar::new(),
        poller: Poller::new().map_err(ServeError::io("creating the poller"))?,
        exit: AtomicBool::new(false),
    });
    for _ in 0..MIN_SPARE.min(pool.max_threads) {
        pool.lock().threads += 1;
        pool.spawn_worker()
            .map_err(ServeError::io("starting pool threads"))?;
    }
    let poller = std::thread::Builder::new()
        .name("iolab-poller".into())
        .spawn({
            let pool = pool.clone();
            move || pool.poll_loop()
        })
        .map_err(ServeError::io("starting the poller thread"))?;

    let limit = Arc::new(ConnLimit::default());
    let shutdown = ctx.shutdown.clone();
    while let Some(slot) = limit.take(max_conns, accept::TICK, || !shutdown.is_triggered()) {
        let Some(stream) = accept::next(&listener, &shutdown) else {
            break;
        };
        // A connection that cannot be parked is closed (dropped) at once.
        let _ = pool.poller.park(Conn::new(stream, slot));
    }
    drop(listener);
    pool.ctx.drain(|| pool.lock().conns_waiting == 0);
    {
        // Set under the lock, so no worker can miss the wake-up below.
        let _q = pool.lock();
        pool.exit.store(true, Ordering::SeqCst);
    }
    pool.ready.notify_all();
    let _ = poller.join();
    Ok(())
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue a job; start one more worker if none is idle and the cap allows.
    fn push(self: &Arc<Self>, job: Job) {
        let grow = {
            let mut q = self.lock();
            if matches!(job, Job::Conn(..)) {
                q.conns_waiting += 1;
                self.ctx.metrics.queue();
            }
            q.jobs.push_back(job);
            let grow = q.jobs.len() > q.idle && q.threads < self.max_threads;
            if grow {
                q.threads += 1;
            }
            grow
        };
        if grow {
            // A refused thread is not fatal: the job waits for a running one.
            let _ = self.spawn_worker();
        }
        self.ready.notify_one();
    }

    /// Start one worker whose place in `threads` the caller already took.
    fn spawn_worker(self: &Arc<Self>) -> std::io::Result<()> {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("iolab-pool".into())
            .stack_size(THREAD_STACK)
            .spawn(move || me.work_loop());
        if spawned.is_err() {
            self.lock().threads -= 1;
        }
        spawned.map(|_| ())
    }

    fn work_loop(self: Arc<Self>) {
        while let Some(job) = self.take() {
            match job {
                Job::Conn(conn, queued) => self.serve_conn(conn, queued),
                Job::Child(child) => {
                    if child.claim() {
                        let run =
                            || run_blocking(&child.step, &self.ctx.backends, &PoolFanout(&self));
                        child.finish(iolab_spans::on_thread(
                            child.tag.as_ref(),
                            child.queued,
                            SpanState::Running,
                            None,
                            run,
                        ));
                    }
                }
            }
        }
    }

    fn take(&self) -> Option<Job> {
        let mut q = self.lock();
        loop {
            if let Some(job) = q.jobs.pop_front() {
                if matches!(job, Job::Conn(..)) {
                    q.conns_waiting -= 1;
                    self.ctx.metrics.dequeue();
                }
                return Some(job);
            }
            if self.exit.load(Ordering::SeqCst) {
                q.threads -= 1;
                return None;
            }
            // No timeout: 10,000 idle workers must not wake for nothing.
            q.idle += 1;
            q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            q.idle -= 1;
        }
    }

    /// Read one request, answer it, and park the connection again.
    fn serve_conn(self: &Arc<Self>, mut conn: Conn, queued: Option<Instant>) {
        let ctx = &self.ctx;
        // Only what has arrived is read: a head (or body) not whole within
        // a slice goes back to the poller with its bytes, so a client
        // trickling a byte a second holds no worker (issue 49 finding 23:
        // 12 such clients kept 8 workers from /health for 20 s).
        let _ = conn.stream.set_read_timeout(Some(HEAD_SLICE));
        let waiting = std::cell::Cell::new(false);
        let outcome = read_request(&mut conn.stream, &mut conn.buf, &|_, _| {
            waiting.set(true);
            false
        });
        if matches!(outcome, Ok(Incoming::Closed)) && waiting.get() {
            return self.park_partial(conn);
        }
        conn.head_since = None;
        match outcome {
            Ok(Incoming::Request(req)) => {
                if let Some(held) = crate::held::route(&req) {
                    // The worker holds the connection: what one costs a pool.
                    let _ = conn.stream.set_read_timeout(None);
                    let answer = |target: &str| {
                        ctx.answer("GET", target, |step| {
                            run_blocking(step, &ctx.backends, &PoolFanout(self))
                        })
                    };
                    return crate::held::serve(ctx, conn.stream, &req, held, &answer);
                }
                let reply = ctx.answer_queued(&req.method, &req.target, queued, |step| {
                    run_blocking(step, &ctx.backends, &PoolFanout(self))
                });
                let keep = req.keep_alive && !ctx.shutdown.is_triggered();
                let head_only = req.method == "HEAD";
                if write_reply(&mut conn.stream, &reply, keep, head_only).is_err() || !keep {
                    return;
                }
                if conn.buf.is_empty() {
                    let _ = self.poller.park(conn);
                } else {
                    // A pipelined request is already here: back of the queue.
                    self.push(Job::Conn(conn, crate::spans::arrival(ctx.spans.as_ref())));
                }
            }
            Ok(Incoming::Bad(reply)) => answer_and_linger(&mut conn.stream, &reply),
            Ok(Incoming::Closed) | Err(_) => {}
        }
    }

    /// A connection whose request is not whole yet: parked again with its
    /// bytes, unless its head has had [`REQUEST_TIMEOUT`] already (then
    /// closed, as Tomcat's connectionTimeout does).
    fn park_partial(&self, mut conn: Conn) {
        if conn.buf.is_empty() {
            let _ = self.poller.park(conn);
            return;
        }
        let since = *conn.head_since.get_or_insert_with(Instant::now);
        if since.elapsed() < REQUEST_TIMEOUT {
            let _ = self.poller.park(conn);
        }
    }

    fn poll_loop(self: Arc<Self>) {
        let mut swept = std::time::Instant::now();
        while !self.exit.load(Ordering::SeqCst) {
            let me = &self;
            let _ = self.poller.wait(Duration::from_millis(100), &mut |conn| {
                me.push(Job::Conn(
                    conn,
                    crate::spans::arrival(me.ctx.spans.as_ref()),
                ))
            });
            if self.ctx.shutdown.is_triggered() {
                // Idle keep-alive connections have nothing in flight: close them.
                self.poller.close_idle(Duration::ZERO);
            } else if swept.elapsed() >= Duration::from_secs(1) {
                self.poller.close_idle(KEEP_ALIVE);
                swept = std::time::Instant::now();
            }
        }
        self.poller.close_idle(Duration::ZERO);
    }
}

/// A `par(...)` child queued on the pool.
struct Child {
    step: Step,
    /// The sampled request it belongs to, and since when it waits.
    tag: Option<iolab_spans::Tag>,
    queued: Option<Instant>,
    claimed: AtomicBool,
    result: Mutex<Option<StepResult>>,
    done: Condvar,
}

impl Child {
    /// Take the child to run it; false if someone else already has.
    fn claim(&self) -> bool {
        !self.claimed.swap(true, Ordering::SeqCst)
    }

    fn finish(&self, r: StepResult) {
        *self.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        self.done.notify_all();
    }

    fn wait(&self) -> StepResult {
        let mut r = self.result.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = r.take() {
                return r;
            }
            r = self.done.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// `par(...)` on pool threads (see the module header).
struct PoolFanout<'a>(&'a Arc<Pool>);

impl Fanout for PoolFanout<'_> {
    fn par(&self, children: &[Step], run: &RunChild<'_>) -> StepResult {
        let Some((first, rest)) = children.split_first() else {
            return Ok(None);
        };
        let queued: Vec<Arc<Child>> = rest
            .iter()
            .map(|step| {
                let tag = iolab_spans::current();
                let child = Arc::new(Child {
                    step: step.clone(),
                    queued: tag.as_ref().map(|_| Instant::now()),
                    tag,
                    claimed: AtomicBool::new(false),
                    result: Mutex::new(None),
                    done: Condvar::new(),
                });
                self.0.push(Job::Child(child.clone()));
                child
            })
            .collect();
        let mine = run(first);
        let others = queued
            .iter()
            .map(|c| if c.claim() { run(&c.step) } else { c.wait() });
        first_error(std::iter::once(mine).chain(others))
    }
}
