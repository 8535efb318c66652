//! Generator threads: one pinned OS thread per event loop, each with a
//! current-thread tokio runtime, its own connections and its own recorder.
//! The calling thread only starts them, reports progress and joins them;
//! what runs inside one is in `gen_thread`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;

use iolab_model::attack::{AttackPlan, Engine};
use iolab_model::driver::{ConnectionMode, Driver};

use crate::clock::{now_ns, ClockBase};
use crate::dial::Dial;
use crate::error::{AttackError, ThreadError};
use crate::hooks::{Hooks, Progress};
use crate::live::{Frame, Tap};
use crate::recorder::{Live, Recorder};
use crate::response::{Limits, DEFAULT_MAX_HEADERS};
use crate::run_ctx::{ns, RunCtx, RunOutput, ThreadOutput};
use crate::source::Sources;
use crate::thread_share::thread_count;
use crate::tls::Tls;
use crate::{gen_thread, shard};

/// Head start the threads get to build their runtimes before the first send.
const START_DELAY_NS: u64 = 30_000_000;
/// Slack past the last possible deadline before the run is cut (hard cap).
const HARD_CAP_SLACK_NS: u64 = 1_000_000_000;

/// What the threads of `plan` share, sending from `start_ns` on.
fn run_ctx(
    plan: &AttackPlan,
    requests: Vec<Vec<u8>>,
    h2: Option<crate::h2::Requests>,
    tls: Option<Tls>,
    addr: SocketAddr,
    hooks: &Hooks,
    start_ns: u64,
) -> RunCtx {
    let timeout_ns = ns(plan.timeout);
    RunCtx {
        dial: Dial {
            addr,
            tls,
            sources: Sources::new(plan.source_addrs.clone()),
            limits: Limits {
                max_headers: plan.max_headers.unwrap_or(DEFAULT_MAX_HEADERS),
                ..Limits::default()
            },
        },
        kind: plan.request.protocol.kind(),
        requests,
        turn: AtomicUsize::new(0),
        timeout_ns,
        new_connection: matches!(plan.connections, ConnectionMode::NewPerRequest { .. }),
        start_ns,
        hard_end_ns: start_ns
            .saturating_add(bound_ns(plan, timeout_ns))
            .saturating_add(HARD_CAP_SLACK_NS),
        clock: ClockBase::now(),
        cancel: hooks.cancel.clone(),
        spin_ns: if plan.spin {
            iolab_model::attack::SPIN_WINDOW.as_nanos() as u64
        } else {
            0
        },
        h2,
        endpoint_of: (plan.request.mix.as_ref()).map_or_else(Vec::new, |m| m.of_request.clone()),
    }
}

/// Longest the run may last from its start, ns: its duration (or its
/// requests one client after another, each up to the timeout) plus one
/// timeout. Saturating: `-n 1844674408 --timeout 10s` is 584 years of
/// worst case, which must cap nothing rather than wrap to a deadline in the
/// past (every answer was then counted a timeout).
fn bound_ns(plan: &AttackPlan, timeout_ns: u64) -> u64 {
    match &plan.driver {
        Driver::Open { .. } => {
            ns(plan.driver.duration().unwrap_or_default()).saturating_add(timeout_ns)
        }
        Driver::Closed {
            concurrency,
            requests,
            duration,
        } => match duration {
            Some(d) => ns(*d).saturating_add(timeout_ns),
            None => {
                let (clients, requests) = shard::closed_share(plan, *concurrency, *requests);
                requests
                    .unwrap_or(1)
                    .div_ceil(clients.max(1))
                    .saturating_mul(timeout_ns.max(1))
            }
        },
    }
}

/// Start the threads, watch them, and collect their outputs.
pub fn run(
    plan: &AttackPlan,
    requests: Vec<Vec<u8>>,
    h2: Option<crate::h2::Requests>,
    tls: Option<Tls>,
    addr: SocketAddr,
    hooks: &Hooks,
) -> Result<RunOutput, AttackError> {
    let threads = thread_count(plan);
    let engine = crate::engine::resolve(plan.engine, tls.is_some(), plan.request.protocol.kind())?;
    let shard::Start {
        start_ns,
        started_unix_ms,
    } = shard::start(plan, START_DELAY_NS)?;
    let ctx = Arc::new(run_ctx(plan, requests, h2, tls, addr, hooks, start_ns));
    let lives: Vec<Arc<Live>> = (0..threads).map(|_| Arc::default()).collect();
    let (taps, frames) = match &hooks.live {
        Some(feed) => {
            let (taps, rx) = feed.begin(crate::live::Start {
                plan,
                start_ns,
                started_unix_ms,
                engine,
                cpus: cpus_used(plan, threads),
                lives: lives.clone(),
            });
            (taps.into_iter().map(Some).collect(), Some(rx))
        }
        None => (vec![None; threads], None),
    };
    let handles = spawn(plan, &ctx, engine, &lives, taps)?;
    watch(&handles, &lives, start_ns, hooks, frames.as_ref());
    let outputs = join(handles)?;
    Ok(RunOutput {
        engine: crate::engine::ran_on(outputs.iter().map(|t| t.engine)),
        threads: outputs,
        start_ns,
        started_unix_ms,
        cpus: cpus_used(plan, threads),
        cancelled: ctx.cancelled(),
    })
}

/// A running generator thread.
type Handle = std::thread::JoinHandle<Result<ThreadOutput, ThreadError>>;

/// Start one generator thread per live counter, each with its recorder
/// (and its tap of the live feed, when there is one).
fn spawn(
    plan: &AttackPlan,
    ctx: &Arc<RunCtx>,
    engine: Engine,
    lives: &[Arc<Live>],
    taps: Vec<Option<Tap>>,
) -> Result<Vec<Handle>, AttackError> {
    let threads = lives.len();
    // The histograms reach past the timeout: a late answer is still recorded.
    let highest_us = (ctx.timeout_ns / 1_000).saturating_mul(2).max(1_000_000);
    let mut handles = Vec::with_capacity(threads);
    for (i, (live, tap)) in lives.iter().zip(taps).enumerate() {
        let live = live.clone();
        let ctx = ctx.clone();
        let plan = plan.clone();
        let h = std::thread::Builder::new()
            .name(format!("iolab-gen-{i}"))
            .spawn(move || {
                let mut rec = Recorder::new(
                    ctx.start_ns,
                    plan.interval.as_nanos() as u64,
                    highest_us,
                    plan.record_requests,
                    live,
                );
                rec.feed = tap.map(|t| Arc::new(t) as Arc<dyn crate::recorder::Publish>);
                rec.only_200 = ctx.h2.as_ref().is_some_and(|h| h.grpc_method.is_some());
                rec.endpoints = crate::endpoints::books(plan.request.mix.as_ref(), highest_us);
                gen_thread::main(i, threads, &plan, ctx, rec, engine)
            })
            .map_err(ThreadError::Spawn)?;
        handles.push(h);
    }
    Ok(handles)
}

/// Every thread's output, in thread order; the first failure fails the run.
fn join(handles: Vec<Handle>) -> Result<Vec<ThreadOutput>, AttackError> {
    let mut outputs = Vec::with_capacity(handles.len());
    for h in handles {
        match h.join() {
            Ok(Ok(out)) => outputs.push(out),
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => return Err(ThreadError::Panicked.into()),
        }
    }
    Ok(outputs)
}

/// The CPUs the threads were pinned to, each once, in order (thread `i` on
/// the plan's CPU `i` mod their count); empty when not pinned.
fn cpus_used(plan: &AttackPlan, threads: usize) -> Vec<usize> {
    if plan.cpus.is_empty() {
        return Vec::new();
    }
    (0..threads)
        .map(|i| plan.cpus[i % plan.cpus.len()])
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Report progress about every 250 ms, and take the threads' live frames
/// into the feed, until every thread has finished.
fn watch(
    handles: &[Handle],
    lives: &[Arc<Live>],
    start_ns: u64,
    hooks: &Hooks,
    frames: Option<&Receiver<Frame>>,
) {
    let mut last_t = start_ns;
    let mut last_done = 0u64;
    let mut next_report = start_ns + 250_000_000;
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(10));
        if let (Some(feed), Some(rx)) = (&hooks.live, frames) {
            feed.drain(rx);
        }
        let Some(progress) = &hooks.progress else {
            continue;
        };
        let now = now_ns();
        if now < next_report {
            continue;
        }
        next_report = now + 250_000_000;
        let sum = |f: fn(&Live) -> u64| lives.iter().map(|l| f(l)).sum::<u64>();
        let sent = sum(|l| l.sent.load(Relaxed));
        let ok = sum(|l| l.ok.load(Relaxed));
        let errors = sum(|l| l.errors.load(Relaxed));
        let p99_us = lives
            .iter()
            .map(|l| l.p99_us.load(Relaxed))
            .max()
            .unwrap_or(0);
        let dt = (now - last_t) as f64 / 1e9;
        let rps = if dt > 0.0 {
            (ok + errors - last_done) as f64 / dt
        } else {
            0.0
        };
        last_t = now;
        last_done = ok + errors;
        progress(&Progress {
            elapsed: Duration::from_nanos(now.saturating_sub(start_ns)),
            sent,
            ok,
            errors,
            rps,
            p99_ms: p99_us as f64 / 1e3,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16, finding 6: `-c 1 -n 1844674408 --timeout 10s` wrapped the
    /// run's bound to 7.3 s, and every answer after it was a timeout.
    #[test]
    fn r16_06_the_run_bound_saturates_instead_of_wrapping() {
        let plan = |driver| AttackPlan::new("http://127.0.0.1:1/", driver);
        let closed = |requests| {
            plan(Driver::Closed {
                concurrency: 1,
                requests: Some(requests),
                duration: None,
            })
        };
        let ten_s = 10_000_000_000;
        assert_eq!(bound_ns(&closed(1_844_674_408), ten_s), u64::MAX);
        assert_eq!(bound_ns(&closed(3), ten_s), 3 * ten_s);
        let week = Duration::from_secs(7 * 86_400);
        let open = plan(Driver::constant(10.0, week));
        assert_eq!(bound_ns(&open, u64::MAX), u64::MAX);
        assert_eq!(bound_ns(&open, 1), ns(week) + 1);
    }
}
