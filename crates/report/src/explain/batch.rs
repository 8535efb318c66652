//! The sentence of a batch run: its total time against what its executor's
//! parallelism (or E1's master/worker set-up) implies.

use iolab_model::batch::{BatchResult, BatchSpec, MasterSpec, TaskMix, WorkerKind};
use iolab_model::concurrency::Capacity;
use iolab_model::experiment::Work;
use iolab_model::runs::RunRecord;
use iolab_model::steps::BackendKind;

use super::{capacity, one_line, plural, Clock};
use crate::numbers::{count, secs};

pub(super) fn sentence(run: &RunRecord, who: &str, clock: &Clock, cores: Option<u32>) -> String {
    let b = run.batch.as_ref().expect("checked by the caller");
    let Work::Batch(spec) = &run.spec.work else {
        unreachable!("checked by the caller")
    };
    let measured = format!("measured {}", clock.secs(b.total_s));
    let mut s = match (&spec.tasks, &spec.master) {
        (TaskMix::Calls { n, ms }, _) => {
            let (c, sep) = calls(run, spec, who, clock, cores, (*n, ms / 1e3));
            format!("{c}{sep} {measured}")
        }
        (TaskMix::Mixed { io, io_ms, .. }, Some(master)) => {
            let w = master.workers.max(1) as f64;
            let bound = master_bound(b, master, clock, w, (*io, io_ms));
            format!(
                "{who} with {w} {} workers: {bound}; {measured}",
                master.worker
            )
        }
        (TaskMix::Mixed { cpu, io, .. }, None) => {
            format!("{who} ran {cpu} cpu and {io} io tasks: {measured}")
        }
    };
    if let Some(io) = b.by_type.get("io") {
        if io.wait_mean_ms > 0.0 {
            s += &format!(", IO tasks waited {} on average", clock.ms(io.wait_mean_ms));
        }
    }
    s += &format!(", peak {} threads", count(b.peak_threads));
    if b.failed > 0 {
        s += &format!("; {} tasks failed", count(b.failed));
    }
    if let Some(f) = &b.failure {
        s += &format!(" ({})", one_line(f));
    }
    s
}

/// E3: n calls of S on an executor of P: ceil(n/P) rounds of S (and the
/// punctuation before what was measured).
fn calls(
    run: &RunRecord,
    spec: &BatchSpec,
    who: &str,
    clock: &Clock,
    cores: Option<u32>,
    (n, call): (u64, f64),
) -> (String, &'static str) {
    let mut cap = capacity(run.model, run.params(), cores);
    // Real PostgreSQL calls wait for one of the pool's connections first:
    // the pool caps every executor, the non-blocking one too.
    if spec.io_backend == BackendKind::Pg {
        let conns = run.params().pg_pool();
        if !matches!(cap, Some(Capacity::Bounded { n, .. }) if n <= conns) {
            cap = Some(Capacity::Bounded {
                n: conns,
                what: "PostgreSQL connections",
            });
        }
    }
    match cap {
        Some(Capacity::Bounded { n: c, what }) => {
            let rounds = n.div_ceil(c.max(1) as u64);
            let text = format!(
                "{who} ran {} of {} on {c} {what}: ceil({n}/{c}) = {} x {} = {} expected",
                plural(n, "call"),
                clock.secs(call),
                plural(rounds, "round"),
                secs(call),
                clock.secs(rounds as f64 * call)
            );
            (text, ",")
        }
        Some(Capacity::Unbounded { why }) => (
            format!(
                "{who} ran {} of {} at once ({why}): {} expected",
                plural(n, "call"),
                clock.secs(call),
                clock.secs(call)
            ),
            ",",
        ),
        None => (
            format!("{who} ran {} calls of {}", count(n), clock.secs(call)),
            ":",
        ),
    }
}

/// E1: what bounds a master's W workers of each kind.
fn master_bound(
    b: &BatchResult,
    master: &MasterSpec,
    clock: &Clock,
    w: f64,
    (io, io_ms): (u32, &[f64]),
) -> String {
    let io_mean = if io_ms.is_empty() {
        0.0
    } else {
        io_ms.iter().sum::<f64>() / io_ms.len() as f64 / 1e3
    };
    let io_total = f64::from(io) * io_mean;
    let cpu_total = b
        .by_type
        .get("cpu")
        .map(|c| c.count as f64 * c.service_mean_ms / 1e3);
    match master.worker {
        WorkerKind::Blocking => {
            let busy = io_total + cpu_total.unwrap_or(0.0);
            format!(
                "each worker holds its thread through every sleep, so {} of IO{} over {w} workers takes at least {}",
                clock.secs(io_total),
                cpu_total.map_or(String::new(), |c| format!(" + {} of CPU", clock.secs(c))),
                clock.secs(busy / w)
            )
        }
        WorkerKind::SharedPool => {
            let d = master.shared_pool.unwrap_or(0).max(1) as f64;
            format!(
                "IO sleeps move to a shared pool of {d} threads, so {} of IO takes at least {} whatever W",
                clock.secs(io_total),
                clock.secs(io_total / d)
            )
        }
        WorkerKind::Timer => format!(
            "IO waits on timers and holds no thread, so only the CPU work{} is shared by the workers",
            cpu_total.map_or(String::new(), |c| format!(" ({})", clock.secs(c)))
        ),
    }
}
