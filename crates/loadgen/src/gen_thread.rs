//! Inside one generator thread: pinned to its CPU, measuring its own CPU
//! time and run-queue wait, running its [`ThreadShare`] on its engine (io_uring,
//! or a current-thread tokio runtime on epoll).

use std::sync::Arc;

use iolab_model::attack::{AttackPlan, Engine};

use crate::clock::{now_ns, PreciseTimer};
use crate::error::ThreadError;
use crate::recorder::Recorder;
use crate::run_ctx::{RunCtx, ThreadOutput};
use crate::thread_share::ThreadShare;
use crate::{closed_loop, open_loop, shard};

/// Pin the calling thread to one CPU.
fn pin(cpu: usize) -> Result<(), ThreadError> {
    // SAFETY: cpu_set_t is plain data; CPU_SET bounds are checked by validate().
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(ThreadError::Pin {
                cpu,
                why: std::io::Error::last_os_error(),
            });
        }
    }
    Ok(())
}

/// CPU seconds (user + system) this thread has used.
pub(crate) fn thread_cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Seconds this thread has waited on a run queue (ready, but its CPU was
/// another's): the second field of `/proc/thread-self/schedstat`.
pub(crate) fn thread_wait_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Thread `i` of `threads`: its share of the plan, on `engine` (`auto`
/// falls back to epoll where this thread's ring is refused).
pub(crate) fn main(
    i: usize,
    threads: usize,
    plan: &AttackPlan,
    ctx: Arc<RunCtx>,
    rec: Recorder,
    engine: Engine,
) -> Result<ThreadOutput, ThreadError> {
    if !plan.cpus.is_empty() {
        pin(plan.cpus[i % plan.cpus.len()])?;
    }
    let cpu0 = thread_cpu_s();
    let wait0 = thread_wait_s();
    let work = ThreadShare::of(plan, &ctx, i, threads);
    let ring = match engine {
        Engine::IoUring => match crate::uring::Ring::new(work.slots()) {
            Ok(ring) => Some(ring),
            // Probed fine, but this ring (bigger, or one of several) was
            // refused: `auto` runs this thread on epoll instead.
            Err(_) if plan.engine == Engine::Auto => None,
            Err(e) => return Err(ThreadError::Ring(e)),
        },
        Engine::Epoll | Engine::Auto => None,
    };
    let (rec, engine) = match ring {
        Some(ring) => (crate::uring::run(&ctx, rec, work, ring)?, Engine::IoUring),
        None => (epoll_thread(&ctx, rec, work)?, Engine::Epoll),
    };
    Ok(ThreadOutput {
        rec,
        engine,
        cpu_s: thread_cpu_s() - cpu0,
        wait_s: thread_wait_s().zip(wait0).map(|(b, a)| (b - a).max(0.0)),
        end_ns: now_ns(),
    })
}

/// The epoll engine: a current-thread tokio runtime running the work.
fn epoll_thread(
    ctx: &Arc<RunCtx>,
    rec: Recorder,
    work: ThreadShare,
) -> Result<Recorder, ThreadError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ThreadError::EventLoop)?;
    let local = tokio::task::LocalSet::new();
    let rec = local
        .block_on(&rt, async {
            let timer = PreciseTimer::new()?;
            shard::wait_start(&timer, ctx).await?;
            match work {
                ThreadShare::Open { schedule, cap } => {
                    open_loop::run(ctx.clone(), rec, schedule, cap, &timer).await
                }
                ThreadShare::Closed {
                    clients,
                    requests,
                    end_ns,
                } => closed_loop::run(ctx.clone(), rec, clients, requests, end_ns).await,
            }
        })
        .map_err(ThreadError::Epoll)?;
    drop(local);
    drop(rt);
    Ok(rec)
}
