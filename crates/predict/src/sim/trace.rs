//! The simulation's spans: the same sample the targets record (the first N
//! requests sent), drawn from the events of one simulated run, so a measured
//! timeline and a predicted one sit side by side.
//!
//! The engine's resources only count units; to draw lanes the trace gives
//! each unit an identity (the lowest free number) when a request takes it
//! and frees it when the request gives it back, for every request while the
//! sample is running (a later request may hold the thread a sampled one gets
//! next). What a thread model does on its thread (CPU steps included) is one
//! running span with its IO waits on top; CPU steps of an event loop are not
//! drawn (the simulation queues them for cores, not for a loop thread).

use std::collections::HashMap;

use iolab_model::concurrency::Shape;
use iolab_model::spans::{
    ms, ClientOutcome, ClientRequest, ClientView, Lane, SampleRule, Span, SpanRequest, SpanSource,
    SpanState, Timeline,
};

const NONE: u32 = u32::MAX;

/// Unit identities of one resource: the lowest free number first.
#[derive(Debug, Default)]
struct Units {
    free: std::collections::BTreeSet<u32>,
    next: u32,
}

impl Units {
    fn take(&mut self) -> u32 {
        match self.free.pop_first() {
            Some(u) => u,
            None => {
                self.next += 1;
                self.next - 1
            }
        }
    }

    fn give(&mut self, u: u32) {
        self.free.insert(u);
    }
}

/// Per request slot: its place in the sample and what it holds.
#[derive(Debug, Clone, Copy)]
struct Slot {
    req: u32,
    thread: u32,
    thread_since: u64,
    queued_since: u64,
}

/// The trace of one simulated run.
#[derive(Debug)]
pub(crate) struct Trace {
    size: u32,
    taken: u32,
    open_reqs: u32,
    slots: Vec<Slot>,
    threads: Units,
    offload: Units,
    /// (slot, node) of an IO leaf in progress: asked for at, begun at (or
    /// `u64::MAX`), offload unit.
    io: HashMap<(u32, u32), (u64, u64, u32)>,
    /// Lane ids by (resource, unit): threads are resource 0, offload 1.
    lanes: HashMap<(u8, u32), u32>,
    names: (&'static str, &'static str),
    out: Timeline,
    client: Vec<ClientRequest>,
}

impl Trace {
    /// A trace of the first `size` requests of a run of `shape`.
    pub(crate) fn new(size: u32, shape: &Shape, timeout_ms: f64) -> Trace {
        let thread = shape.model.def().lane;
        let mut out = Timeline::new(SpanSource::Simulation, size, SampleRule::First);
        out.client = Some(ClientView {
            timeout_ms,
            requests: Vec::new(),
        });
        Trace {
            size,
            taken: 0,
            open_reqs: 0,
            slots: Vec::new(),
            threads: Units::default(),
            offload: Units::default(),
            io: HashMap::new(),
            lanes: HashMap::new(),
            names: (thread, "offload"),
            out,
            client: Vec::new(),
        }
    }

    /// Every sampled request has been answered and its client has its result.
    pub(crate) fn complete(&self) -> bool {
        self.taken == self.size && self.open_reqs == 0
    }

    fn slot(&mut self, slot: u32) -> &mut Slot {
        let i = slot as usize;
        if self.slots.len() <= i {
            let blank = Slot {
                req: NONE,
                thread: NONE,
                thread_since: 0,
                queued_since: 0,
            };
            self.slots.resize(i + 1, blank);
        }
        &mut self.slots[i]
    }

    fn sampled(&mut self, slot: u32) -> Option<u32> {
        Some(self.slot(slot).req).filter(|&r| r != NONE)
    }

    fn lane(&mut self, resource: u8, unit: u32) -> u32 {
        let n = self.lanes.len() as u32;
        let id = *self.lanes.entry((resource, unit)).or_insert(n);
        if id == n {
            let name = if resource == 0 {
                self.names.0
            } else {
                self.names.1
            };
            self.out.lanes.push(Lane {
                id,
                name: name.to_string(),
            });
        }
        id
    }

    fn span(&mut self, req: u32, state: SpanState, lane: Option<u32>, from: u64, to: u64) {
        self.out.spans.push(Span {
            req,
            state,
            lane,
            from_ms: ms(from),
            to_ms: ms(to.max(from)),
        });
    }

    /// Request `slot` was sent at `now` (it waits from here for a thread).
    pub(crate) fn sent(&mut self, slot: u32, now: u64) {
        let req = if self.taken < self.size {
            self.taken += 1;
            self.open_reqs += 2; // the server's answer and the client's result
            self.client.push(ClientRequest {
                sent_ms: ms(now),
                done_ms: None,
                outcome: ClientOutcome::Error,
            });
            self.taken - 1
        } else {
            NONE
        };
        *self.slot(slot) = Slot {
            req,
            thread: NONE,
            thread_since: now,
            queued_since: now,
        };
    }

    /// Request `slot` got its request thread at `now`.
    pub(crate) fn thread_taken(&mut self, slot: u32, now: u64) {
        let unit = self.threads.take();
        let s = self.slot(slot);
        s.thread = unit;
        s.thread_since = now;
        let since = s.queued_since;
        if let Some(req) = self.sampled(slot) {
            if now > since {
                self.span(req, SpanState::Queued, None, since, now);
            }
        }
    }

    /// Request `slot` was answered at `now` (`failure` as the engine names
    /// it), giving back its thread; its client gets the answer if `waiting`.
    pub(crate) fn answered(&mut self, slot: u32, now: u64, failure: Option<&str>, waiting: bool) {
        let status = match failure {
            None => Some(200),
            Some("rejected") => Some(503),
            Some("backend") => Some(502),
            Some(_) => None,
        };
        if waiting {
            let outcome = match failure {
                None => ClientOutcome::Ok,
                Some(_) => ClientOutcome::Error,
            };
            self.client_done(slot, now, outcome);
        }
        let s = *self.slot(slot);
        if s.thread != NONE {
            self.threads.give(s.thread);
            self.slot(slot).thread = NONE;
        }
        let Some(req) = self.sampled(slot) else {
            return;
        };
        if s.thread != NONE {
            let lane = self.lane(0, s.thread);
            self.span(req, SpanState::Running, Some(lane), s.thread_since, now);
        }
        self.out.requests.push(SpanRequest {
            req,
            accepted_ms: ms(s.queued_since),
            done_ms: Some(ms(now)),
            status,
        });
        self.open_reqs -= 1;
    }

    /// The client of request `slot` got its result at `now`.
    pub(crate) fn client_done(&mut self, slot: u32, now: u64, outcome: ClientOutcome) {
        if let Some(req) = self.sampled(slot) {
            let c = &mut self.client[req as usize];
            c.done_ms = Some(ms(now));
            c.outcome = outcome;
            self.open_reqs -= 1;
        }
    }

    /// IO leaf `node` of `slot` is asked for at `now` (it may wait for an
    /// offload thread).
    pub(crate) fn io_asked(&mut self, slot: u32, node: u32, now: u64) {
        self.io.insert((slot, node), (now, u64::MAX, NONE));
    }

    /// IO leaf `node` of `slot` begins at `now`, on an offload thread when
    /// `offload`.
    pub(crate) fn io_begin(&mut self, slot: u32, node: u32, now: u64, offload: bool) {
        let unit = if offload { self.offload.take() } else { NONE };
        let entry = self.io.entry((slot, node)).or_insert((now, now, NONE));
        let asked = entry.0;
        *entry = (asked, now, unit);
        if let Some(req) = self.sampled(slot) {
            if offload && now > asked {
                self.span(req, SpanState::Queued, None, asked, now);
            }
        }
    }

    /// IO leaf `node` of `slot` ends at `now`.
    pub(crate) fn io_end(&mut self, slot: u32, node: u32, now: u64) {
        let Some((_, since, unit)) = self.io.remove(&(slot, node)) else {
            return;
        };
        if unit != NONE {
            self.offload.give(unit);
        }
        let Some(req) = self.sampled(slot) else {
            return;
        };
        let thread = self.slot(slot).thread;
        let (state, lane) = if unit != NONE {
            (SpanState::IoHeld, Some(self.lane(1, unit)))
        } else if thread != NONE {
            (SpanState::IoHeld, Some(self.lane(0, thread)))
        } else {
            (SpanState::IoFree, None)
        };
        self.span(req, state, lane, since, now);
    }

    /// The finished timeline.
    pub(crate) fn finish(mut self) -> Timeline {
        if let Some(c) = self.out.client.as_mut() {
            c.requests = self.client;
        }
        self.out.sample.taken = self.taken;
        // Lanes by first use, as the recorder numbers them.
        let mut first: Vec<(f64, u32)> = self
            .out
            .lanes
            .iter()
            .map(|l| {
                let t = self.out.spans.iter().filter(|s| s.lane == Some(l.id));
                (t.map(|s| s.from_ms).fold(f64::INFINITY, f64::min), l.id)
            })
            .collect();
        first.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let renumber: HashMap<u32, u32> = first
            .iter()
            .enumerate()
            .map(|(i, &(_, id))| (id, i as u32))
            .collect();
        for l in &mut self.out.lanes {
            l.id = renumber[&l.id];
        }
        self.out.lanes.sort_by_key(|l| l.id);
        for s in &mut self.out.spans {
            s.lane = s.lane.map(|l| renumber[&l]);
        }
        self.out.sort();
        self.out
    }
}
