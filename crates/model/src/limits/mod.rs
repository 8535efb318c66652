//! Every bound iolab puts on what it is given, in one place: the sizes,
//! counts, durations and rates that flags, presets and files may ask for.
//! They are the same on every machine; what this machine's kernel allows
//! (open files, threads) is asked where it is used: the generator's open
//! files in `iolab_loadgen::machine`, the threads a run starts in
//! `iolab_lab::machine`.
//!
//! Each bound is checked before anything is allocated or started, by the
//! same function whoever asks: `iolab attack`'s flags, a preset's run (for
//! `--dry-run` as for the run), the load generator itself. A check's message
//! speaks of the value only; the caller says where the value came from, as a
//! flag ([`Field::flag`]) or a preset field ([`Field::preset`]), so a preset's
//! fault names its file and line and never a flag the user did not type.
//!
//! Bounds that belong to one concept stay beside it and are listed here:
//! a workload's ([`steps::limits`](crate::steps::limits)), each knob's
//! (`KNOBS[..].max` in [`knob`](crate::knob)), a duration's (a week,
//! [`parse_duration`](crate::units::parse_duration)), a saved document's
//! ([`MAX_RUNS_JSON`](crate::runs::MAX_RUNS_JSON)). CPU lists and a USL
//! sweep's bounds have files of their own here (`cpus`, `sweep`).

use std::time::Duration;

pub use crate::units::thousands;

use crate::attack::AttackPlan;
use crate::driver::Driver;

/// Highest rate a load may ask for, requests per second: ten times what one
/// generator core sends (about 130,000/s), so a typo (`1e9`) is refused
/// before a schedule of it is walked or simulated.
pub const MAX_RATE: f64 = 10_000_000.0;
/// Most requests one run may plan (an open loop's rate x duration, or a
/// closed loop's `--requests`): an hour at 250,000 req/s.
pub const MAX_REQUESTS: u64 = 1_000_000_000;
/// Most requests `iolab predict` simulates for one run (about 10 s of the
/// simulation's time); a run past it gets no prediction rather than a hang.
pub const MAX_SIMULATED_REQUESTS: u64 = 20_000_000;
/// Most connections (and closed-loop clients) one run may hold open.
pub const MAX_CONNECTIONS: u32 = 1_000_000;
/// Most phases of one open loop.
pub const MAX_PHASES: usize = 10_000;
/// Longest per-request timeout.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3_600);
/// Narrowest series interval.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);
/// Most series intervals one generator thread keeps: past it, the recorder
/// doubles the interval's width (merging neighbours), so a run of unknown
/// length at `--interval 1ms` holds at most this many histograms per thread.
pub const MAX_SERIES_POINTS: usize = 1_000;
/// Most rows `--csv` keeps in memory (about 48 bytes each).
pub const MAX_CSV_ROWS: u64 = 5_000_000;
/// Most generator threads: more event loops than cores only contend.
pub const MAX_GENERATOR_THREADS: usize = 1_024;
/// Most repetitions of every run of a preset (`--reps`, `reps`).
pub const MAX_REPS: u32 = 1_000;
/// Largest preset file read.
pub const MAX_PRESET_BYTES: u64 = 1 << 20;
/// Largest request body read from a file (`--body-file`, a targets file's
/// `@file` line): each is held in memory once and sent per request.
pub const MAX_BODY_BYTES: u64 = 64 << 20;
/// Largest targets file read (`--targets`): a million short requests.
pub const MAX_TARGETS_BYTES: u64 = 64 << 20;
/// Most tasks of one in-process batch (a few hundred bytes each while it runs).
pub const MAX_BATCH_TASKS: u64 = 10_000_000;
/// Most values in one of a batch's lists (`cpu_terms`, `io_ms`).
pub const MAX_BATCH_LIST: usize = 10_000;
/// Longest line read from a target's stdout (its URL line is far shorter).
pub const MAX_CHILD_LINE: usize = 4_096;
/// Largest HTTP body iolab's own client reads (`verify`, `/metrics`).
pub const MAX_HTTP_BODY: usize = 16 << 20;
/// Most headers `--max-headers` may allow one answer (each costs 32 bytes
/// of parser state while a head is read).
pub const MAX_ANSWER_HEADERS: usize = 100_000;
/// File descriptors a process keeps besides its sockets (stdio, epoll,
/// timerfds, eventfds, a few files).
pub const FD_RESERVE: u64 = 64;

/// Where a value of a load plan came from; [`Fault`] names it either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The URL.
    Target,
    /// An open loop's rate.
    Rate,
    /// A run's length.
    Duration,
    /// An open loop's phases.
    Phases,
    /// Closed-loop clients.
    Concurrency,
    /// A closed loop's request bound.
    Requests,
    /// The connection cap.
    Connections,
    /// The per-request timeout.
    Timeout,
    /// The series interval.
    Interval,
    /// Generator threads.
    Threads,
    /// Rows kept for `--csv`.
    Csv,
    /// Headers one answer may carry.
    MaxHeaders,
}

impl Field {
    /// The `iolab attack` flag that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            Field::Target => "URL",
            Field::Rate => "--rate",
            Field::Duration => "--duration",
            Field::Phases => "--phase",
            Field::Concurrency => "--concurrency",
            Field::Requests => "--requests",
            Field::Connections => "--connections",
            Field::Timeout => "--timeout",
            Field::Interval => "--interval",
            Field::Threads => "--threads",
            Field::Csv => "--csv",
            Field::MaxHeaders => "--max-headers",
        }
    }

    /// The preset field that sets it (`load.rate`).
    pub fn preset(self) -> &'static str {
        match self {
            Field::Target | Field::Csv | Field::Threads => "load",
            Field::Rate | Field::Phases => "load.rate",
            Field::Duration => "load.duration",
            Field::Concurrency => "load.concurrency",
            Field::Requests => "load.requests",
            Field::Connections => "load.max_connections",
            Field::Timeout => "load.timeout",
            Field::Interval => "load.interval",
            Field::MaxHeaders => "load",
        }
    }
}

/// A value past its bound: which field, and what is wrong with the value
/// (without naming the field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The field the value came from.
    pub field: Field,
    /// What is wrong and the bound, e.g. `2e9 req/s is above the most ...`.
    pub message: String,
}

impl Fault {
    /// A fault of `field`.
    pub fn new(field: Field, message: impl Into<String>) -> Fault {
        Fault {
            field,
            message: message.into(),
        }
    }

    /// One line naming the flag: `--rate: ...`.
    pub fn with_flag(&self) -> String {
        format!("{}: {}", self.field.flag(), self.message)
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.with_flag())
    }
}

/// A rate outside `[0, MAX_RATE]`.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum RateBoundError {
    /// Not a number, or below 0.
    #[error("{0} req/s is not a rate: give a number >= 0")]
    NotRate(f64),
    /// Above what iolab sends.
    #[error("{0} req/s is above the most iolab sends, {max} req/s", max = thousands(MAX_RATE as u64))]
    Above(f64),
}

/// A rate within `(0, MAX_RATE]`.
pub fn check_rate(r: f64) -> Result<(), RateBoundError> {
    if !(r.is_finite() && r >= 0.0) {
        return Err(RateBoundError::NotRate(r));
    }
    if r > MAX_RATE {
        return Err(RateBoundError::Above(r));
    }
    Ok(())
}

/// Every bound of a load plan, before anything is allocated or sent: rates,
/// requests planned, clients, connections, timeout, interval, threads,
/// `--csv` rows (the file descriptors they need on this machine are the
/// generator's check, `iolab_loadgen::machine::check_bounds`).
pub fn check_attack(plan: &AttackPlan) -> Result<(), Fault> {
    let requests = check_driver(&plan.driver)?;
    let conns = plan.connections.max();
    if conns > MAX_CONNECTIONS {
        return Err(Fault::new(
            Field::Connections,
            format!(
                "{} connections cannot be open at once: at most {}",
                thousands(u64::from(conns)),
                thousands(u64::from(MAX_CONNECTIONS))
            ),
        ));
    }
    if plan.timeout > MAX_TIMEOUT {
        return Err(Fault::new(
            Field::Timeout,
            format!(
                "{} is longer than the longest timeout, {}",
                crate::format_duration(plan.timeout),
                crate::format_duration(MAX_TIMEOUT)
            ),
        ));
    }
    if plan.interval < MIN_INTERVAL {
        return Err(Fault::new(
            Field::Interval,
            format!(
                "{} is narrower than {} (e.g. 1s)",
                crate::format_duration(plan.interval),
                crate::format_duration(MIN_INTERVAL)
            ),
        ));
    }
    if let Some(t) = plan.threads.filter(|&t| t > MAX_GENERATOR_THREADS) {
        return Err(Fault::new(
            Field::Threads,
            format!(
                "{t} generator threads: at most {MAX_GENERATOR_THREADS} (one per core is best)"
            ),
        ));
    }
    if let Some(n) = plan
        .max_headers
        .filter(|&n| n == 0 || n > MAX_ANSWER_HEADERS)
    {
        return Err(Fault::new(
            Field::MaxHeaders,
            format!(
                "{n} headers: give 1 to {} (the default, 256, takes any ordinary answer)",
                thousands(MAX_ANSWER_HEADERS as u64)
            ),
        ));
    }
    if plan.record_requests && requests.is_none_or(|n| n > MAX_CSV_ROWS) {
        let why = requests.map_or("a run without a request count".to_string(), |n| {
            format!("{} requests", thousands(n))
        });
        return Err(Fault::new(
            Field::Csv,
            format!(
                "one row per request is kept in memory, at most {} rows; {why} could exceed it (bound the run with --requests, or a shorter --duration)",
                thousands(MAX_CSV_ROWS)
            ),
        ));
    }
    Ok(())
}

/// The driver's bounds; the requests it plans, when it says.
fn check_driver(driver: &Driver) -> Result<Option<u64>, Fault> {
    match driver {
        Driver::Open { phases, .. } => {
            if phases.len() > MAX_PHASES {
                return Err(Fault::new(
                    Field::Phases,
                    format!("{} phases: at most {MAX_PHASES}", phases.len()),
                ));
            }
            for p in phases {
                for r in [p.from_rps, p.to_rps] {
                    check_rate(r).map_err(|m| Fault::new(Field::Rate, m.to_string()))?;
                }
            }
            let planned: f64 = phases.iter().map(|p| p.planned()).sum();
            if planned > MAX_REQUESTS as f64 {
                return Err(Fault::new(
                    Field::Duration,
                    format!(
                        "rate x duration plans {planned:.3e} requests: at most {} in one run (shorten it, or lower the rate)",
                        thousands(MAX_REQUESTS)
                    ),
                ));
            }
            Ok(Some(planned as u64))
        }
        Driver::Closed {
            concurrency,
            requests,
            ..
        } => {
            if *concurrency > MAX_CONNECTIONS {
                return Err(Fault::new(
                    Field::Concurrency,
                    format!(
                        "{} clients: at most {}",
                        thousands(u64::from(*concurrency)),
                        thousands(u64::from(MAX_CONNECTIONS))
                    ),
                ));
            }
            if let Some(n) = requests.filter(|&n| n > MAX_REQUESTS) {
                return Err(Fault::new(
                    Field::Requests,
                    format!(
                        "{} requests: at most {} in one run",
                        thousands(n),
                        thousands(MAX_REQUESTS)
                    ),
                ));
            }
            Ok(*requests)
        }
    }
}

/// Every bound of a batch: tasks, list lengths, each task's work. The
/// error names the `[batch]` field (`n`, `cpu_terms`, ...).
pub fn check_batch(spec: &crate::batch::BatchSpec) -> Result<(), (&'static str, String)> {
    use crate::batch::TaskMix;
    use crate::steps::limits::{MAX_CPU_TERMS, MAX_MS};
    let tasks = |field: &'static str, n: u64| {
        if n > MAX_BATCH_TASKS {
            return Err((
                field,
                format!(
                    "{} tasks: at most {} in one batch",
                    thousands(n),
                    thousands(MAX_BATCH_TASKS)
                ),
            ));
        }
        Ok(())
    };
    let ms = |field: &'static str, m: f64| {
        if !(m.is_finite() && (0.0..=MAX_MS).contains(&m)) {
            return Err((field, format!("{m} ms: give 0..={MAX_MS} ms")));
        }
        Ok(())
    };
    match &spec.tasks {
        TaskMix::Calls { n, ms: m } => {
            tasks("n", *n)?;
            ms("ms", *m)?;
        }
        TaskMix::Mixed {
            cpu,
            io,
            cpu_terms,
            io_ms,
        } => {
            tasks("cpu", u64::from(*cpu))?;
            tasks("io", u64::from(*io))?;
            tasks("io", u64::from(*cpu) + u64::from(*io))?;
            for (field, len) in [("cpu_terms", cpu_terms.len()), ("io_ms", io_ms.len())] {
                if len > MAX_BATCH_LIST {
                    return Err((field, format!("{len} values: at most {MAX_BATCH_LIST}")));
                }
            }
            if let Some(t) = cpu_terms.iter().find(|&&t| t > MAX_CPU_TERMS) {
                return Err(("cpu_terms", format!("{t} terms: at most {MAX_CPU_TERMS}")));
            }
            for m in io_ms {
                ms("io_ms", *m)?;
            }
        }
    }
    if let Some(m) = &spec.master {
        if u64::from(m.workers) > MAX_BATCH_TASKS {
            return Err((
                "workers",
                format!(
                    "{} workers: at most {}",
                    m.workers,
                    thousands(MAX_BATCH_TASKS)
                ),
            ));
        }
    }
    Ok(())
}

mod cpus;
mod sweep;
#[cfg(test)]
mod tests;

pub use cpus::*;
pub use sweep::*;
