//! The one fixed-size buffer of a recorder: slots of four atomic words,
//! claimed by one atomic add each, written by any thread, read while the
//! writers go on.
//!
//! A sample's spans take slots `start..start + cap` of a monotonic cursor
//! (slot = index % cap); a span past its sample's room is counted lost, never
//! written over another. Opening a new sample moves `start` to the cursor, so
//! a straggler of the old sample can never claim the new one's slots. Each
//! slot is published by its `meta` word (written last, with Release) and read
//! back with a re-check, so a reader never takes a half-written slot.

use std::sync::atomic::{fence, AtomicU64, Ordering};

/// What a slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A span in a state (see `iolab_model::spans::SpanState`).
    Span(iolab_model::spans::SpanState),
    /// A request's accepted..done.
    Request,
}

/// One decoded slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The request within the sample.
    pub req: u32,
    /// What it is.
    pub kind: Kind,
    /// The lane (thread) held, if any.
    pub lane: Option<u32>,
    /// Start, ns since the recorder's base.
    pub from: u64,
    /// End, ns since the recorder's base.
    pub to: u64,
    /// HTTP status of a request record (0: none).
    pub status: u16,
}

const VALID: u64 = 1 << 63;
const GEN_MASK: u64 = 0x7F_FFFF;
const REQUEST: u8 = 0xFF;
const NO_LANE: u64 = 0xFFFF_FFFF;

#[derive(Debug, Default)]
struct Slot {
    meta: AtomicU64,
    from: AtomicU64,
    to: AtomicU64,
    /// lane (low 32 bits, all ones = none) | status << 32.
    extra: AtomicU64,
}

/// The buffer.
#[derive(Debug)]
pub struct Buffer {
    slots: Box<[Slot]>,
    cursor: AtomicU64,
    start: AtomicU64,
    lost: AtomicU64,
}

fn meta(gen: u32, req: u32, kind: Kind) -> u64 {
    let code = match kind {
        Kind::Span(s) => crate::state_code(s),
        Kind::Request => REQUEST,
    };
    VALID
        | ((u64::from(gen) & GEN_MASK) << 40)
        | (u64::from(req & 0xFF_FFFF) << 16)
        | u64::from(code)
}

impl Buffer {
    /// Room for `cap` spans, allocated once, now.
    pub fn new(cap: usize) -> Buffer {
        Buffer {
            slots: (0..cap.max(1)).map(|_| Slot::default()).collect(),
            cursor: AtomicU64::new(0),
            start: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        }
    }

    fn cap(&self) -> u64 {
        self.slots.len() as u64
    }

    /// A new sample starts at the cursor, with nothing lost yet.
    pub fn restart(&self) {
        self.start
            .store(self.cursor.load(Ordering::Acquire), Ordering::Release);
        self.lost.store(0, Ordering::Relaxed);
    }

    /// Count a span that could not be kept.
    pub fn lose(&self) {
        self.lost.fetch_add(1, Ordering::Relaxed);
    }

    /// Spans of the current sample that found no room.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Write one record of sample `gen`.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &self,
        gen: u32,
        req: u32,
        kind: Kind,
        lane: Option<u32>,
        from: u64,
        to: u64,
        status: u16,
    ) {
        let i = self.cursor.fetch_add(1, Ordering::AcqRel);
        let start = self.start.load(Ordering::Acquire);
        if i < start {
            return; // claimed for a sample that has been dropped
        }
        if i - start >= self.cap() {
            return self.lose();
        }
        let slot = &self.slots[(i % self.cap()) as usize];
        slot.meta.store(0, Ordering::Relaxed);
        fence(Ordering::Release);
        slot.from.store(from, Ordering::Relaxed);
        slot.to.store(to, Ordering::Relaxed);
        let lane = lane.map_or(NO_LANE, u64::from);
        slot.extra
            .store(lane | (u64::from(status) << 32), Ordering::Relaxed);
        slot.meta.store(meta(gen, req, kind), Ordering::Release);
    }

    /// Every whole record of sample `gen`, in slot order.
    pub fn read(&self, gen: u32) -> Vec<Record> {
        let end = self.cursor.load(Ordering::Acquire);
        let start = self.start.load(Ordering::Acquire);
        let end = end.min(start + self.cap());
        let want = (u64::from(gen) & GEN_MASK) << 40;
        let mut out = Vec::with_capacity((end.saturating_sub(start)) as usize);
        for i in start..end {
            let slot = &self.slots[(i % self.cap()) as usize];
            let m = slot.meta.load(Ordering::Acquire);
            if m & VALID == 0 || m & (GEN_MASK << 40) != want {
                continue;
            }
            let (from, to, extra) = (
                slot.from.load(Ordering::Relaxed),
                slot.to.load(Ordering::Relaxed),
                slot.extra.load(Ordering::Relaxed),
            );
            fence(Ordering::Acquire);
            if slot.meta.load(Ordering::Relaxed) != m {
                continue; // rewritten while read
            }
            let code = (m & 0xFF) as u8;
            let kind = if code == REQUEST {
                Kind::Request
            } else {
                Kind::Span(iolab_model::spans::SpanState::ALL[usize::from(code).min(3)])
            };
            let lane = extra & NO_LANE;
            out.push(Record {
                req: ((m >> 16) & 0xFF_FFFF) as u32,
                kind,
                lane: (lane != NO_LANE).then_some(lane as u32),
                from,
                to,
                status: (extra >> 32) as u16,
            });
        }
        out
    }
}
