//! The event queue. Nearly every event is "now + a fixed delay" (a leaf's
//! duration, the pg wait limit, a retry), and simulated time only moves
//! forward, so events with the same delay are born in time order: each delay
//! gets a FIFO *lane*, and a small binary heap orders the lanes by their
//! earliest event. Pushing is O(1), popping O(log lanes), and the hot data
//! stays small — a plain heap of millions of events was 5x slower.
//! Ties pop in a fixed order (time, then lane), so runs are repeatable.
//! Leaves whose times are drawn ([`super::noise`]) have no lane: they sit
//! in a plain heap beside the lanes, in push order among equal times.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

/// Names a lane: events pushed to one lane must come in time order.
pub type Lane = usize;

/// Pending events, earliest first; times in ns since the run began.
#[derive(Debug, Default)]
pub struct EventQueue {
    delays: Vec<Option<u64>>,
    lanes: Vec<VecDeque<(u64, Event)>>,
    heads: BinaryHeap<Reverse<(u64, Lane)>>,
    /// Events at any time: (time, push order, event).
    loose: BinaryHeap<Reverse<(u64, u64, Event)>>,
    /// Events pushed so far (the work the simulation did).
    pub pushed: u64,
}

impl EventQueue {
    /// The lane for events pushed at now + `delay` (made on first use).
    pub fn lane_for_delay(&mut self, delay: u64) -> Lane {
        if let Some(i) = self.delays.iter().position(|d| *d == Some(delay)) {
            return i;
        }
        self.new_lane(Some(delay))
    }

    /// A lane of its own, for a source whose times only grow (arrivals).
    pub fn own_lane(&mut self) -> Lane {
        self.new_lane(None)
    }

    fn new_lane(&mut self, delay: Option<u64>) -> Lane {
        self.delays.push(delay);
        self.lanes.push(VecDeque::new());
        self.lanes.len() - 1
    }

    /// Schedule `event` at `at` on `lane`.
    pub fn push(&mut self, lane: Lane, at: u64, event: Event) {
        self.pushed += 1;
        let q = &mut self.lanes[lane];
        debug_assert!(q.back().is_none_or(|(t, _)| *t <= at), "lane out of order");
        if q.is_empty() {
            self.heads.push(Reverse((at, lane)));
        }
        q.push_back((at, event));
    }

    /// Schedule `event` at `at`, whatever the times pushed before.
    pub fn push_loose(&mut self, at: u64, event: Event) {
        self.pushed += 1;
        self.loose.push(Reverse((at, self.pushed, event)));
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        let lanes = self.heads.peek().map(|Reverse((t, _))| *t);
        let loose = self.loose.peek().map(|Reverse((t, _, _))| *t);
        match (lanes, loose) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Take the earliest event (a lane's first among equal times).
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let lanes = self.heads.peek().map(|Reverse((t, _))| *t);
        let loose = self.loose.peek().map(|Reverse((t, _, _))| *t);
        if loose.is_some_and(|l| lanes.is_none_or(|t| l < t)) {
            let Reverse((t, _, e)) = self.loose.pop()?;
            return Some((t, e));
        }
        let Reverse((_, lane)) = self.heads.pop()?;
        let q = &mut self.lanes[lane];
        let e = q.pop_front().expect("a lane in the heap has an event");
        if let Some((t, _)) = q.front() {
            self.heads.push(Reverse((*t, lane)));
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_across_lanes() {
        let mut q = EventQueue::default();
        let a = q.lane_for_delay(10);
        let b = q.lane_for_delay(3);
        assert_eq!(q.lane_for_delay(10), a);
        for now in [0u64, 1, 2, 5] {
            q.push(a, now + 10, Event::Send);
            q.push(b, now + 3, Event::Arrival);
        }
        let times: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(t, _)| t)).collect();
        assert_eq!(times, vec![3, 4, 5, 8, 10, 11, 12, 15]);
        assert_eq!(q.pushed, 8);
        q.push(a, 20, Event::Send);
        q.push_loose(25, Event::Arrival);
        q.push_loose(19, Event::Send);
        q.push_loose(20, Event::Arrival);
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (19, Event::Send),
                (20, Event::Send),
                (20, Event::Arrival),
                (25, Event::Arrival)
            ]
        );
    }
}
