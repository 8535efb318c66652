//! Held connections: WebSocket (`ws://`, `wss://`; [`ws`]), Server-Sent
//! Events (`--sse`; [`sse`]) and gRPC streaming calls (`grpc://` with
//! `--call` and `--hold`; [`crate::grpc::stream`]), opened on a schedule
//! and held for `--hold`.
//!
//! One event loop on the calling thread runs every connection: a
//! dispatcher opens connection `i` at `i / open_rate` seconds on the run
//! clock (open loop: a slow handshake does not delay the next one), each
//! connection task sends its messages on its own schedule and times every
//! echo from the message's intended send time, as the request path does.
//! Every loop is bounded: handshakes by the timeout, holds by `--hold`, the
//! wait for the last echoes by one timeout, the close handshake by
//! [`CLOSE_GRACE`], events by [`sse::MAX_EVENT`]. Books: [`account`].

pub mod account;
pub mod combine;
pub(crate) mod conn;
pub(crate) mod sse;
mod timers;
mod ws;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_model::attack::{DriverSummary, HeldKind, HeldPlan};
use iolab_model::limits::thousands;
use iolab_model::shard::Shard;

use crate::clock::now_ns;
use crate::hooks::Hooks;
use crate::report::AttackReport;
use account::{Books, RunFacts};
use conn::Target;

pub use account::{merge, MergeError};
// The event-stream grammar, for `iolab verify`'s /events check: one reader
// of an event for the generator and the gate.
pub use sse::{sent_unix_us, Event, Parser as EventParser};

/// Longest wait for the server's close frame after ours.
pub const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// Most connections one run holds (each is a socket and a task).
pub const MAX_CONNECTIONS: u32 = 50_000;
/// Fastest per-connection message rate, per second.
pub const MAX_MESSAGE_RATE: f64 = 10_000.0;
/// Largest `--message`.
pub const MAX_MESSAGE: usize = 1 << 20;
/// Longest `--hold`.
pub const MAX_HOLD: Duration = Duration::from_secs(24 * 3600);

/// Why a held-connection run could not start; each is one line naming the
/// fault and the fix. What happens to connections is data, never an error.
#[derive(Debug, thiserror::Error)]
pub enum HeldError {
    /// The URL cannot be used.
    #[error("bad URL '{url}': {why} (use e.g. ws://127.0.0.1:8080/ws, or http://127.0.0.1:8080/events with --sse)")]
    Url {
        /// As given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// A setting is out of its range.
    #[error("{0}")]
    Plan(String),
    /// Name resolution, TLS set-up or the event loop failed.
    #[error("{0}")]
    Setup(String),
    /// `--source-addrs` cannot reach the target.
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    /// The host resolves to nothing.
    #[error(transparent)]
    Resolve(#[from] crate::endpoint::ResolveError),
    /// TLS cannot be set up.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// A gRPC stream's call cannot be made.
    #[error(transparent)]
    Grpc(#[from] crate::grpc::GrpcError),
    /// More connections than this process may open files for.
    #[error(transparent)]
    Files(#[from] FilesError),
}

impl iolab_model::HasExitKind for HeldError {
    /// Each is found before any connection is held, and names a fix the
    /// user makes (the URL, a flag, the target, `ulimit -n`): bad input.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

impl iolab_model::HasExitKind for FilesError {
    /// `ulimit -n` or `--shard`: the user's to change.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

/// Check a plan before anything is opened.
pub fn validate(plan: &HeldPlan) -> Result<(), HeldError> {
    let target = Target::parse(plan)?;
    // A literal address is checked now; a name, once it is resolved.
    if let Ok(ip) = target.endpoint.host.parse::<std::net::IpAddr>() {
        let addr = std::net::SocketAddr::new(ip, target.endpoint.port);
        crate::source::check(&plan.source_addrs, addr)?;
    }
    let bad = |m: String| Err(HeldError::Plan(m));
    if plan.connections == 0 || plan.connections > MAX_CONNECTIONS {
        return bad(format!(
            "--connections {}: hold between 1 and {MAX_CONNECTIONS} connections",
            plan.connections
        ));
    }
    if let Some(s) = plan.shard.filter(|_| own_connections(plan) == 0) {
        return bad(format!(
            "--connections {} leaves shard {s} none: give at least {} (one per shard)",
            plan.connections, s.count
        ));
    }
    if !(plan.open_rate.is_finite() && plan.open_rate > 0.0) {
        return bad(format!(
            "--open-rate {}: must be > 0 connections/s",
            plan.open_rate
        ));
    }
    if plan.hold.is_zero() || plan.hold > MAX_HOLD {
        return bad("--hold: give a duration between 1ms and 24h, e.g. --hold 10s".into());
    }
    if !(plan.message_rate.is_finite() && (0.0..=MAX_MESSAGE_RATE).contains(&plan.message_rate)) {
        return bad(format!(
            "--message-rate {}: give 0 to {MAX_MESSAGE_RATE} messages/s per connection, e.g. 2/s",
            plan.message_rate
        ));
    }
    if plan.kind == HeldKind::Grpc {
        crate::grpc::stream::check(plan)?;
    }
    if plan.kind == HeldKind::Sse && plan.message_rate > 0.0 {
        return bad("--message-rate: an event stream only receives; drop it with --sse".into());
    }
    if plan.message.len() > MAX_MESSAGE {
        return bad(format!(
            "--message: {} bytes, at most {MAX_MESSAGE}",
            plan.message.len()
        ));
    }
    if plan.timeout.is_zero() {
        return bad("--timeout: must be > 0".into());
    }
    Ok(())
}

/// This process's part of the plan (the whole plan when not sharded).
pub fn shard_of(plan: &HeldPlan) -> Shard {
    plan.shard.unwrap_or(Shard::WHOLE)
}

/// The plan's connections this process opens: plan connection `k` is
/// shard `k mod n`'s.
pub fn own_connections(plan: &HeldPlan) -> u64 {
    shard_of(plan).share(u64::from(plan.connections))
}

/// A held run holds a socket per connection: refuse one that needs more
/// files than this process may open even at its hard limit, and say to
/// shard it (each shard process holds its part; `iolab merge` adds them).
pub fn check_files(plan: &HeldPlan) -> Result<(), FilesError> {
    use iolab_model::limits::FD_RESERVE;
    let own = own_connections(plan);
    let need = own + FD_RESERVE;
    let (_, hard) = crate::machine::nofile();
    if hard == 0 || need <= hard {
        return Ok(());
    }
    let per = hard.saturating_sub(FD_RESERVE).max(1);
    let count = u64::from(plan.shard.map_or(1, |s| s.count));
    let processes = u64::from(plan.connections).div_ceil(per).max(count + 1);
    Err(FilesError {
        connections: plan.connections,
        own,
        need,
        hard,
        processes,
    })
}

/// A held run needing more open files than this process may have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--connections {}: {} held here need {} open files, but this process may open at most {hard} (ulimit -n): raise it (ulimit -n {need}) or run {processes} processes with --shard 1/{processes} .. {processes}/{processes} and iolab merge their --out files", thousands(u64::from(*connections)), thousands(*own), thousands(*need))]
pub struct FilesError {
    /// The plan's connections.
    pub connections: u32,
    /// This process's share.
    pub own: u64,
    /// The files that share needs.
    pub need: u64,
    /// The hard limit.
    pub hard: u64,
    /// Processes that would each fit.
    pub processes: u64,
}

/// What the document says of the driver: an open loop of connections
/// (a shard's part of it: its connections and its share of the rate, so
/// that shards' summaries add up to the plan's).
pub(crate) fn driver_summary(plan: &HeldPlan) -> DriverSummary {
    let own = own_connections(plan);
    DriverSummary {
        kind: "open".into(),
        rate: Some(plan.open_rate * own as f64 / f64::from(plan.connections)),
        duration_s: Some(f64::from(plan.connections) / plan.open_rate),
        timeout_s: plan.timeout.as_secs_f64(),
        arrival: Some("constant".into()),
        concurrency: None,
        connections: "held".into(),
        max_connections: own as u32,
    }
}

/// Shared by the connection tasks of one run.
pub(crate) struct Run {
    pub plan: HeldPlan,
    pub target: Target,
    pub books: RefCell<Books>,
    pub hooks: Hooks,
    /// Set once the cancel flag is seen, by one watcher task for the whole
    /// run (not a timer per connection: 1,000 connections polling every
    /// 50 ms would be 20,000 wake-ups a second of the generator's CPU).
    pub stop: tokio::sync::watch::Sender<bool>,
    /// The run clock's sleeps (opens and sends), on one timerfd.
    pub timers: timers::Timers,
    /// A gRPC run's call, ready.
    pub call: Option<crate::grpc::stream::Call>,
}

impl Run {
    /// The run was stopped (Ctrl-C).
    pub fn cancelled(&self) -> bool {
        (self.hooks.cancel.as_ref()).is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Resolves once the run is stopped (never, if it is not).
    pub async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
        let _ = stop.wait_for(|s| *s).await;
        if !*stop.borrow() {
            std::future::pending::<()>().await;
        }
    }
}

/// How often the watcher looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Open, hold and close every connection of the plan; blocking (it runs
/// its own event loop on this thread).
pub fn attack(plan: &HeldPlan, hooks: &Hooks) -> Result<AttackReport, HeldError> {
    validate(plan)?;
    let target = Target::parse(plan)?.resolved(plan.insecure, &plan.source_addrs)?;
    let call = match plan.kind {
        HeldKind::Grpc => Some(crate::grpc::stream::Call::prepare(plan, &target)?),
        HeldKind::Ws | HeldKind::Sse => None,
    };
    let echo_bytes = match plan.kind {
        HeldKind::Ws => Some(plan.message.len() as u64),
        HeldKind::Sse => None,
        HeldKind::Grpc => call.as_ref().and_then(|c| c.echo_bytes()),
    };
    crate::machine::raise_nofile(own_connections(plan) + iolab_model::limits::FD_RESERVE);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| HeldError::Setup(format!("cannot start the event loop: {e}")))?;
    let run = Rc::new(Run {
        plan: plan.clone(),
        target,
        books: RefCell::new(Books::default()),
        hooks: hooks.clone(),
        stop: tokio::sync::watch::Sender::new(false),
        timers: timers::Timers::default(),
        call,
    });
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let cpu0 = thread_cpu_s();
    let start = now_ns();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, dispatch(run.clone(), start))?;
    let facts = RunFacts {
        elapsed_s: (now_ns() - start) as f64 / 1e9,
        started_unix_ms,
        cancelled: run.cancelled(),
        echo_bytes,
    };
    let run = Rc::try_unwrap(run)
        .map_err(|_| HeldError::Setup("a connection task outlived the run".into()))?;
    let books = run.books.into_inner();
    let latency = books.handshake.clone();
    let shard = combine::record(plan, &books.lag);
    let mut result = books.into_result(plan, &facts);
    result.shard = shard;
    result.generator.cpu_s = thread_cpu_s() - cpu0;
    debug_assert_eq!(result.check_accounting(), Ok(()));
    Ok(AttackReport {
        result,
        cancelled: facts.cancelled,
        latency,
        intervals: Vec::new(),
        requests: Vec::new(),
    })
}

/// Open plan connection `k` at `start + k / open_rate`, for this shard's
/// `k`; wait for all of them.
async fn dispatch(run: Rc<Run>, start: u64) -> Result<(), HeldError> {
    let timer = crate::clock::PreciseTimer::new()
        .map_err(|e| HeldError::Setup(format!("cannot create the run's timer: {e}")))?;
    let clock = tokio::task::spawn_local({
        let run = run.clone();
        async move { run.timers.serve(&timer).await }
    });
    let gap_ns = (1e9 / run.plan.open_rate) as u64;
    let shard = shard_of(&run.plan);
    let mut tasks = Vec::with_capacity(own_connections(&run.plan) as usize);
    let own = (shard.offset()..u64::from(run.plan.connections)).step_by(shard.count as usize);
    for k in own {
        if run.cancelled() {
            break;
        }
        let at = start + k * gap_ns;
        run.timers.sleep_until(at).await;
        let task = match run.plan.kind {
            HeldKind::Ws => tokio::task::spawn_local(ws::hold(run.clone(), at)),
            HeldKind::Sse => tokio::task::spawn_local(sse::hold(run.clone(), at)),
            HeldKind::Grpc => tokio::task::spawn_local(crate::grpc::stream::hold(run.clone(), at)),
        };
        tasks.push(task);
    }
    let watcher = tokio::task::spawn_local(watch_cancel(run.clone()));
    for t in tasks {
        let _ = t.await;
    }
    watcher.abort();
    let _ = watcher.await;
    clock.abort();
    let _ = clock.await;
    Ok(())
}

/// Tell every connection once the cancel flag is set.
async fn watch_cancel(run: Rc<Run>) {
    if run.hooks.cancel.is_none() {
        return;
    }
    while !run.cancelled() {
        tokio::time::sleep(CANCEL_POLL).await;
    }
    run.stop.send_replace(true);
}

/// The tokio instant of a run-clock time.
pub(crate) fn instant_of(at: u64) -> tokio::time::Instant {
    let now = now_ns();
    let t = tokio::time::Instant::now();
    if at >= now {
        t + Duration::from_nanos(at - now)
    } else {
        t.checked_sub(Duration::from_nanos(now - at)).unwrap_or(t)
    }
}

/// CPU time this thread has used, seconds.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}
