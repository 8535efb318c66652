//! A shard of a plan (`--shard i/n`, `--start-at`): which requests this host
//! sends, when its run clock starts, what its document records for a merge
//! ([`record`]), and the merge of shard documents into one ([`combine`]).
//!
//! Open loop: request k of the plan's one [`Schedule`] is shard
//! `k mod n`'s, and within a shard its threads deal the shard's requests
//! round-robin, so thread t of T in shard i sends points
//! `(i - 1) + n t + n T j`: every shard walks the same schedule (Poisson
//! gaps from the same seed) and keeps its own residue. Closed loop: clients,
//! the `--requests` bound and the connection cap split as evenly as
//! possible. Every shard's run clock starts at the plan's start, so its
//! series, CSV rows and HDR log are on the full plan's clock.

pub mod combine;
pub mod hist;
pub(crate) mod record;

pub use record::plan_hash;

use std::time::{SystemTime, UNIX_EPOCH};

use iolab_model::attack::AttackPlan;
use iolab_model::driver::{Arrival, Driver};
use iolab_model::schedule::Schedule;
use iolab_model::shard::{Shard, MAX_START_LEAD};

use crate::clock::{now_ns, PreciseTimer};
use crate::run_ctx::RunCtx;

/// Longest single wait for the start, so a cancel is seen while waiting.
const START_POLL_NS: u64 = 50_000_000;

/// The plan's shard (the whole plan when none is set).
pub fn of(plan: &AttackPlan) -> Shard {
    plan.shard.unwrap_or(Shard::WHOLE)
}

/// The sends generator thread `i` of `threads` makes in an open loop (none
/// in a closed one): its round-robin share of its shard's share of the
/// plan's one [`Schedule`] (request k goes to shard k mod n, then to thread
/// k div n mod threads), which is also what `predict` simulates (a test in
/// `lab` holds the two together).
pub fn thread_schedule(plan: &AttackPlan, i: usize, threads: usize) -> Option<Schedule> {
    let Driver::Open { phases, arrival } = &plan.driver else {
        return None;
    };
    let s = of(plan);
    let n = s.count as usize;
    Some(Schedule::share(
        phases,
        *arrival,
        s.offset() as usize + n * i,
        n * threads,
    ))
}

/// A closed loop's clients and request bound for this shard.
pub fn closed_share(
    plan: &AttackPlan,
    concurrency: u32,
    requests: Option<u64>,
) -> (u64, Option<u64>) {
    let s = of(plan);
    (
        s.share(u64::from(concurrency)),
        requests.map(|n| s.share(n)),
    )
}

/// This shard's part of the connection cap.
pub fn connection_cap(plan: &AttackPlan) -> u64 {
    of(plan).share(u64::from(plan.connections.max()))
}

/// A shard that would send nothing, or a start that cannot be meant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// `--start-at` further ahead than a start is meant.
    #[error("--start-at is more than {} ahead (milliseconds given as seconds?): give Unix seconds or RFC 3339", iolab_model::format_duration(MAX_START_LEAD))]
    StartTooFar,
    /// `--start-at` already past when the run began.
    #[error("--start-at is {} in the past: this {} started late; give a start a few seconds ahead", iolab_model::format_duration(*by), match shard { Some(s) => format!("shard {s}"), None => "run".into() })]
    Late {
        /// By how much.
        by: std::time::Duration,
        /// This shard, when the plan is cut.
        shard: Option<Shard>,
    },
    /// Fewer connections than shards.
    #[error("--connections {connections} leaves shard {shard} none: give at least {} (one per shard)", shard.count)]
    NoConnections {
        /// The plan's connection cap.
        connections: u32,
        /// This shard.
        shard: Shard,
    },
    /// Fewer clients than shards.
    #[error("--concurrency {concurrency} cannot be split into {count} shards: give at least one client per shard")]
    Clients {
        /// The plan's clients.
        concurrency: u32,
        /// Shards.
        count: u32,
    },
    /// Fewer requests than shards.
    #[error("--requests {requests} cannot be split into {count} shards: give at least one request per shard")]
    Requests {
        /// The plan's requests.
        requests: u64,
        /// Shards.
        count: u32,
    },
    /// An open loop planning fewer requests than shards.
    #[error("the plan has {planned} requests, fewer than {count} shards: raise the rate or duration, or use fewer shards")]
    Planned {
        /// Requests the plan schedules.
        planned: u64,
        /// Shards.
        count: u32,
    },
}

/// Refuse a shard that would send nothing, or a start that cannot be meant.
pub fn validate(plan: &AttackPlan) -> Result<(), ShardError> {
    if let Some(at) = plan.start_at_unix_ms {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        if at.saturating_sub(now.as_millis() as u64) > MAX_START_LEAD.as_millis() as u64 {
            return Err(ShardError::StartTooFar);
        }
    }
    let Some(s) = plan.shard else {
        return Ok(());
    };
    let n = s.count;
    if connection_cap(plan) == 0 {
        return Err(ShardError::NoConnections {
            connections: plan.connections.max(),
            shard: s,
        });
    }
    match &plan.driver {
        Driver::Closed {
            concurrency,
            requests,
            ..
        } => {
            if u64::from(*concurrency) < u64::from(n) {
                return Err(ShardError::Clients {
                    concurrency: *concurrency,
                    count: n,
                });
            }
            if let Some(requests) = requests.filter(|&r| r < u64::from(n)) {
                return Err(ShardError::Requests { requests, count: n });
            }
        }
        Driver::Open {
            arrival: Arrival::Constant,
            ..
        } => {
            let planned = plan.driver.planned().unwrap_or(0);
            if planned < u64::from(n) {
                return Err(ShardError::Planned { planned, count: n });
            }
        }
        Driver::Open { .. } => {}
    }
    Ok(())
}

/// Requests the full plan schedules (`None`: a closed loop bounded by time).
pub fn plan_requests(plan: &AttackPlan) -> Option<u64> {
    match &plan.driver {
        Driver::Open {
            phases,
            arrival: arrival @ Arrival::Poisson { .. },
        } => Some(Schedule::new(phases, *arrival).count() as u64),
        d => d.planned(),
    }
}

/// Where a run's clock starts: on the run clock (ns) and in Unix ms.
pub struct Start {
    /// Run-clock (CLOCK_MONOTONIC) ns of the plan's start.
    pub start_ns: u64,
    /// The same instant, Unix ms.
    pub started_unix_ms: u64,
}

/// The plan's start: `--start-at` mapped onto the run clock, or `lead_ns`
/// from now. A start already past is refused, saying by how much.
pub fn start(plan: &AttackPlan, lead_ns: u64) -> Result<Start, ShardError> {
    // Both clocks read back to back: the wall clock places the start, the
    // monotonic one times the run.
    let mono = now_ns();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    let Some(at_ms) = plan.start_at_unix_ms else {
        return Ok(Start {
            start_ns: mono + lead_ns,
            started_unix_ms: (wall + lead_ns) / 1_000_000,
        });
    };
    let at = at_ms.saturating_mul(1_000_000);
    if at < wall {
        return Err(ShardError::Late {
            by: std::time::Duration::from_nanos(wall - at),
            shard: plan.shard,
        });
    }
    Ok(Start {
        start_ns: mono + (at - wall),
        started_unix_ms: at_ms,
    })
}

/// Sleep until the plan's start, waking now and then so that a cancel
/// (Ctrl-C, a job cancelled) during a long lead is not ignored.
pub async fn wait_start(timer: &PreciseTimer, ctx: &RunCtx) -> std::io::Result<()> {
    while !ctx.cancelled() {
        let now = now_ns();
        if now >= ctx.start_ns {
            break;
        }
        timer
            .sleep_until(ctx.start_ns.min(now + START_POLL_NS))
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_model::driver::Phase;
    use std::time::Duration;

    fn plan(driver: Driver, shard: Option<Shard>) -> AttackPlan {
        AttackPlan {
            timeout: Duration::from_secs(1),
            shard,
            ..AttackPlan::new("http://127.0.0.1:1/", driver)
        }
    }

    fn sends(p: &AttackPlan, threads: usize) -> Vec<u64> {
        (0..threads)
            .flat_map(|i| thread_schedule(p, i, threads).expect("an open loop"))
            .collect()
    }

    #[test]
    fn shards_partition_the_one_schedule_whatever_the_threads() {
        let poisson = Driver::Open {
            phases: vec![
                Phase {
                    duration: Duration::from_secs(2),
                    from_rps: 10.0,
                    to_rps: 300.0,
                },
                Phase::hold(300.0, Duration::from_secs(1)),
            ],
            arrival: Arrival::Poisson { seed: 9 },
        };
        let whole = plan(poisson.clone(), None);
        let all: Vec<u64> = sends(&whole, 1);
        let mut union = Vec::new();
        for index in 1..=4 {
            let p = plan(poisson.clone(), Some(Shard { index, count: 4 }));
            // The shard's k-th own send is the plan's (4k + index - 1)-th.
            let mut mine = sends(&p, 1 + index as usize % 3);
            mine.sort_unstable();
            let expected: Vec<u64> = all
                .iter()
                .skip(index as usize - 1)
                .step_by(4)
                .copied()
                .collect();
            assert_eq!(mine, expected, "shard {index}/4");
            union.extend(mine);
        }
        union.sort_unstable();
        assert_eq!(union, all);
        assert_eq!(plan_requests(&whole), Some(all.len() as u64));
    }

    #[test]
    fn closed_loops_split_clients_requests_and_connections() {
        let d = Driver::Closed {
            concurrency: 10,
            requests: Some(1001),
            duration: None,
        };
        let parts: Vec<(u64, Option<u64>)> = (1..=4)
            .map(|index| {
                closed_share(
                    &plan(d.clone(), Some(Shard { index, count: 4 })),
                    10,
                    Some(1001),
                )
            })
            .collect();
        assert_eq!(
            parts,
            vec![
                (3, Some(251)),
                (3, Some(250)),
                (2, Some(250)),
                (2, Some(250))
            ]
        );
        let p = plan(d, Some(Shard { index: 4, count: 4 }));
        assert_eq!(connection_cap(&p), 2_500);
    }

    #[test]
    fn shards_that_would_send_nothing_are_refused_with_the_fix() {
        let small = Driver::Closed {
            concurrency: 2,
            requests: Some(100),
            duration: None,
        };
        let e = validate(&plan(small, Some(Shard { index: 1, count: 4 })))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least one client per shard"), "{e}");
        let tiny = Driver::constant(1.0, Duration::from_secs(3));
        let e = validate(&plan(tiny.clone(), Some(Shard { index: 1, count: 4 })))
            .unwrap_err()
            .to_string();
        assert!(e.contains("fewer than 4 shards"), "{e}");
        assert!(validate(&plan(tiny, Some(Shard { index: 3, count: 3 }))).is_ok());
    }

    #[test]
    fn a_start_in_the_past_is_refused_with_how_late() {
        let mut p = plan(Driver::constant(10.0, Duration::from_secs(1)), None);
        p.shard = Some(Shard { index: 2, count: 4 });
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        p.start_at_unix_ms = Some(now_ms - 3_000);
        let Err(e @ ShardError::Late { .. }) = start(&p, 0) else {
            panic!("a past start was accepted")
        };
        let e = e.to_string();
        assert!(
            e.contains("in the past: this shard 2/4 started late"),
            "{e}"
        );
        p.start_at_unix_ms = Some(now_ms + 2_000);
        let s = start(&p, 0).unwrap();
        assert_eq!(s.started_unix_ms, now_ms + 2_000);
        let lead = s.start_ns.saturating_sub(now_ns());
        assert!(lead > 1_000_000_000 && lead <= 2_000_000_000, "{lead}");
    }
}
