//! The event queue: a binary min-heap of (time, event). Ties pop in a fixed
//! order (by event), so a simulation is exactly repeatable.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Something that happens at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A leaf step of request `slot` finishes.
    LeafDone { slot: u32, node: u32 },
    /// A wait for a PostgreSQL connection gives up.
    PgWaitOver { id: u64, slot: u32 },
    /// The open loop's next request is due.
    Arrival,
    /// A closed-loop client sends again after a refused request.
    Send,
}

/// Pending events, earliest first; times in ns since the run began.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, Event)>>,
    /// Events pushed so far (the work the simulation did).
    pub pushed: u64,
}

impl EventQueue {
    /// Schedule `event` at `at`.
    pub fn push(&mut self, at: u64, event: Event) {
        self.pushed += 1;
        self.heap.push(Reverse((at, event)));
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Take the earliest event.
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse(e)| e)
    }
}
