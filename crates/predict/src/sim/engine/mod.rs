//! The event loop: clients send, the server admits, queues and runs each
//! request's program on its resources, clients give up at their timeout.
//!
//! Accounting rules (the same as the load generator's): every request sent is
//! exactly one of ok, timeout, reset, rejected (503), backend (pool wait over)
//! or client-connections (the client had no connection to send on). A request
//! whose client gave up is still run to the end by the server: it keeps its
//! thread and its connection, which is why goodput collapses while throughput
//! does not.

use std::collections::{BTreeMap, HashSet, VecDeque};

use iolab_model::driver::{ConnectionMode, Driver};

mod client;
mod server;

use super::histogram::Histogram;
use super::noise::{Draws, Noise};
use super::program::{Op, Program, NO_PARENT};
use super::queue::{Event, EventQueue, Lane};
use super::resource::{Resource, Then, Waiter};
use super::tokio::Tokio;
use super::{Held, Scheduler, SimInput, SimOutcome};
use crate::calibration::PG_WAIT_NS;
use iolab_model::concurrency::{Admission, Shape};
use iolab_model::schedule::Schedule;

/// A closed-loop client whose request failed at once waits this long before
/// its next one, as a real client reconnecting would (and so time moves on).
const RETRY_NS: u64 = 1_000_000;

#[derive(Debug, Default, Clone)]
struct Req {
    gen: u32,
    sent: u64,
    counters: Vec<u32>,
    new_conn: bool,
    /// The client still waits for the answer.
    waiting: bool,
    /// The server has answered (or refused) it.
    answered: bool,
    /// Holds a server connection slot (limited admission only).
    accepted: bool,
    holds_thread: bool,
    /// The tokio worker serving it ([`super::tokio`]).
    worker: u32,
    /// Leaves started and not finished (including waits for resources).
    pending: u32,
}

enum Source {
    Open(Box<Schedule>),
    Closed {
        requests: Option<u64>,
        until: Option<u64>,
    },
}

struct Client {
    keep_alive: bool,
    max: u32,
    open: u32,
    idle: u32,
}

pub(super) struct Engine<'a> {
    shape: &'a Shape,
    prog: Program,
    q: EventQueue,
    /// Lane of each node's "done" events (by its duration).
    node_lane: Vec<Lane>,
    arrival_lane: Lane,
    retry_lane: Lane,
    pg_wait_lane: Lane,
    now: u64,
    reqs: Vec<Req>,
    free: Vec<u32>,
    threads: Option<Resource>,
    /// Tokio's order for who takes a free worker, instead of `threads`' FIFO.
    tokio: Option<Tokio>,
    cpu: Resource,
    offload: Option<Resource>,
    pg: Resource,
    pg_waiting: HashSet<u64>,
    next_pg_id: u64,
    conns: u32,
    backlog: VecDeque<u32>,
    client: Client,
    deadlines: VecDeque<(u64, u32, u32)>,
    timeout_ns: u64,
    source: Source,
    sent: u64,
    ok: u64,
    errors: BTreeMap<&'static str, u64>,
    latency: Histogram,
    in_server: u64,
    peak_in_server: u64,
    completed: u64,
    completed_in_window: u64,
    window_ns: u64,
    first_timeout_sent: Option<u64>,
    last_answer: u64,
    /// The spans of the first requests, when asked for ([`super::trace`]).
    pub(super) trace: Option<Box<super::trace::Trace>>,
    /// The run's noise and its draws.
    noise: Option<(&'a Noise, Draws)>,
    /// Time integrals over the window of what [`Held`] means, ns x units.
    held: Held,
}

/// Where requests come from (a schedule, or clients that send again on an
/// answer), and the window a rate is counted over (ns).
fn source(driver: &Driver) -> (Source, u64) {
    match driver {
        Driver::Open { phases, arrival } => {
            let d = driver.duration().unwrap_or_default();
            let arrivals = super::arrivals(phases, *arrival);
            (Source::Open(Box::new(arrivals)), d.as_nanos() as u64)
        }
        Driver::Closed {
            requests, duration, ..
        } => {
            let until = duration.map(|d| d.as_nanos() as u64);
            let source = Source::Closed {
                requests: *requests,
                until,
            };
            (source, until.unwrap_or(0))
        }
    }
}

impl<'a> Engine<'a> {
    pub(super) fn new(input: &SimInput<'a>) -> Engine<'a> {
        let shape = input.shape;
        let prog = Program::compile(input.steps, shape.par_concurrent);
        let (keep_alive, max) = match input.connections {
            ConnectionMode::KeepAlive { max } => (true, max),
            ConnectionMode::NewPerRequest { max } => (false, max),
        };
        let (source, window_ns) = source(input.driver);
        let mut q = EventQueue::default();
        let node_lane = prog
            .nodes
            .iter()
            .map(|n| match n.op {
                Op::Cpu { ns } | Op::Io { ns, .. } => q.lane_for_delay(ns),
                _ => 0,
            })
            .collect();
        let arrival_lane = q.own_lane();
        let retry_lane = q.lane_for_delay(RETRY_NS);
        let pg_wait_lane = q.lane_for_delay(PG_WAIT_NS);
        Engine {
            shape,
            node_lane,
            arrival_lane,
            retry_lane,
            pg_wait_lane,
            threads: shape.request_threads.map(|t| Resource::new(t.cap)),
            tokio: match (input.scheduler, shape.request_threads) {
                (Scheduler::Tokio, Some(t)) => Some(Tokio::new(t.cap)),
                _ => None,
            },
            cpu: Resource::new(shape.cpu_servers),
            offload: shape.offload.map(Resource::new),
            pg: Resource::new(input.pg_pool.max(1)),
            prog,
            q,
            now: 0,
            reqs: Vec::new(),
            free: Vec::new(),
            pg_waiting: HashSet::new(),
            next_pg_id: 0,
            conns: 0,
            backlog: VecDeque::new(),
            client: Client {
                keep_alive,
                max: max.max(1),
                open: 0,
                idle: 0,
            },
            deadlines: VecDeque::new(),
            timeout_ns: input.timeout.as_nanos() as u64,
            source,
            sent: 0,
            ok: 0,
            errors: BTreeMap::new(),
            latency: Histogram::default(),
            in_server: 0,
            peak_in_server: 0,
            completed: 0,
            completed_in_window: 0,
            window_ns,
            first_timeout_sent: None,
            last_answer: 0,
            trace: None,
            noise: input.noise.map(|n| (n, Draws::new(n.seed))),
            held: Held::default(),
        }
    }

    /// Add what the resources held from now to `t` (within the window).
    fn integrate(&mut self, t: u64) {
        let end = if self.window_ns == 0 {
            t
        } else {
            t.min(self.window_ns)
        };
        if end <= self.now {
            return;
        }
        let dt = (end - self.now) as f64;
        // A stalled core computes nothing: not counted busy.
        let running = self
            .noise
            .as_ref()
            .map_or(dt, |(n, _)| n.running_ns(self.now, end) as f64);
        let threads = match (&self.threads, &self.offload) {
            (Some(r), _) | (None, Some(r)) => r.busy,
            (None, None) => 0,
        };
        self.held.cpu += running * f64::from(self.cpu.busy);
        self.held.cpu_waiting += running * self.cpu.waiting() as f64;
        self.held.pg_waiting += dt * self.pg_waiting.len() as f64;
        self.held.threads += dt * f64::from(threads);
        self.held.pg += dt * f64::from(self.pg.busy);
    }

    /// When a leaf of `ns` started now ends: `ns` from now, or as the
    /// run's noise draws it.
    pub(super) fn leaf_end(&mut self, node: u32, ns: u64) -> Option<u64> {
        let (noise, draws) = self.noise.as_mut()?;
        let cpu = matches!(self.prog.nodes[node as usize].op, Op::Cpu { .. });
        Some(noise.leaf_end(draws, self.now, ns, cpu))
    }

    /// Run to the end and report.
    pub(super) fn run(mut self, concurrency: u32) -> SimOutcome {
        self.drive(concurrency);
        self.outcome()
    }

    /// Run to the end (or, when tracing, until the sample is complete).
    pub(super) fn drive(&mut self, concurrency: u32) {
        let horizon = match &mut self.source {
            Source::Open(arrivals) => {
                if let Some(t) = arrivals.next() {
                    self.q.push(self.arrival_lane, t, Event::Arrival);
                }
                self.window_ns + self.timeout_ns
            }
            Source::Closed { until, .. } => until.map_or(u64::MAX, |u| u + self.timeout_ns),
        };
        if matches!(self.source, Source::Closed { .. }) {
            for _ in 0..concurrency.min(self.client.max) {
                if self.may_send() {
                    self.send();
                }
            }
        }
        loop {
            let ev = self.q.peek_time();
            let dl = self.deadlines.front().map(|d| d.0);
            let t = match (ev, dl) {
                (None, None) => break,
                (Some(e), None) => e,
                (None, Some(d)) => d,
                (Some(e), Some(d)) => e.min(d),
            };
            if t > horizon || self.trace.as_ref().is_some_and(|t| t.complete()) {
                break;
            }
            self.integrate(t);
            self.now = t;
            if ev == Some(t) {
                let (_, e) = self.q.pop().expect("peeked");
                self.handle(e);
            } else {
                let (_, slot, gen) = self.deadlines.pop_front().expect("peeked");
                self.deadline(slot, gen);
            }
        }
    }

    pub(super) fn outcome(self) -> SimOutcome {
        let window_ns = if self.window_ns == 0 {
            self.last_answer
        } else {
            self.window_ns
        };
        let peak_threads = match (&self.threads, &self.offload) {
            (Some(t), _) => t.peak as u64,
            (None, Some(o)) => (self.shape.fixed_threads + o.peak) as u64,
            (None, None) => self.shape.fixed_threads as u64,
        };
        let per_ns = 1.0 / (window_ns.max(1) as f64);
        let h = self.held;
        SimOutcome {
            held: Held {
                cpu: h.cpu * per_ns,
                cpu_waiting: h.cpu_waiting * per_ns,
                threads: h.threads * per_ns,
                pg: h.pg * per_ns,
                pg_waiting: h.pg_waiting * per_ns,
            },
            pg_peak: self.pg.peak,
            left_in_server: self.in_server,
            offered: self.sent,
            ok: self.ok,
            errors: self.errors,
            completed: self.completed,
            completed_in_window: self.completed_in_window,
            window_s: window_ns as f64 / 1e9,
            latency: self.latency,
            peak_in_flight: self.peak_in_server,
            peak_threads,
            first_timeout_sent_s: self.first_timeout_sent.map(|t| t as f64 / 1e9),
            events: self.q.pushed,
            unloaded_ns: self.prog.unloaded_ns(),
            work_ns: self.prog.work_ns(),
        }
    }

    pub(super) fn handle(&mut self, e: Event) {
        match e {
            Event::Arrival => {
                self.send();
                if let Source::Open(a) = &mut self.source {
                    if let Some(t) = a.next() {
                        self.q.push(self.arrival_lane, t, Event::Arrival);
                    }
                }
            }
            Event::Send => {
                if self.may_send() {
                    self.send();
                }
            }
            Event::LeafDone { slot, node } => self.leaf_done(slot, node),
            Event::PgWaitOver { id, slot } => {
                if self.pg_waiting.remove(&id) {
                    self.release_offload();
                    self.reqs[slot as usize].pending -= 1;
                    if !self.reqs[slot as usize].answered {
                        self.answer(slot, Some("backend"));
                    }
                    self.maybe_free(slot);
                }
            }
        }
    }

    pub(super) fn may_send(&self) -> bool {
        match self.source {
            Source::Open(_) => true,
            Source::Closed { requests, until } => {
                requests.is_none_or(|r| self.sent < r) && until.is_none_or(|u| self.now < u)
            }
        }
    }

    pub(super) fn count_error(&mut self, kind: &'static str) {
        *self.errors.entry(kind).or_insert(0) += 1;
    }
}
