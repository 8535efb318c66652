//! How a plan is dealt to generator threads: how many there are
//! ([`thread_count`]) and what each one sends, its share of the plan (and of
//! its shard), computed once and handed to whichever engine runs it.

use iolab_model::attack::AttackPlan;
use iolab_model::driver::Driver;
use iolab_model::schedule::Schedule;

use crate::run_ctx::{ns, share, RunCtx};
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
        let cap = share(shard::connection_cap(plan), i, threads) as usize;
        match (&plan.driver, shard::thread_schedule(plan, i, threads)) {
            (_, Some(schedule)) => ThreadShare::Open { schedule, cap },
            (Driver::Open { .. }, None) => unreachable!("an open loop has a schedule"),
            (
                Driver::Closed {
                    concurrency,
                    requests,
                    duration,
                },
                None,
            ) => {
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

/// Threads used: requested, else one per pinned CPU, else one per core;
/// never more than connections (or clients).
pub fn thread_count(plan: &AttackPlan) -> usize {
    let wanted = plan.threads.unwrap_or_else(|| {
        if plan.cpus.is_empty() {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            plan.cpus.len()
        }
    });
    let mut limit = shard::connection_cap(plan) as usize;
    if let Driver::Closed { concurrency, .. } = plan.driver {
        limit = limit.min(shard::closed_share(plan, concurrency, None).0 as usize);
    }
    wanted.min(limit).max(1)
}
