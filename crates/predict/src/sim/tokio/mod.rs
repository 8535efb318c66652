//! Which waiting request a worker of tokio's multi-thread runtime serves
//! next, for the model whose handler blocks the worker (`loop-blocking` on
//! the built-in runtime): once both workers are stuck in handlers, the order
//! is the runtime's, not first-come-first-served.
//!
//! The mechanism, as the server (crates/servers/src/event_loop.rs), tokio
//! 1.54 (`runtime/scheduler/multi_thread/worker.rs`) and hyper 1.12 run it:
//! - The accept loop runs in `Runtime::block_on` on the main thread, not on
//!   a worker, so a new connection's task is spawned into the *global inject
//!   queue*. The listener's readiness, and every socket's, is learned only
//!   when a worker turns the I/O driver: when it finds no task to run
//!   (park), or every 61st scheduler tick (maintenance). Then the main
//!   thread accepts every queued connection at once.
//! - A socket's readiness starts unknown: the first poll of a new
//!   connection's task reads nothing and waits; its request is seen at the
//!   next driver turn, which wakes the task into the turning worker's *LIFO
//!   slot* (the task that was there moves to the back of its local queue,
//!   256 long; when full, half of it overflows to the inject queue).
//! - A kept-alive connection's next request skips the accept: its task
//!   already waits on the socket, and the next turn wakes it.
//! - A worker runs the LIFO slot, then its local queue, then takes a batch
//!   of the inject queue (its share plus one); every `global_queue_interval`
//!   ticks it takes from the inject queue first. That interval tunes itself
//!   to 200 µs of polling (clamped to 2..=127) from a moving average of poll
//!   times, so with blocking handlers it falls to 2. An idle worker steals
//!   half of another's local queue (not its LIFO slot).
//!
//! The simulation runs this bookkeeping at the instants a worker frees up or
//! a request arrives; polls that only find a socket not ready take no time.
//! Not modelled: the LIFO slot's run-ahead within one tick (it changes only
//! the tick count), the random choice of a steal victim (the next worker is
//! taken), and hyper dropping a request whose client closed before its head
//! was read (docs/predict.md, "Where predictions are weakest").

use std::collections::VecDeque;

/// Tokio's defaults (`runtime/builder.rs`, `scheduler/multi_thread`).
const EVENT_INTERVAL: u64 = 61;
const LOCAL_QUEUE: usize = 256;
const TARGET_POLLING_NS: f64 = 200_000.0;
const MAX_GLOBAL_INTERVAL: u64 = 127;
const EWMA_ALPHA: f64 = 0.1;

/// Where a request's task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum At {
    /// Not known to the scheduler (or being served, or done).
    #[default]
    Out,
    /// A new connection in the kernel's accept queue.
    Backlog,
    /// A task waiting for its socket's readiness (registered waker).
    Parked,
    /// In the inject queue, a LIFO slot or a local queue.
    Queued,
}

#[derive(Debug, Clone, Copy, Default)]
struct Task {
    at: At,
    /// Readiness delivered by a driver turn.
    ready: bool,
    /// An I/O event waits for the next driver turn.
    event: bool,
}

#[derive(Debug)]
struct Worker {
    busy: bool,
    parked: bool,
    /// Woken from a park: its polling batch starts when it runs.
    woken: bool,
    lifo: Option<u32>,
    local: VecDeque<u32>,
    tick: u64,
    global_interval: u64,
    ewma_ns: f64,
    batch_start: u64,
    batch_polls: u32,
}

/// The runtime's queues and workers; slots are the engine's request slots.
#[derive(Debug)]
pub(super) struct Tokio {
    workers: Vec<Worker>,
    tasks: Vec<Task>,
    inject: VecDeque<u32>,
    backlog: VecDeque<u32>,
    listener_event: bool,
    events: Vec<u32>,
    /// Reused buffer for a turn's events (no allocation per turn).
    turning: Vec<u32>,
    runnable: VecDeque<u32>,
    /// Parked workers, the last parked first (tokio's sleepers list).
    sleepers: Vec<u32>,
}

impl Tokio {
    pub(super) fn new(workers: u32) -> Tokio {
        let ewma_ns = TARGET_POLLING_NS / EVENT_INTERVAL as f64;
        let w = |_| Worker {
            busy: false,
            parked: true,
            woken: false,
            lifo: None,
            local: VecDeque::with_capacity(LOCAL_QUEUE),
            tick: 0,
            global_interval: EVENT_INTERVAL,
            ewma_ns,
            batch_start: 0,
            batch_polls: 0,
        };
        Tokio {
            workers: (0..workers.max(1)).map(w).collect(),
            tasks: Vec::new(),
            inject: VecDeque::new(),
            backlog: VecDeque::new(),
            listener_event: false,
            events: Vec::new(),
            turning: Vec::new(),
            runnable: VecDeque::new(),
            sleepers: (0..workers.max(1)).rev().collect(),
        }
    }

    /// Request `slot` reaches the server: on a new connection (accept
    /// queue), or on a kept-alive one whose task waits on its socket.
    pub(super) fn arrive(&mut self, slot: u32, new_conn: bool) {
        let i = slot as usize;
        if self.tasks.len() <= i {
            self.tasks.resize(i + 1, Task::default());
        }
        self.tasks[i] = Task::default();
        if new_conn {
            self.tasks[i].at = At::Backlog;
            self.backlog.push_back(slot);
            self.listener_event = true;
        } else {
            self.tasks[i].at = At::Parked;
            self.event(slot);
        }
        // the worker parked in the driver wakes on any I/O event
        self.wake_parked();
    }

    /// Worker `w` finished its request's handler.
    pub(super) fn release(&mut self, w: u32) {
        self.workers[w as usize].busy = false;
        self.runnable.push_back(w);
    }

    /// The next request a worker starts now, and which worker: `None` once
    /// every worker is busy or parked.
    pub(super) fn next_start(&mut self, now: u64) -> Option<(u32, u32)> {
        while let Some(w) = self.runnable.pop_front() {
            let wk = &self.workers[w as usize];
            if wk.busy || wk.parked {
                continue;
            }
            if let Some(slot) = self.run(w, now) {
                return Some((w, slot));
            }
        }
        None
    }

    /// Worker `w`'s loop (`Context::run`) until it starts a handler or parks.
    fn run(&mut self, w: u32, now: u64) -> Option<u32> {
        let wk = &mut self.workers[w as usize];
        if std::mem::take(&mut wk.woken) {
            wk.batch_start = now;
            wk.batch_polls = 0;
        }
        loop {
            let wk = &mut self.workers[w as usize];
            wk.tick += 1;
            if wk.tick.is_multiple_of(EVENT_INTERVAL) {
                self.end_batch(w, now);
                self.turn(w);
                self.workers[w as usize].batch_start = now;
            }
            if let Some(slot) = self.next_task(w) {
                if self.poll(w, slot) {
                    return Some(slot);
                }
                continue;
            }
            self.end_batch(w, now);
            if let Some(slot) = self.steal(w) {
                if self.poll(w, slot) {
                    return Some(slot);
                }
                continue;
            }
            self.turn(w);
            if !self.has_tasks(w) && self.inject.is_empty() {
                self.workers[w as usize].parked = true;
                self.sleepers.push(w);
                return None;
            }
        }
    }

    /// Poll `slot`'s task: it runs its handler if its request was seen
    /// (true), or registers for its socket and returns at once.
    fn poll(&mut self, w: u32, slot: u32) -> bool {
        let wk = &mut self.workers[w as usize];
        wk.batch_polls += 1;
        let t = &mut self.tasks[slot as usize];
        if t.ready {
            t.at = At::Out;
            wk.busy = true;
            true
        } else {
            t.at = At::Parked;
            false
        }
    }

    fn next_task(&mut self, w: u32) -> Option<u32> {
        let n = self.workers.len();
        let wk = &mut self.workers[w as usize];
        if wk.tick.is_multiple_of(wk.global_interval) {
            let tuned = (TARGET_POLLING_NS / wk.ewma_ns).clamp(2.0, MAX_GLOBAL_INTERVAL as f64);
            if (tuned as u64).abs_diff(wk.global_interval) > 2 {
                wk.global_interval = tuned as u64;
            }
            return self
                .inject
                .pop_front()
                .or_else(|| Self::local_task(&mut self.workers[w as usize]));
        }
        if let Some(t) = Self::local_task(wk) {
            return Some(t);
        }
        let room = (LOCAL_QUEUE - wk.local.len()).min(LOCAL_QUEUE / 2);
        let take = (self.inject.len() / n + 1).min(room).max(1);
        let first = self.inject.pop_front()?;
        for _ in 1..take {
            match self.inject.pop_front() {
                Some(t) => wk.local.push_back(t),
                None => break,
            }
        }
        Some(first)
    }

    fn local_task(wk: &mut Worker) -> Option<u32> {
        wk.lifo.take().or_else(|| wk.local.pop_front())
    }

    /// Half of the next worker's local queue (rounded up); the last one
    /// taken runs now. Else one task of the inject queue.
    fn steal(&mut self, w: u32) -> Option<u32> {
        let n = self.workers.len() as u32;
        for k in 1..n {
            let v = ((w + k) % n) as usize;
            let len = self.workers[v].local.len();
            if len == 0 {
                continue;
            }
            let take = len - len / 2;
            for _ in 0..take - 1 {
                let t = self.workers[v].local.pop_front().expect("counted");
                self.workers[w as usize].local.push_back(t);
            }
            return self.workers[v].local.pop_front();
        }
        self.inject.pop_front()
    }

    /// Turn the I/O driver on worker `w`: deliver readiness (waking waiting
    /// tasks into `w`'s LIFO slot), then let the main thread accept.
    fn turn(&mut self, w: u32) {
        std::mem::swap(&mut self.events, &mut self.turning);
        for i in 0..self.turning.len() {
            let slot = self.turning[i];
            let t = &mut self.tasks[slot as usize];
            t.event = false;
            t.ready = true;
            if t.at == At::Parked {
                t.at = At::Queued;
                self.schedule_local(w, slot);
            }
        }
        self.turning.clear();
        if std::mem::take(&mut self.listener_event) {
            while let Some(slot) = self.backlog.pop_front() {
                self.tasks[slot as usize].at = At::Queued;
                self.inject.push_back(slot);
                // registered with its request already in the socket
                self.event(slot);
            }
            self.wake_parked();
        }
        let wk = &self.workers[w as usize];
        if wk.lifo.is_some() as usize + wk.local.len() > 1 {
            self.wake_parked();
        }
    }

    fn schedule_local(&mut self, w: u32, slot: u32) {
        let wk = &mut self.workers[w as usize];
        if let Some(prev) = wk.lifo.replace(slot) {
            if wk.local.len() == LOCAL_QUEUE {
                // overflow: the older half goes to the inject queue
                self.inject.extend(wk.local.drain(..LOCAL_QUEUE / 2));
            }
            wk.local.push_back(prev);
        }
    }

    fn event(&mut self, slot: u32) {
        let t = &mut self.tasks[slot as usize];
        if !t.event {
            t.event = true;
            self.events.push(slot);
        }
    }

    fn has_tasks(&self, w: u32) -> bool {
        let wk = &self.workers[w as usize];
        wk.lifo.is_some() || !wk.local.is_empty()
    }

    fn wake_parked(&mut self) {
        if let Some(w) = self.sleepers.pop() {
            let wk = &mut self.workers[w as usize];
            wk.parked = false;
            wk.woken = true;
            self.runnable.push_back(w);
        }
    }

    /// The moving average of poll times over the polls since the batch
    /// began (`Stats::end_processing_scheduled_tasks`).
    fn end_batch(&mut self, w: u32, now: u64) {
        let wk = &mut self.workers[w as usize];
        if wk.batch_polls > 0 {
            let polls = wk.batch_polls.min(i32::MAX as u32) as i32;
            let mean = now.saturating_sub(wk.batch_start) as f64 / f64::from(polls);
            let alpha = 1.0 - (1.0 - EWMA_ALPHA).powi(polls);
            wk.ewma_ns = alpha * mean + (1.0 - alpha) * wk.ewma_ns;
        }
        wk.batch_polls = 0;
        wk.batch_start = now;
    }
}

#[cfg(test)]
mod tests;
