//! The binding resource named from every signal a capacity search had at
//! its knee (the highest rate that passed, and the lowest that failed above
//! it): the service's own Prometheus series when it has them, `/proc`
//! (threads by state, processes, per-thread CPU, run-queue wait), the
//! kernel (connections to downstreams, the accept queue) and the curve
//! itself (Little's law, the latency split). The rules, first match wins:
//!
//! 1. A Prometheus pool or thread gauge at its max, or with requests
//!    waiting for it, at any step around the knee (HikariCP, an executor,
//!    Tomcat, Jetty, anyio: the one table of `gauges`), weighed together
//!    (`prometheus.rs`), or an event-loop lag series that grew tenfold:
//!    named by the service itself.
//! 2. **CPU**: the CPU busy at capacity (capacity x CPU per request, the
//!    slope of CPU against rate; with no slope, the knee's step's own) is
//!    at least 80% of the cores it may use,
//!    or one thread ran at least 80% of a core and did most of the work
//!    (an event loop's or an interpreter lock's core); the time its threads
//!    waited for a CPU (schedstat; else the threads sampled in state R)
//!    counts as busy, so a starved target's low CPU time does not hide its
//!    demand.
//! 3. **An event loop blocked by its handlers**: about one request held at
//!    once (c < 1.6), the CPU idle.
//! 4. **A pool**: the connections to one downstream match c (as many as
//!    c, or up to a quarter fewer; never when a pool's own gauge was read:
//!    HikariCP keeps every connection open, so the count is only its
//!    size): every request holds one of them, and there are no more. Not when the
//!    threads match c as well and few of them wait on a lock: a lazy pool
//!    opens a connection when a thread asks and keeps it, so threads that
//!    bind grow it to their own number (the threads then bind, rule 6).
//! 5. **Workers**: single-threaded processes, as many as c besides up to
//!    three supervisors (a wrapper script, a runtime's launcher, the
//!    server's master: gunicorn under iolab's python runtime runs 7
//!    processes for 4 workers).
//! 6. **Threads**: at least c threads.
//! 7. Otherwise unknown, with the signal that would settle it.
//!
//! Whatever binds, every other resource the evidence shows (a gauge below
//! its max, a pool of connections larger than c) is kept beside it with the
//! rate at which it would bind (`beside.rs`): the fitted network keeps it,
//! and the sentence says how far relieving the binding one would go.

mod beside;
mod cpu;
mod evidence;
mod prometheus;

use cpu::{cpu, near_the_cpu_line};
use evidence::evidence;
use iolab_model::capacity::{
    Binding, Confidence, CpuMethod, Resource, Signals, StepRecord, ThreadState, Threads,
};
use prometheus::prometheus;

/// What the fit read from the curve, and the steps at the knee.
#[derive(Debug, Clone, Copy)]
pub struct Knee<'a> {
    /// The capacity X, req/s.
    pub capacity: f64,
    /// Unloaded service time S, ms.
    pub service_ms: f64,
    /// c = X x S.
    pub concurrency: f64,
    /// CPU per request, ms, when measured.
    pub cpu_ms: Option<f64>,
    /// How `cpu_ms` was read (its sentence says so).
    pub cpu_method: Option<iolab_model::capacity::CpuMethod>,
    /// CPU busy over the step at the knee, cores, from the source `cpu_ms`
    /// was read from.
    pub busy_at: Option<f64>,
    /// Cores the target may use.
    pub cores: u32,
    /// The highest rate that passed.
    pub at: &'a StepRecord,
    /// The lowest rate that failed above it.
    pub over: Option<&'a StepRecord>,
    /// Every step around the knee (the passes at its rate, the first
    /// fails above it): the service's own gauges are read at each.
    pub near: &'a [&'a StepRecord],
}

impl Knee<'_> {
    /// The knee's step, the one above it and every step near them.
    fn steps(&self) -> impl Iterator<Item = &StepRecord> {
        std::iter::once(self.at)
            .chain(self.over)
            .chain(self.near.iter().copied())
    }

    fn signals(&self) -> Option<&Signals> {
        self.at.signals.as_ref()
    }

    fn threads(&self) -> Option<&Threads> {
        self.signals()?.threads.as_ref()
    }

    /// How the CPU per request was read, as a sentence says it.
    fn cpu_how(&self) -> &'static str {
        self.cpu_method
            .unwrap_or(iolab_model::capacity::CpuMethod::Slope)
            .phrase()
    }

    /// CPU busy at capacity, cores: capacity x the slope; with no slope,
    /// what the knee's step measured. A median over the steps spreads the
    /// CPU burnt whatever the rate over the light steps' few requests: a
    /// Spring pool of 10 threads, its JIT compiling through its search,
    /// read 11 ms a request by the median, so 1.17 cores "busy" at its
    /// 106/s, where its steps there cost 1.5-1.8 ms (0.2 of a core).
    fn busy(&self) -> Option<f64> {
        self.busy_measured()
            .or_else(|| self.cpu_ms.map(|t| self.capacity * t / 1000.0))
    }

    /// The knee's step's own busy, when [`Knee::busy`] is read from it.
    fn busy_measured(&self) -> Option<f64> {
        (self.cpu_method == Some(CpuMethod::Median))
            .then_some(self.busy_at)
            .flatten()
    }

    /// How [`Knee::busy`] was read, as a sentence says it after the rate.
    fn busy_how(&self) -> &'static str {
        if self.busy_measured().is_some() {
            " (measured there)"
        } else {
            ""
        }
    }

    /// Cores the target may use (its affinity, else the host's).
    fn allowed(&self) -> u32 {
        self.threads()
            .and_then(|t| t.cores_allowed)
            .unwrap_or(self.cores)
            .max(1)
    }
}

/// What a request spends not computing, ms: S less its CPU.
fn wait_ms(k: &Knee) -> f64 {
    k.service_ms - k.cpu_ms.unwrap_or(0.0).min(k.service_ms)
}

/// What would raise a service `resource` binds, as a sentence ends.
fn advice(resource: Resource) -> &'static str {
    match resource {
        Resource::Pool => "more threads or a non-blocking model would not help, a bigger pool would (if what it connects to can take it)",
        _ => "more threads, or a model that does not hold one while waiting, would raise it",
    }
}

fn n(v: f64) -> String {
    if v >= 10.0 || (v - v.round()).abs() < 0.05 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn ms(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// Name the binding resource at `k`.
pub fn name(k: &Knee) -> Binding {
    let mut b = rules(k);
    b.evidence.extend(evidence(k));
    beside::keep(k, &mut b);
    near_the_cpu_line(k, &mut b);
    b.runtime = k
        .steps()
        .find_map(|s| iolab_model::capacity::gauges::ServiceRuntime::recognise(&s.metrics));
    // A gauge at its max with requests waiting says it alone (a remote
    // service has nothing else); anything else without /proc is a guess.
    let by_gauge = b.name.is_some() && b.confidence == Confidence::High && b.configured;
    if k.signals().is_none() && !by_gauge {
        b.confidence = Confidence::Low;
        b.settle = Some(
            "its PID (--pid N): threads by state, CPU per request and connections from /proc would settle it".into(),
        );
    }
    b
}

fn binding(k: &Knee, resource: Resource, size: Option<f64>, sentence: String) -> Binding {
    let hold_ms = match (resource, size) {
        (Resource::Cpu, _) => k.cpu_ms.unwrap_or(k.service_ms),
        (_, Some(s)) if k.capacity > 0.0 => s / k.capacity * 1000.0,
        _ => k.service_ms,
    };
    Binding {
        resource,
        size,
        name: None,
        hold_ms,
        confidence: Confidence::Medium,
        sentence,
        evidence: Vec::new(),
        settle: None,
        configured: false,
        also: Vec::new(),
        runtime: None,
    }
}

fn rules(k: &Knee) -> Binding {
    prometheus(k)
        .or_else(|| cpu(k))
        .or_else(|| event_loop(k))
        .or_else(|| pool(k))
        .or_else(|| workers(k))
        .or_else(|| threads(k))
        .unwrap_or_else(|| unknown(k))
}

fn event_loop(k: &Knee) -> Option<Binding> {
    if k.concurrency >= 1.6 {
        return None;
    }
    let t = k.threads();
    let mut b = binding(
        k,
        Resource::EventLoop,
        Some(1.0),
        format!(
            "serves one request at a time: about {} held at once ({}/s x {} each){}; its event loop is blocked by its own handlers (or it has a single worker): moving the blocking calls off the loop, or non-blocking calls, would raise it",
            n(k.concurrency),
            n(k.capacity),
            ms(k.service_ms),
            t.map_or(String::new(), |t| format!(
                " though it runs {} threads{}",
                n(t.threads),
                k.busy().map_or(String::new(), |b| format!(" and keeps {b:.2} cores busy"))
            ))
        ),
    );
    b.settle = Some("an event-loop lag series growing with the rate (Node: nodejs_eventloop_lag_seconds, via --metrics) would settle a loop against a single worker".into());
    Some(b)
}

fn pool(k: &Knee) -> Option<Binding> {
    let s = k.signals()?;
    // A pool's own gauge read below its max says more than its count of
    // open connections (issue 50: Tomcat 40 busy of 40, HikariCP 39 of 50
    // open, named the pool of 50).
    if prometheus::readings(k)
        .iter()
        .any(|r| r.gauge.resource == Resource::Pool)
    {
        return None;
    }
    let d = s.downstream.iter().find(|d| pool_sized(k, d.connections))?;
    let size = d.connections as f64;
    if grown_to_the_threads(k, size) {
        return None;
    }
    let threads = k.threads().map_or(0.0, |t| t.threads);
    let mut b = binding(
        k,
        Resource::Pool,
        Some(size),
        format!(
            "is limited by a pool of {} connections to {}: about {} requests were held at once at {}/s, as many as it has connections{}; more threads or a non-blocking model would not help, a bigger pool would (if {} can take it)",
            d.connections,
            d.endpoint,
            n(k.concurrency),
            n(k.capacity),
            if threads > 0.0 { format!(", while it ran {} threads", n(threads)) } else { String::new() },
            d.endpoint
        ),
    );
    b.name = Some(d.endpoint.clone());
    b.settle = Some("the pool's own gauges (HikariCP: hikaricp_connections_active and hikaricp_connections_pending, via --metrics) at their max would settle it".into());
    Some(b)
}

/// `connections` open to one downstream could be a pool every request
/// holds at c: as many as c, or up to a quarter more; not fewer than nine
/// in ten of them (a request holds its connection no longer than S, so a
/// full pool reads c at least its size: a pool of 50 at c = 40 is not
/// full).
fn pool_sized(k: &Knee, connections: u64) -> bool {
    let c = connections as f64;
    k.concurrency >= 0.9 * c - 0.5 && k.concurrency <= c + (0.25 * c).max(1.0)
}

/// A pool of `size` connections as many as the threads (up to a quarter
/// fewer: it cannot have more than the threads that ask) while fewer than a quarter of c wait on a lock (futex: a thread waiting
/// for a pooled connection parks there): it grew to the threads that bind,
/// it does not bind them. A simulated Tomcat of 10 threads holding a lazy
/// pool of 30 a fifth of each request was named "a pool of 10 connections"
/// (sim_01). A runtime's own threads counted beside the pool's (a JVM's
/// score of GC, compiler and timer threads) hide the match, and such a pool
/// is still named: `/proc` cannot tell a request thread from them.
fn grown_to_the_threads(k: &Knee, size: f64) -> bool {
    k.threads().is_some_and(|t| {
        (size..=1.25 * size).contains(&t.threads)
            && t.in_state(ThreadState::Futex) < 0.25 * k.concurrency
    })
}

fn workers(k: &Knee) -> Option<Binding> {
    let t = k.threads()?;
    let p = t.processes as f64;
    if p < 2.0 || t.threads > 3.0 * p {
        return None;
    }
    let n_workers = [p, p - 1.0, p - 2.0, p - 3.0]
        .into_iter()
        .filter(|w| *w >= 1.0)
        .min_by(|a, b| {
            (a - k.concurrency)
                .abs()
                .total_cmp(&(b - k.concurrency).abs())
        })?;
    if (n_workers - k.concurrency).abs() > (0.2 * n_workers).max(0.75) {
        return None;
    }
    let mut b = binding(
        k,
        Resource::Workers,
        Some(n_workers),
        format!(
            "is limited by its {} worker processes, one request at a time each: about {} held at once at {}/s ({} each) in {} processes of {} threads; more workers, or a non-blocking server, would raise it",
            n(n_workers),
            n(k.concurrency),
            n(k.capacity),
            ms(k.service_ms),
            t.processes,
            n(t.threads)
        ),
    );
    b.confidence = Confidence::High;
    Some(b)
}

fn threads(k: &Knee) -> Option<Binding> {
    let t = k.threads();
    if t.is_some_and(|t| t.threads < 0.9 * k.concurrency) {
        return None;
    }
    let c = k.concurrency.round().max(1.0);
    let mut b = binding(
        k,
        Resource::Threads,
        Some(c),
        format!(
            "is limited by its threads: about {} requests held at once at {}/s ({} each){}; more threads, or a model that holds none while it waits, would raise it",
            n(k.concurrency),
            n(k.capacity),
            ms(k.service_ms),
            t.map_or(String::new(), |t| format!(
                ", and it runs {} threads, {} of them blocked in a wait",
                n(t.threads),
                n(t.blocked())
            ))
        ),
    );
    match t {
        Some(t) if t.blocked() >= 0.7 * k.concurrency => b.confidence = Confidence::High,
        _ => {
            b.settle = Some("the service's busy-thread gauge (Tomcat: tomcat_threads_busy_threads, via --metrics) at its max would settle it".into())
        }
    }
    Some(b)
}

fn unknown(k: &Knee) -> Binding {
    let threads = k.threads().map_or(0.0, |t| t.threads);
    let mut b = binding(
        k,
        Resource::Unknown,
        None,
        format!(
            "holds about {} requests at once at {}/s with only {} threads and {} cores busy, no pool of that size in sight: no signal names the limit",
            n(k.concurrency),
            n(k.capacity),
            n(threads),
            k.busy().map_or("unmeasured".into(), |b| format!("{b:.2}"))
        ),
    );
    b.confidence = Confidence::Low;
    b.settle = Some("its own gauges for its pools (--metrics, --series) or the downstream's capacity would settle it".into());
    b
}
