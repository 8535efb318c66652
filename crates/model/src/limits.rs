//! Every bound iolab puts on what it is given, in one place: the sizes,
//! counts, durations and rates that flags, presets and files may ask for, and
//! the machine's own kernel limits (open files, threads, ephemeral ports).
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
//! ([`MAX_RUNS_JSON`](crate::runs::MAX_RUNS_JSON)).

use std::time::Duration;

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
/// Most tasks of one in-process batch (a few hundred bytes each while it runs).
pub const MAX_BATCH_TASKS: u64 = 10_000_000;
/// Most values in one of a batch's lists (`cpu_terms`, `io_ms`).
pub const MAX_BATCH_LIST: usize = 10_000;
/// Longest line read from a target's stdout (its URL line is far shorter).
pub const MAX_CHILD_LINE: usize = 4_096;
/// Largest HTTP body iolab's own client reads (`verify`, `/metrics`).
pub const MAX_HTTP_BODY: usize = 16 << 20;
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
    fn new(field: Field, message: impl Into<String>) -> Fault {
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

/// `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate within `(0, MAX_RATE]`.
pub fn check_rate(r: f64) -> Result<(), String> {
    if !(r.is_finite() && r >= 0.0) {
        return Err(format!("{r} req/s is not a rate: give a number >= 0"));
    }
    if r > MAX_RATE {
        return Err(format!(
            "{r} req/s is above the most iolab sends, {} req/s",
            thousands(MAX_RATE as u64)
        ));
    }
    Ok(())
}

/// Every bound of a load plan, before anything is allocated or sent: rates,
/// requests planned, clients, connections (and the file descriptors they
/// need on this machine), timeout, interval, threads, `--csv` rows.
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
    check_fds(plan)
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
                    check_rate(r).map_err(|m| Fault::new(Field::Rate, m))?;
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
        if let Some(d) = m.shared_pool {
            check_tasks(u64::from(d)).map_err(|e| ("shared_pool", e))?;
        }
    }
    Ok(())
}

/// A closed loop holds one socket per client for certain: refuse a plan the
/// process cannot open that many files for, even at its hard limit (the
/// generator raises its soft limit to what it needs, see [`raise_nofile`]).
fn check_fds(plan: &AttackPlan) -> Result<(), Fault> {
    let Driver::Closed { concurrency, .. } = plan.driver else {
        return Ok(());
    };
    let need = u64::from(concurrency) + FD_RESERVE;
    let (_, hard) = nofile();
    if hard > 0 && need > hard {
        return Err(Fault::new(
            Field::Concurrency,
            format!(
                "{} clients need {} open files, but this process may open at most {hard} (ulimit -n): raise it (ulimit -n {need}) or lower the clients",
                thousands(u64::from(concurrency)),
                thousands(need)
            ),
        ));
    }
    Ok(())
}

/// Open files this process may have: (soft, hard); (0, 0) if unknown.
pub fn nofile() -> (u64, u64) {
    // SAFETY: getrlimit fills a plain struct we own.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            return (r.rlim_cur as u64, r.rlim_max as u64);
        }
    }
    (0, 0)
}

/// Raise the soft open-files limit towards `want` (never past the hard
/// limit, never lowering it), as Go's runtime does at start: a generator
/// asked for 5,000 connections should not stop at a shell's default 1,024.
/// Returns the soft limit now in force.
pub fn raise_nofile(want: u64) -> u64 {
    let (soft, hard) = nofile();
    if want <= soft || soft >= hard {
        return soft;
    }
    let new = want.min(hard);
    let r = libc::rlimit {
        rlim_cur: new as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: setrlimit reads a plain struct we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } == 0 {
        new
    } else {
        soft
    }
}

/// Most threads (and processes) this machine will start for one user:
/// `kernel.threads-max`, `kernel.pid_max` and `RLIMIT_NPROC`, the lowest.
pub fn max_tasks() -> Option<u64> {
    let read = |p: &str| {
        crate::files::read_capped(std::path::Path::new(p), 64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    // SAFETY: getrlimit fills a plain struct we own.
    let nproc = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        (libc::getrlimit(libc::RLIMIT_NPROC, &mut r) == 0 && r.rlim_cur != libc::RLIM_INFINITY)
            .then_some(r.rlim_cur as u64)
    };
    [
        read("/proc/sys/kernel/threads-max"),
        read("/proc/sys/kernel/pid_max"),
        nproc,
    ]
    .into_iter()
    .flatten()
    .min()
}

/// A knob asking for `n` threads or processes: refused when past what this
/// machine starts (see [`max_tasks`]).
pub fn check_tasks(n: u64) -> Result<(), String> {
    match max_tasks() {
        Some(max) if n > max => Err(format!(
            "{} threads are more than this machine starts ({} at most: kernel.threads-max, kernel.pid_max, ulimit -u)",
            thousands(n),
            thousands(max)
        )),
        _ => Ok(()),
    }
}

/// Knobs that size a set of threads or processes.
pub const TASK_KNOBS: [&str; 5] = ["threads", "offload", "max_threads", "workers", "processes"];

/// Every knob of `params` that sizes threads or processes, against what
/// this machine starts; the error names the knob.
pub fn check_task_knobs(params: &crate::ModelParams) -> Result<(), (&'static str, String)> {
    for (k, v) in params.set_knobs() {
        if TASK_KNOBS.contains(&k.name) {
            check_tasks(u64::from(v)).map_err(|e| (k.name, e))?;
        }
    }
    Ok(())
}

/// The ephemeral port range (`net.ipv4.ip_local_port_range`), if readable:
/// how many connections a client can open to one address and port before
/// EADDRNOTAVAIL (sockets in TIME_WAIT hold theirs for 60 s).
pub fn ephemeral_ports() -> Option<(u32, u32)> {
    let bytes = crate::files::read_capped(
        std::path::Path::new("/proc/sys/net/ipv4/ip_local_port_range"),
        64,
    )
    .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let mut it = text
        .split_whitespace()
        .filter_map(|v| v.parse::<u32>().ok());
    Some((it.next()?, it.next()?))
}

/// Parse a CPU list (`1`, `0-1`, `0,2-3`), every CPU below `CPU_SETSIZE`
/// checked *before* a range is expanded: `0-18446744073709551615` is one
/// line of error, not an allocation.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let limit = libc::CPU_SETSIZE as usize;
    let bad = |why: &str| format!("bad CPU list '{text}': {why} (use e.g. 0, 0-1 or 0,2-3)");
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a.trim().parse().map_err(|_| bad("not a CPU number"))?;
        let b: usize = b.trim().parse().map_err(|_| bad("not a CPU number"))?;
        if a > b {
            return Err(bad("a range must go up"));
        }
        if b >= limit {
            return Err(bad(&format!(
                "CPU {b} is past the last a CPU set holds ({})",
                limit - 1
            )));
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ConnectionMode, Phase};

    fn plan(driver: Driver) -> AttackPlan {
        AttackPlan {
            target: "http://127.0.0.1:1/".into(),
            driver,
            connections: ConnectionMode::default(),
            timeout: Duration::from_secs(10),
            interval: Duration::from_secs(1),
            threads: None,
            cpus: vec![],
            record_requests: false,
            spin: false,
        }
    }

    #[test]
    fn cpu_lists_are_bounded_before_expansion() {
        assert_eq!(parse_cpu_list("0,2-3").unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_cpu_list(" 1 ").unwrap(), vec![1]);
        for bad in [
            "3-1",
            "a",
            "",
            "0-18446744073709551615",
            "0-4000000000",
            "1,,2",
        ] {
            let e = parse_cpu_list(bad).unwrap_err();
            assert!(
                e.starts_with("bad CPU list") && !e.contains('\n'),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn plans_past_a_bound_name_the_field() {
        let week = Duration::from_secs(7 * 86_400);
        let cases = [
            (plan(Driver::constant(1e9, week)), Field::Rate),
            (plan(Driver::constant(1e6, week)), Field::Duration),
            (
                plan(Driver::Open {
                    phases: vec![Phase::hold(1.0, Duration::from_secs(1)); MAX_PHASES + 1],
                    arrival: crate::Arrival::Constant,
                }),
                Field::Phases,
            ),
            (
                plan(Driver::Closed {
                    concurrency: u32::MAX,
                    requests: None,
                    duration: Some(week),
                }),
                Field::Concurrency,
            ),
            (
                plan(Driver::Closed {
                    concurrency: 1,
                    requests: Some(u64::MAX),
                    duration: None,
                }),
                Field::Requests,
            ),
        ];
        for (p, field) in cases {
            let f = check_attack(&p).unwrap_err();
            assert_eq!(f.field, field, "{f}");
            assert!(
                !f.message.contains('\n') && !f.message.contains("--"),
                "{f}"
            );
        }
        let mut p = plan(Driver::constant(10.0, Duration::from_secs(1)));
        p.connections = ConnectionMode::KeepAlive { max: u32::MAX };
        assert_eq!(check_attack(&p).unwrap_err().field, Field::Connections);
        p.connections = ConnectionMode::default();
        p.interval = Duration::from_micros(10);
        assert_eq!(check_attack(&p).unwrap_err().field, Field::Interval);
        p.interval = Duration::from_secs(1);
        p.timeout = Duration::from_secs(86_400);
        assert_eq!(check_attack(&p).unwrap_err().field, Field::Timeout);
        p.timeout = Duration::from_secs(1);
        p.threads = Some(usize::MAX);
        assert_eq!(check_attack(&p).unwrap_err().field, Field::Threads);
        p.threads = None;
        p.record_requests = true;
        check_attack(&p).unwrap();
        p.driver = Driver::Closed {
            concurrency: 1,
            requests: None,
            duration: Some(Duration::from_secs(1)),
        };
        assert_eq!(check_attack(&p).unwrap_err().field, Field::Csv);
    }

    #[test]
    fn the_machine_limits_are_read() {
        let (soft, hard) = nofile();
        assert!(soft > 0 && soft <= hard);
        assert_eq!(raise_nofile(soft), soft);
        assert!(max_tasks().is_some_and(|n| n > 100));
        assert!(check_tasks(u64::MAX).is_err());
        assert!(ephemeral_ports().is_some_and(|(a, b)| a < b));
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
