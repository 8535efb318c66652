//! The sentence of a served run: `WHO held up / was overloaded / lost
//! requests: WHAT WAS MEASURED, because WHY`, the why from Little's law
//! against the model's capacity (or the PostgreSQL pool, or the error
//! classes), with what the kernel saw at the target's port as evidence.

use iolab_model::attack::AttackResult;
use iolab_model::concurrency::{counted, Capacity};
use iolab_model::experiment::{HttpWork, Work};
use iolab_model::runs::{Outcome, RunRecord};
use iolab_model::steps::BackendKind;

use super::{capacity, Clock};
use crate::numbers::{count, num, percent, rate, secs};

/// Share of samples in which a target must have answered its `/metrics`
/// for its in-flight count to be stated.
const METRICS_ANSWERED: f64 = 0.95;

pub(super) fn sentence(run: &RunRecord, who: &str, clock: &Clock, cores: Option<u32>) -> String {
    let a = run.attack.as_ref().expect("checked by the caller");
    let Work::Http(h) = &run.spec.work else {
        unreachable!("checked by the caller")
    };
    let cause = cause(run, h, clock, cores);
    let verdict = match (&run.outcome, &cause) {
        (Outcome::Interrupted, _) => "was interrupted",
        (_, Cause::Overloaded(_)) => "was overloaded",
        _ if a.success_ratio() >= 0.999 => "held up",
        _ => "lost requests",
    };
    let mut s = format!("{who} {verdict}: {}", measured(a, clock));
    match cause {
        Cause::Overloaded(why) | Cause::Failed(why) => s += &format!(", because {why}"),
        Cause::Within(why) => s += &format!(", as {why}"),
        Cause::Unknown => {}
    }
    if let Some(e) = evidence(run) {
        s += &format!("; {e}");
    }
    s
}

/// Why a run went as it did.
enum Cause {
    /// More was needed than the model (or a pool) can hold.
    Overloaded(String),
    /// Within capacity.
    Within(String),
    /// Failures other than overload decided it.
    Failed(String),
    /// Nothing recorded says.
    Unknown,
}

fn measured(a: &AttackResult, clock: &Clock) -> String {
    format!(
        "{} ok of {}, goodput {}, p99 {}",
        percent(a.success_ratio()),
        count(a.requests.planned),
        clock.rate(a.throughput_rps.goodput),
        clock.ms(a.latency_ms.p99)
    )
}

fn cause(run: &RunRecord, h: &HttpWork, clock: &Clock, cores: Option<u32>) -> Cause {
    let a = run.attack.as_ref().expect("checked by the caller");
    if let Some(why) = pg_pool(run, h, clock) {
        return why;
    }
    let s = h.steps.nominal_io().as_secs_f64();
    let failed = failures(a, true);
    let Some(r) = h.driver.peak_rate().filter(|_| s > 0.0) else {
        return failed.map_or(Cause::Unknown, Cause::Failed);
    };
    let (need, product) = little(clock, r, s, "");
    let little = format!("{product} in flight are needed");
    match capacity(run.model, run.params(), cores) {
        Some(Capacity::Bounded { n, what }) if need > f64::from(n) => {
            let held = Held {
                n,
                what,
                rate: r,
                s,
                sizing: sizing(run),
            };
            let mut why = format!("{little} but {}", overload(h, a, clock, &held));
            if let Some(others) = failures(a, false) {
                why += &format!("; besides, {others}");
            }
            Cause::Overloaded(why)
        }
        Some(Capacity::Bounded { n, what }) if failed.is_none() => Cause::Within(format!(
            "{little} and it holds {}{}",
            counted(u64::from(n), what),
            sizing(run)
        )),
        Some(Capacity::Unbounded { why }) if failed.is_none() => {
            Cause::Within(format!("{little} and {why}"))
        }
        _ => cpu_bound(run)
            .or(failed.map(Cause::Failed))
            .unwrap_or(Cause::Unknown),
    }
}

/// Requests failed while the target's CPU was as busy as its model lets it
/// be: one core per process under an interpreter lock, its loop threads, or
/// the cores it was given.
fn cpu_bound(run: &RunRecord) -> Option<Cause> {
    let a = run.attack.as_ref()?;
    let host = run.host?;
    let busy = run.telemetry.busy_cores()?;
    let servers = run.model.shape(run.params(), &host).cpu_servers;
    if a.success_ratio() >= 0.999 || busy < 0.85 * f64::from(servers) {
        return None;
    }
    let why = if host.gil && servers < host.cores {
        format!(
            "its CPU was the limit: it kept {} of its {} cores busy, one per process, as CPython's interpreter lock lets threads of one process compute only one at a time",
            num(busy, 2),
            host.cores
        )
    } else if servers < host.cores {
        format!(
            "its CPU was the limit: it kept {} of its {} cores busy, all its {} computing threads allow",
            num(busy, 2),
            host.cores,
            servers
        )
    } else {
        format!(
            "its CPU was the limit: it kept {} of its {} cores busy",
            num(busy, 2),
            host.cores
        )
    };
    Some(Cause::Overloaded(why))
}

/// What a model holds against what a load needs.
#[derive(Clone)]
struct Held {
    /// Requests it holds at once.
    n: u32,
    /// Of what.
    what: &'static str,
    /// The offered rate.
    rate: f64,
    /// How long each request is held, seconds.
    s: f64,
    /// What sizes it, in its runtime's words (` (gunicorn --workers 5, ...)`).
    sizing: String,
}

/// What sizes the run's model, in its runtime's words and in parentheses
/// (` (gunicorn --workers 5, its default 2 * cores + 1)`); empty when the
/// record does not say or nothing but a count of one sizes it.
fn sizing(run: &RunRecord) -> String {
    let Some(knobs) = &run.knobs else {
        return String::new();
    };
    match knobs.sizing(run.model) {
        s if s.is_empty() => s,
        s => format!(" ({s})"),
    }
}

/// Above capacity: the queue's growth and when timeouts had to start.
fn overload(h: &HttpWork, a: &AttackResult, clock: &Clock, held: &Held) -> String {
    let Held {
        n,
        what,
        rate: r,
        s,
        sizing,
    } = held;
    let (n, r, s) = (*n, *r, *s);
    let c = f64::from(n);
    let max_rate = c / s;
    let mut why = format!(
        "it holds at most {}{sizing} (capacity {n}/{} = {}), so the queue grew {}/s",
        counted(u64::from(n), what),
        secs(s),
        clock.rate(max_rate),
        rate(r - max_rate)
    );
    let t = h.timeout.as_secs_f64();
    let first = (t - s) / (r * s / c - 1.0);
    let run_s = h.driver.duration().map(|d| d.as_secs_f64());
    if t <= s {
        why += &format!(" and the timeout ({}) is not above S", clock.secs(t));
    } else if run_s.is_some_and(|d| first >= d) {
        why += &format!(
            " but only requests sent after about {} would time out, past the run's end",
            clock.secs(first)
        );
    } else if a.errors.timeout > 0 {
        why += &format!(
            " and requests sent after about {} timed out ({} of them)",
            clock.secs(first),
            count(a.errors.timeout)
        );
    }
    why
}

/// Real PostgreSQL steps wait for one of the pool's connections: the pool
/// caps every model, the non-blocking ones too.
fn pg_pool(run: &RunRecord, h: &HttpWork, clock: &Clock) -> Option<Cause> {
    let pg_s: f64 = h
        .steps
        .io_calls()
        .iter()
        .filter(|c| c.kind() == BackendKind::Pg)
        .filter_map(|c| c.nominal())
        .map(|d| d.as_secs_f64())
        .sum();
    let r = h.driver.peak_rate().filter(|_| pg_s > 0.0)?;
    let conns = run.params().pg_pool();
    let (need, product) = little(clock, r, pg_s, " of pg");
    let busy = format!("{product} PostgreSQL connections are busy");
    if need > f64::from(conns) {
        let named = run
            .knobs
            .as_ref()
            .and_then(|k| k.phrase("pg_pool"))
            .map_or_else(String::new, |p| format!(" ({p})"));
        Some(Cause::Overloaded(format!(
            "{busy} but the pool has {conns}{named}, which caps it at {conns}/{} = {}",
            secs(pg_s),
            clock.rate(f64::from(conns) / pg_s)
        )))
    } else {
        None
    }
}

/// What the error classes say, when anything failed (timeouts left out when
/// the overload already accounts for them).
/// Little's law, shown: `rate x seconds{what} = L` and L, the number held
/// at once.
fn little(clock: &Clock, rate: f64, secs: f64, what: &str) -> (f64, String) {
    let need = rate * secs;
    let shown = format!(
        "{} x {}{what} = {}",
        clock.rate(rate),
        clock.secs(secs),
        num(need, 1)
    );
    (need, shown)
}

fn failures(a: &AttackResult, with_timeouts: bool) -> Option<String> {
    let e = &a.errors;
    let timeouts = if with_timeouts { e.timeout } else { 0 };
    let classes = [
        (timeouts, "timed out"),
        (e.refused, "were refused (the accept queue was full)"),
        (e.reset, "were reset"),
        (
            e.addr_unavailable,
            "failed with EADDRNOTAVAIL (the client ran out of ephemeral ports)",
        ),
        (e.connect_other, "failed to connect"),
        (
            e.fd_limit,
            "never left the generator: it ran out of file descriptors (raise ulimit -n)",
        ),
        (e.read, "got bad answers"),
        (a.requests.non_2xx, "were answered non-2xx"),
        (
            a.requests.not_sent,
            "were never sent (no connection in time)",
        ),
    ];
    let parts: Vec<String> = classes
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", count(*n)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// What was seen at the target while the load ran: the kernel's accept
/// queue (which a drowning target cannot hide), and its own in-flight count
/// only when it answered its `/metrics` throughout.
fn evidence(run: &RunRecord) -> Option<String> {
    let t = &run.telemetry;
    let mut parts = Vec::new();
    if let Some(q) = t.peak_accept_queue().filter(|q| *q > 0) {
        parts.push(format!(
            "up to {} connections waited in the kernel's accept queue",
            count(q)
        ));
    }
    // A process per worker (prefork, a cluster) costs a process's memory each.
    let procs = t.measured().filter_map(|p| p.processes).max().unwrap_or(1);
    if let (true, Some(rss)) = (procs > 1, t.peak_rss_mb()) {
        parts.push(format!(
            "its {procs} processes held {} ({} each)",
            crate::numbers::mib(rss),
            crate::numbers::mib(rss / procs as f64)
        ));
    }
    let answered = t.metrics_answered().unwrap_or(0.0) >= METRICS_ANSWERED;
    match t.peak_in_flight() {
        Some(p) if answered => {
            parts.push(format!("peak {} in flight at the target", count(p as u64)))
        }
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}
