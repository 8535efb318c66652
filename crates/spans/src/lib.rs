//! Recording who held what, when, for a bounded sample of requests (or batch
//! tasks): the spans behind the report's thread timelines (`iolab.spans/1`).
//!
//! A [`Recorder`] holds one sample of N requests, chosen by the rule
//! [`SampleRule::First`]: the first N that reach the server after the sample
//! opened ([`Recorder::open`]); a batch samples tasks `0..N`
//! ([`Recorder::admit_index`]). An admitted request gets a [`Tag`]; the code
//! that serves it records spans through the tag: queued, running on this
//! thread, waiting on IO holding this thread ([`held`]) or holding none
//! ([`free`]). The tag travels with the request: a thread-local while a
//! thread runs it ([`Tag::enter`]), a tokio task-local across awaits
//! ([`Tag::scope`]).
//!
//! Cheap when on, nothing when off:
//! - every span goes into one fixed-size buffer allocated when the recorder
//!   is made (16 slots of 32 bytes per sampled request, [`buffer`]): no
//!   allocation per request, one atomic add per span;
//! - once N requests are admitted the sample is closed: a request then costs
//!   one atomic load, and every helper returns at once when no tag is current;
//! - each thread gets its lane (a number and its name) the first time it
//!   records, once per thread, never per request.
//!
//! Why one buffer and not a ring per thread: with the "first N" rule the
//! whole sample is N x (spans per request), but one thread may serve all of
//! it (the sequential model) or only one request (thread-per-request); one
//! shared buffer of exactly that size bounds memory for every model, where a
//! ring per thread would need the whole sample's room in each thread.

pub mod buffer;
mod current;
mod read;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use iolab_model::spans::{SampleRule, SpanSource, SpanState, Timeline};

use buffer::{Buffer, Kind};

pub use current::{current, free, held, on_thread, running, Entered};

/// Slots reserved per sampled request: a request record, a queue wait, its
/// running span and IO waits (a fan-out of three blocking calls on an
/// offload pool uses seven). A workload with more leaves than fit loses its
/// latest spans, counted in the sample's `lost`.
pub const SLOTS_PER_REQUEST: usize = 16;

/// Most threads one sample draws a lane for (more are counted as lost).
pub const MAX_LANES: usize = 4096;

/// Gives every recorder its own id, so a thread's lane is per recorder.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One sample's recorder, shared by every thread of a server or batch.
#[derive(Debug)]
pub struct Recorder {
    id: u64,
    size: u32,
    base: Instant,
    base_unix_ns: u64,
    /// `gen << 32 | admitted`: the current sample and how many it holds,
    /// one word so an admission reads both at once.
    state: AtomicU64,
    /// When the current sample opened, ns since `base`.
    opened_ns: AtomicU64,
    buffer: Buffer,
    /// Lane names by lane id, in order of first use (over all samples).
    lanes: Mutex<Vec<String>>,
}

/// A sampled request (or task): the handle its spans are recorded through.
#[derive(Debug, Clone)]
pub struct Tag {
    rec: Arc<Recorder>,
    gen: u32,
    req: u32,
}

impl Recorder {
    /// A recorder of samples of `size` requests; the first sample opens now.
    pub fn new(size: u32) -> Arc<Recorder> {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let size = size.clamp(1, iolab_model::spans::MAX_SAMPLE);
        Arc::new(Recorder {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            size,
            base: Instant::now(),
            base_unix_ns: unix,
            state: AtomicU64::new(1 << 32),
            opened_ns: AtomicU64::new(0),
            buffer: Buffer::new(size as usize * SLOTS_PER_REQUEST),
            lanes: Mutex::new(Vec::new()),
        })
    }

    /// The sample's size N.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Drop what was recorded and open a new sample of the same size (the
    /// runner does this after the warm-up, just before the measured load).
    pub fn open(&self) {
        let gen = (self.state.load(Ordering::Acquire) >> 32) as u32;
        let next = gen.wrapping_add(1).max(1);
        self.opened_ns
            .store(self.ns(Instant::now()), Ordering::Relaxed);
        self.buffer.restart();
        self.state.store(u64::from(next) << 32, Ordering::Release);
    }

    /// Is the sample still taking requests? (One atomic load.)
    pub fn is_open(&self) -> bool {
        (self.state.load(Ordering::Relaxed) as u32) < self.size
    }

    /// Take the next request into the sample, if it is still open.
    pub fn admit(self: &Arc<Self>) -> Option<Tag> {
        if !self.is_open() {
            return None;
        }
        let v = self.state.fetch_add(1, Ordering::AcqRel);
        let req = v as u32;
        (req < self.size).then(|| Tag {
            rec: self.clone(),
            gen: (v >> 32) as u32,
            req,
        })
    }

    /// Task `i` of a batch, if it is one of the first N.
    pub fn admit_index(self: &Arc<Self>, i: usize) -> Option<Tag> {
        (i < self.size as usize).then(|| Tag {
            rec: self.clone(),
            gen: self.gen(),
            req: i as u32,
        })
    }

    fn gen(&self) -> u32 {
        (self.state.load(Ordering::Acquire) >> 32) as u32
    }

    fn ns(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.base).as_nanos() as u64
    }

    /// The current sample as an `iolab.spans/1` document.
    pub fn timeline(&self, source: SpanSource) -> Timeline {
        read::timeline(self, source)
    }

    /// This thread's lane in this recorder, made on first use and named
    /// `role` (or the thread's name); `None` once [`MAX_LANES`] are taken.
    fn lane(&self, role: Option<&'static str>) -> Option<u32> {
        current::lane_of(self.id, || {
            let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
            if lanes.len() >= MAX_LANES {
                return None;
            }
            let name = role.map(str::to_string).unwrap_or_else(|| {
                std::thread::current()
                    .name()
                    .unwrap_or("thread")
                    .to_string()
            });
            lanes.push(name);
            Some((lanes.len() - 1) as u32)
        })
    }
}

impl Tag {
    /// The request's number within the sample.
    pub fn req(&self) -> u32 {
        self.req
    }

    /// Record `state` from `from` to `to`: on this thread's lane when the
    /// state holds a thread, else on none.
    pub fn span(&self, state: SpanState, from: Instant, to: Instant) {
        self.span_as(state, None, from, to);
    }

    /// [`Tag::span`], naming this thread's lane `role` if it has none yet
    /// (e.g. `offload` for an offload pool's thread).
    pub fn span_as(
        &self,
        state: SpanState,
        role: Option<&'static str>,
        from: Instant,
        to: Instant,
    ) {
        let lane = if state.holds_thread() {
            match self.rec.lane(role) {
                Some(l) => Some(l),
                None => return self.rec.buffer.lose(),
            }
        } else {
            None
        };
        self.put(Kind::Span(state), lane, from, to, 0);
    }

    /// Record the request as accepted at `accepted` and done at `done`,
    /// with the HTTP status it was answered with.
    pub fn request(&self, accepted: Instant, done: Instant, status: Option<u16>) {
        self.put(Kind::Request, None, accepted, done, status.unwrap_or(0));
    }

    fn put(&self, kind: Kind, lane: Option<u32>, from: Instant, to: Instant, status: u16) {
        if self.rec.gen() != self.gen {
            return; // a request of a sample that has since been dropped
        }
        let (from, to) = (self.rec.ns(from), self.rec.ns(to));
        self.rec
            .buffer
            .push(self.gen, self.req, kind, lane, from, to.max(from), status);
    }
}

/// `state` as a number for [`buffer`].
pub(crate) fn state_code(s: SpanState) -> u8 {
    SpanState::ALL.iter().position(|x| *x == s).unwrap_or(0) as u8
}

/// The rule every recorder here samples by.
pub const RULE: SampleRule = SampleRule::First;

#[cfg(test)]
mod tests;
