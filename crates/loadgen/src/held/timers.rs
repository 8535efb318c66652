//! The run's clock for held connections: one timerfd ([`PreciseTimer`], the
//! request path's) wakes every connection due at once, so opens and message
//! sends leave within microseconds of their intended time rather than on
//! tokio's millisecond tick (which made every send up to 1-2 ms late, as
//! much as a loopback echo takes). One descriptor for the whole run, not
//! one per connection.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use tokio::sync::{oneshot, Notify};

use crate::clock::{now_ns, PreciseTimer};

/// Longest single sleep of the service, so a new earlier deadline is never
/// missed for long even if a wake-up were.
const MAX_SLEEP_NS: u64 = 50_000_000;

/// Sleepers by deadline, woken by [`Timers::serve`].
#[derive(Default)]
pub struct Timers {
    /// `(deadline ns, id)`, earliest first.
    heap: RefCell<BinaryHeap<Reverse<(u64, u64)>>>,
    /// The waiting sleeper of each id (gone once it gave up or was woken).
    waiting: RefCell<HashMap<u64, oneshot::Sender<()>>>,
    next_id: Cell<u64>,
    /// An earlier deadline than the service sleeps toward was added.
    earlier: Notify,
}

impl Timers {
    /// Sleep until the run clock reads `at`. Dropping the future gives up
    /// its place (the entry is discarded when due).
    pub async fn sleep_until(&self, at: u64) {
        if now_ns() >= at {
            return;
        }
        let (tx, rx) = oneshot::channel();
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let first = {
            let mut heap = self.heap.borrow_mut();
            let first = heap.peek().is_none_or(|Reverse((due, _))| at < *due);
            heap.push(Reverse((at, id)));
            first
        };
        self.waiting.borrow_mut().insert(id, tx);
        if first {
            self.earlier.notify_one();
        }
        let _ = rx.await;
    }

    /// Wake every sleeper when its deadline comes; runs until aborted.
    pub async fn serve(&self, timer: &PreciseTimer) {
        loop {
            let now = now_ns();
            let next = self.wake_due(now);
            let until = next.map_or(now + MAX_SLEEP_NS, |at| at.min(now + MAX_SLEEP_NS));
            tokio::select! {
                biased;
                _ = self.earlier.notified() => {}
                r = timer.sleep_until(until) => {
                    if r.is_err() {
                        // No timerfd: fall back to tokio's tick, late but alive.
                        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    }
                }
            }
        }
    }

    /// Wake the sleepers due by `now`; the next deadline, if any.
    fn wake_due(&self, now: u64) -> Option<u64> {
        let mut heap = self.heap.borrow_mut();
        let mut waiting = self.waiting.borrow_mut();
        while let Some(&Reverse((at, id))) = heap.peek() {
            if at > now {
                return Some(at);
            }
            heap.pop();
            if let Some(tx) = waiting.remove(&id) {
                let _ = tx.send(());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleepers_wake_in_order_within_a_millisecond() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let timers = std::rc::Rc::new(Timers::default());
            let timer = PreciseTimer::new().unwrap();
            let service = {
                let t = timers.clone();
                tokio::task::spawn_local(async move { t.serve(&timer).await })
            };
            let start = now_ns();
            let mut late = Vec::new();
            for ms in [30u64, 10, 20] {
                let t = timers.clone();
                late.push(tokio::task::spawn_local(async move {
                    let at = start + ms * 1_000_000;
                    t.sleep_until(at).await;
                    now_ns() - at
                }));
            }
            for h in late {
                let ns = h.await.unwrap();
                assert!(ns < 5_000_000, "woke {ns} ns late");
            }
            service.abort();
        });
    }
}
