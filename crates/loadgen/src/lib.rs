//! Open- and closed-loop HTTP load generator with honest accounting (`iolab attack`).
//!
//! One single-threaded tokio runtime per generator thread, each with its own
//! connections, histograms and counters, merged once at the end (the wrk / oha
//! shape). Open-loop sends follow a computed schedule and latency is measured
//! from the *intended* send time, so a slow target cannot hide behind a slow
//! generator (no coordinated omission). Request failures are data, counted by
//! class; only an unusable plan or setup is an [`AttackError`].
//!
//! Requests are rendered once before the run ([`wire`]: method, headers,
//! body; several in turn from a list in vegeta's format, [`parse_request_list`]);
//! `https://` runs over rustls ([`tls`]).
//!
//! Entry points: [`validate`] and [`attack`]; files (`--hdr`, `--csv`) via
//! [`AttackReport`]. Rendering the result is `iolab-report`'s job.

mod backlog;
mod clock;
mod closed_loop;
mod endpoint;
mod engine;
mod gen_thread;
mod generator;
mod http;
mod live;
pub mod machine;
mod merge;
mod open_loop;
mod output;
mod recorder;
mod request;
mod request_list;
mod response;
mod retry;
pub mod shard;
mod source;
mod thread_share;
mod tls;
mod uring;
mod validate;
mod wire;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_model::attack::{AttackPlan, AttackResult};

pub use endpoint::Endpoint;
pub use generator::thread_schedule;
pub use hdrhistogram::Histogram;
/// The live snapshot handed to [`Hooks::progress`] (a model type, so that
/// `iolab-report` can render it as the progress line).
pub use iolab_model::attack::Progress;
pub use iolab_model::schedule::Schedule;
pub use live::{LiveFeed, LiveSnapshot};
pub use output::write_hdr_log;
pub use recorder::{ErrorClass, RequestRow};
pub use request_list::parse_request_list;
pub use validate::validate;

/// Whether the io_uring engine can run on this kernel: `Err` says why not
/// (no io_uring, disabled by `kernel.io_uring_disabled`, a missing operation).
pub fn io_uring_available() -> Result<(), String> {
    uring::probe()
}

/// A progress callback.
pub type ProgressFn = dyn Fn(&Progress) + Send + Sync;

/// Ways for a caller to watch or stop a running attack.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Once set: stop sending, let in-flight requests finish (or time out),
    /// and return the partial result with `cancelled = true`.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Called from the calling thread about every 250 ms while the attack runs.
    pub progress: Option<Arc<ProgressFn>>,
    /// `--live`: the attack's books as each series interval closes, for a
    /// live page or `/metrics`; the final document once it ends.
    pub live: Option<Arc<LiveFeed>>,
}

/// One interval of the merged latency record, for the HdrHistogram interval log.
#[derive(Debug, Clone)]
pub struct IntervalHistogram {
    /// Interval start, from the run's start.
    pub start: Duration,
    /// Interval width.
    pub duration: Duration,
    /// Latency from intended send time, microseconds.
    pub histogram: Histogram<u64>,
}

/// What an attack produced: the `iolab.attack/1` document plus the raw
/// material behind `--hdr` and `--csv`.
#[derive(Debug, Clone)]
pub struct AttackReport {
    /// The result document.
    pub result: AttackResult,
    /// The run was stopped through [`Hooks::cancel`].
    pub cancelled: bool,
    /// Merged latency histogram (microseconds from intended send time).
    pub latency: Histogram<u64>,
    /// Per-interval latency histograms, merged over threads.
    pub intervals: Vec<IntervalHistogram>,
    /// One row per request, ordered by intended send time; empty unless
    /// `plan.record_requests`.
    pub requests: Vec<RequestRow>,
}

/// Why an attack could not start. Failures of requests are never errors.
#[derive(Debug, thiserror::Error)]
pub enum AttackError {
    /// The plan is unusable (bad URL, rate <= 0, empty phases, ...).
    #[error("{0}")]
    Invalid(String),
    /// Setting up failed (name resolution, threads, timers).
    #[error("{0}")]
    Setup(String),
}

/// Run the plan to completion (or cancellation) and return the merged result.
///
/// Blocking: it starts its own threads and runtimes, so it may be called from
/// any plain thread, including one already inside another tokio runtime's
/// `spawn_blocking`.
pub fn attack(plan: &AttackPlan, hooks: &Hooks) -> Result<AttackReport, AttackError> {
    validate(plan)?;
    let target = Endpoint::parse(&plan.target).map_err(AttackError::Invalid)?;
    let addr = target.resolve().map_err(AttackError::Setup)?;
    source::check(&plan.source_addrs, addr).map_err(AttackError::Invalid)?;
    // Every connection is a file: lift the soft limit to what the plan may
    // open (validate checked the hard limit allows a closed loop's clients).
    let fds = u64::from(plan.connections.max()) + iolab_model::limits::FD_RESERVE;
    machine::raise_nofile(fds);
    let requests = wire::render_all(&target, &plan.request.list).map_err(AttackError::Invalid)?;
    let tls = match target.tls {
        true => {
            let tls =
                tls::Tls::new(&target.host, plan.request.insecure).map_err(AttackError::Invalid)?;
            tls::preflight(&tls, addr, &target.host).map_err(AttackError::Setup)?;
            Some(tls)
        }
        false => None,
    };
    let outputs = generator::run(plan, requests, tls, addr, hooks)?;
    let report = merge::report(plan, outputs);
    debug_assert_eq!(report.result.check_accounting(), Ok(()));
    if let Some(feed) = &hooks.live {
        feed.finish(&report);
    }
    Ok(report)
}
