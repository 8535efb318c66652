//! What one generator thread sends: its share of the plan (and of its
//! shard), computed once and handed to whichever engine runs the thread.

use iolab_model::attack::AttackPlan;
use iolab_model::driver::Driver;
use iolab_model::schedule::Schedule;

use crate::generator::{ns, share, RunCtx};
use crate::shard;

/// What one generator thread sends: its share of the plan (and of its
/// shard), the same for every engine.
pub enum ThreadShare {
    /// Its round-robin share of the schedule, on at most `cap` connections.
    Open { schedule: Schedule, cap: usize },
    /// `clients` clients sharing `requests` (if bounded) until `end_ns`.
    Closed {
        clients: usize,
        requests: Option<u64>,
        end_ns: u64,
    },
}

impl ThreadShare {
    /// Connections this thread may hold at once.
    pub fn slots(&self) -> usize {
        match self {
            ThreadShare::Open { cap, .. } => *cap,
            ThreadShare::Closed { clients, .. } => *clients,
        }
    }

    pub(crate) fn of(plan: &AttackPlan, ctx: &RunCtx, i: usize, threads: usize) -> ThreadShare {
        match &plan.driver {
            Driver::Open { phases, arrival } => ThreadShare::Open {
                schedule: shard::thread_schedule(plan, phases, *arrival, i, threads),
                cap: share(shard::connection_cap(plan), i, threads) as usize,
            },
            Driver::Closed {
                concurrency,
                requests,
                duration,
            } => {
                let (clients, requests) = shard::closed_share(plan, *concurrency, *requests);
                ThreadShare::Closed {
                    clients: share(clients, i, threads) as usize,
                    requests: requests.map(|n| share(n, i, threads)),
                    end_ns: duration.map_or(u64::MAX, |d| ctx.start_ns.saturating_add(ns(d))),
                }
            }
        }
    }
}
