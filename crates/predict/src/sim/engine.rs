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
use iolab_model::schedule::Schedule;

use super::histogram::Histogram;
use super::program::{Op, Program, NO_PARENT};
use super::queue::{Event, EventQueue, Lane};
use super::resource::{Resource, Then, Waiter};
use super::server::{Admission, Shape};
use super::{SimInput, SimOutcome};
use crate::calibration::PG_WAIT_NS;

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
}

impl<'a> Engine<'a> {
    pub(super) fn new(input: &SimInput<'a>) -> Engine<'a> {
        let shape = input.shape;
        let prog = Program::compile(input.steps, shape.par_concurrent);
        let (keep_alive, max) = match input.connections {
            ConnectionMode::KeepAlive { max } => (true, max),
            ConnectionMode::NewPerRequest { max } => (false, max),
        };
        let (source, window_ns) = match input.driver {
            Driver::Open { phases, arrival } => {
                let d: std::time::Duration = phases.iter().map(|p| p.duration).sum();
                let arrivals = super::arrivals(phases, *arrival);
                (Source::Open(Box::new(arrivals)), d.as_nanos() as u64)
            }
            Driver::Closed {
                requests, duration, ..
            } => {
                let until = duration.map(|d| d.as_nanos() as u64);
                (
                    Source::Closed {
                        requests: *requests,
                        until,
                    },
                    until.unwrap_or(0),
                )
            }
        };
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
        }
    }

    /// Run to the end and report.
    pub(super) fn run(mut self, concurrency: u32) -> SimOutcome {
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
            if t > horizon {
                break;
            }
            self.now = t;
            if ev == Some(t) {
                let (_, e) = self.q.pop().expect("peeked");
                self.handle(e);
            } else {
                let (_, slot, gen) = self.deadlines.pop_front().expect("peeked");
                self.deadline(slot, gen);
            }
        }
        self.outcome()
    }

    fn outcome(self) -> SimOutcome {
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
        SimOutcome {
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

    fn handle(&mut self, e: Event) {
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

    fn may_send(&self) -> bool {
        match self.source {
            Source::Open(_) => true,
            Source::Closed { requests, until } => {
                requests.is_none_or(|r| self.sent < r) && until.is_none_or(|u| self.now < u)
            }
        }
    }

    fn count_error(&mut self, kind: &'static str) {
        *self.errors.entry(kind).or_insert(0) += 1;
    }

    fn send(&mut self) {
        self.sent += 1;
        let c = &mut self.client;
        let new_conn = if c.keep_alive && c.idle > 0 {
            c.idle -= 1;
            false
        } else if c.open < c.max {
            c.open += 1;
            true
        } else {
            self.count_error("client-connections");
            self.client_free_again(true);
            return;
        };
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.reqs.push(Req::default());
                (self.reqs.len() - 1) as u32
            }
        };
        let n = self.prog.nodes.len();
        let r = &mut self.reqs[slot as usize];
        r.sent = self.now;
        r.new_conn = new_conn;
        r.waiting = true;
        r.answered = false;
        r.accepted = false;
        r.holds_thread = false;
        r.pending = 0;
        r.counters.resize(n, 0);
        self.deadlines
            .push_back((self.now + self.timeout_ns, slot, r.gen));
        self.in_server += 1;
        self.admit(slot);
        // after admission, so a refused request never counts as in the server
        self.peak_in_server = self.peak_in_server.max(self.in_server);
    }

    fn admit(&mut self, slot: u32) {
        match self.shape.admission {
            Admission::Open => self.exec(slot),
            Admission::Limited {
                max_connections,
                backlog,
            } => {
                if !self.reqs[slot as usize].new_conn {
                    self.reqs[slot as usize].accepted = true;
                    self.exec(slot);
                } else if self.conns < max_connections {
                    self.conns += 1;
                    self.reqs[slot as usize].accepted = true;
                    self.exec(slot);
                } else if self.backlog.len() < backlog as usize {
                    self.backlog.push_back(slot);
                } else {
                    self.answer(slot, Some("reset"));
                    self.maybe_free(slot);
                }
            }
        }
    }

    fn exec(&mut self, slot: u32) {
        match (self.shape.request_threads, self.threads.as_mut()) {
            (Some(rt), Some(threads)) => {
                if rt.reject_when_full && !threads.free() {
                    self.answer(slot, Some("rejected"));
                    self.maybe_free(slot);
                } else if threads.acquire(Waiter {
                    slot,
                    node: 0,
                    then: Then::Start,
                }) {
                    self.reqs[slot as usize].holds_thread = true;
                    self.start_node(slot, 0);
                }
            }
            _ => self.start_node(slot, 0),
        }
    }

    fn start_node(&mut self, slot: u32, node: u32) {
        match self.prog.nodes[node as usize].op {
            Op::Cpu { ns } => {
                self.reqs[slot as usize].pending += 1;
                if self.cpu.acquire(Waiter {
                    slot,
                    node,
                    then: Then::Cpu,
                }) {
                    self.leaf_at(slot, node, ns);
                }
            }
            Op::Io { .. } => {
                self.reqs[slot as usize].pending += 1;
                let go = match self.offload.as_mut() {
                    Some(off) => off.acquire(Waiter {
                        slot,
                        node,
                        then: Then::Io,
                    }),
                    None => true,
                };
                if go {
                    self.io_begin(slot, node);
                }
            }
            Op::Seq { first, .. } => {
                self.reqs[slot as usize].counters[node as usize] = 0;
                let c = self.prog.child(first, 0);
                self.start_node(slot, c);
            }
            Op::Par { first, len } => {
                self.reqs[slot as usize].counters[node as usize] = len;
                for i in 0..len {
                    let c = self.prog.child(first, i);
                    self.start_node(slot, c);
                }
            }
        }
    }

    fn io_begin(&mut self, slot: u32, node: u32) {
        let Op::Io { ns, pg } = self.prog.nodes[node as usize].op else {
            unreachable!("io_begin on a non-IO node")
        };
        if pg {
            let id = self.next_pg_id;
            self.next_pg_id += 1;
            if !self.pg.acquire(Waiter {
                slot,
                node,
                then: Then::Pg { id },
            }) {
                self.pg_waiting.insert(id);
                self.q.push(
                    self.pg_wait_lane,
                    self.now + PG_WAIT_NS,
                    Event::PgWaitOver { id, slot },
                );
                return;
            }
        }
        self.leaf_at(slot, node, ns);
    }

    /// Schedule the end of leaf `node` of `slot`, `ns` from now.
    fn leaf_at(&mut self, slot: u32, node: u32, ns: u64) {
        let lane = self.node_lane[node as usize];
        self.q
            .push(lane, self.now + ns, Event::LeafDone { slot, node });
    }

    fn leaf_done(&mut self, slot: u32, node: u32) {
        match self.prog.nodes[node as usize].op {
            Op::Cpu { .. } => {
                if let Some(w) = self.cpu.release() {
                    let Op::Cpu { ns } = self.prog.nodes[w.node as usize].op else {
                        unreachable!()
                    };
                    self.leaf_at(w.slot, w.node, ns);
                }
            }
            Op::Io { pg, .. } => {
                if pg {
                    self.release_pg();
                }
                self.release_offload();
            }
            _ => unreachable!("only leaves finish"),
        }
        self.reqs[slot as usize].pending -= 1;
        if self.reqs[slot as usize].answered {
            self.maybe_free(slot);
            return;
        }
        self.node_done(slot, node);
    }

    fn release_pg(&mut self) {
        while let Some(w) = self.pg.release() {
            let Then::Pg { id } = w.then else {
                unreachable!()
            };
            if self.pg_waiting.remove(&id) {
                let Op::Io { ns, .. } = self.prog.nodes[w.node as usize].op else {
                    unreachable!()
                };
                self.leaf_at(w.slot, w.node, ns);
                return;
            }
            // that waiter gave up already: hand the connection on
        }
    }

    fn release_offload(&mut self) {
        if let Some(off) = self.offload.as_mut() {
            if let Some(w) = off.release() {
                self.io_begin(w.slot, w.node);
            }
        }
    }

    fn node_done(&mut self, slot: u32, mut node: u32) {
        loop {
            let parent = self.prog.nodes[node as usize].parent;
            if parent == NO_PARENT {
                self.answer(slot, None);
                self.maybe_free(slot);
                return;
            }
            let counter = &mut self.reqs[slot as usize].counters[parent as usize];
            match self.prog.nodes[parent as usize].op {
                Op::Seq { first, len } => {
                    *counter += 1;
                    if *counter < len {
                        let c = self.prog.child(first, *counter);
                        self.start_node(slot, c);
                        return;
                    }
                }
                Op::Par { .. } => {
                    *counter -= 1;
                    if *counter > 0 {
                        return;
                    }
                }
                _ => unreachable!("leaves have no children"),
            }
            node = parent;
        }
    }

    /// The server answers request `slot`: success, or the failure named.
    fn answer(&mut self, slot: u32, failure: Option<&'static str>) {
        let now = self.now;
        let r = &mut self.reqs[slot as usize];
        r.answered = true;
        let held = std::mem::take(&mut r.holds_thread);
        let (waiting, accepted, sent) = (r.waiting, r.accepted, r.sent);
        r.waiting = false;
        self.in_server -= 1;
        if failure.is_none() {
            self.completed += 1;
            if now <= self.window_ns {
                self.completed_in_window += 1;
            }
        }
        let close_conn = if waiting {
            self.last_answer = self.last_answer.max(now);
            match failure {
                None => {
                    self.ok += 1;
                    self.latency.record((now - sent) / 1_000);
                }
                Some(kind) => self.count_error(kind),
            }
            let reset = failure == Some("reset");
            if self.client.keep_alive && !reset {
                self.client.idle += 1;
            } else {
                self.client.open -= 1;
            }
            accepted && !self.client.keep_alive
        } else {
            accepted
        };
        if held {
            if let Some(w) = self.threads.as_mut().and_then(Resource::release) {
                self.reqs[w.slot as usize].holds_thread = true;
                self.start_node(w.slot, 0);
            }
        }
        if close_conn {
            self.close_conn();
        }
        if waiting {
            self.client_free_again(failure.is_some() && now == sent);
        }
    }

    fn close_conn(&mut self) {
        self.conns -= 1;
        if let Some(s) = self.backlog.pop_front() {
            self.conns += 1;
            self.reqs[s as usize].accepted = true;
            self.exec(s);
        }
    }

    /// A closed-loop client got its answer (or gave up): send the next one.
    fn client_free_again(&mut self, failed_at_once: bool) {
        if let Source::Closed { .. } = self.source {
            if failed_at_once {
                self.q
                    .push(self.retry_lane, self.now + RETRY_NS, Event::Send);
            } else if self.may_send() {
                self.send();
            }
        }
    }

    fn deadline(&mut self, slot: u32, gen: u32) {
        let r = &mut self.reqs[slot as usize];
        if r.gen != gen || !r.waiting {
            return;
        }
        r.waiting = false;
        let sent = r.sent;
        self.count_error("timeout");
        self.first_timeout_sent.get_or_insert(sent);
        // the client closes its connection; the server keeps the request
        self.client.open -= 1;
        self.maybe_free(slot);
        self.client_free_again(false);
    }

    fn maybe_free(&mut self, slot: u32) {
        let r = &mut self.reqs[slot as usize];
        if !r.waiting && r.answered && r.pending == 0 {
            r.gen = r.gen.wrapping_add(1);
            r.answered = false;
            self.free.push(slot);
        }
    }
}
