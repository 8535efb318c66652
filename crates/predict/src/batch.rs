//! Batches (E1 master/worker, E3 calls) in closed form: a batch is a fixed
//! set of tasks, so its total time is set by how many run at once.

use iolab_model::batch::{BatchSpec, MasterSpec, TaskMix, WorkerKind};
use iolab_model::concurrency::Host;
use iolab_model::predict::{PredictedLatency, Prediction};
use iolab_model::steps::BackendKind;
use iolab_model::{ModelKind, ModelParams};

use crate::calibration::cpu_ns;
use crate::closed_form::batch_calls_s;

/// Predict a batch's total time (and per-task completion spread).
pub fn predict_batch(
    spec: &BatchSpec,
    model: ModelKind,
    params: &ModelParams,
    host: impl Into<Host>,
) -> Prediction {
    let host = host.into();
    let cores = host.cores.max(1) as u64;
    let mut p = model.shape(params, &host).parallelism();
    // Real PostgreSQL calls also need one of the pool's connections each.
    let pg_capped = spec.io_backend == BackendKind::Pg && u64::from(params.pg_pool()) < p;
    if pg_capped {
        p = u64::from(params.pg_pool());
    }
    let (tasks, total_s, p50, p99, threads, why) = match &spec.tasks {
        TaskMix::Calls { n, ms } => {
            let s = ms / 1e3;
            let par = p.min(*n).max(1);
            let total = batch_calls_s(*n, par, s);
            // the i-th call to finish (0-based) ends with wave floor(i / P) + 1
            let at = |q: f64| {
                let i = ((q * *n as f64).ceil() as u64).clamp(1, (*n).max(1)) - 1;
                (i / par + 1) as f64 * s * 1e3
            };
            let waves = n.div_ceil(par);
            let why = format!(
                "{n} calls of {} run {par} at a time ({}), so they finish in {waves} wave{} of {}: {} in all",
                fmt_s(s),
                if pg_capped {
                    "one per PostgreSQL connection of the pool"
                } else {
                    model.def().words.per_call
                },
                if waves == 1 { "" } else { "s" },
                fmt_s(s),
                fmt_s(total)
            );
            let threads = if model.blocks_threads() { par } else { cores };
            (*n, total, at(0.5), at(0.99), threads, why)
        }
        TaskMix::Mixed {
            cpu,
            io,
            cpu_terms,
            io_ms,
        } => mixed(
            *cpu,
            *io,
            cpu_terms,
            io_ms,
            spec.master.as_ref(),
            model,
            p,
            cores,
        ),
    };
    Prediction {
        name: String::new(),
        model: model.as_str().to_string(),
        offered: tasks,
        ok: tasks,
        success_ratio: 1.0,
        goodput_rps: tasks as f64 / total_s.max(1e-9),
        throughput_rps: tasks as f64 / total_s.max(1e-9),
        latency_ms: PredictedLatency { p50, p99 },
        peak_in_flight: tasks,
        peak_threads: Some(threads),
        capacity_rps: Some(tasks as f64 / total_s.max(1e-9)),
        first_timeout_s: None,
        explanation: why,
        errors: Default::default(),
        held: None,
        total_s: Some(total_s),
    }
}

fn mean<T: Copy + Into<f64>>(v: &[T]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().map(|x| (*x).into()).sum::<f64>() / v.len() as f64
    }
}

#[allow(clippy::too_many_arguments)]
fn mixed(
    cpu: u32,
    io: u32,
    cpu_terms: &[u64],
    io_ms: &[f64],
    master: Option<&MasterSpec>,
    model: ModelKind,
    p: u64,
    cores: u64,
) -> (u64, f64, f64, f64, u64, String) {
    let terms: Vec<f64> = cpu_terms.iter().map(|t| cpu_ns(*t) as f64 / 1e9).collect();
    let cpu_s = cpu as f64 * mean(&terms);
    let io_s = io as f64 * mean(io_ms) / 1e3;
    let longest = terms
        .iter()
        .copied()
        .chain(io_ms.iter().map(|m| m / 1e3))
        .fold(0.0, f64::max);
    let tasks = (cpu + io) as u64;
    let blocking = |w: u64| {
        let w = w.min(tasks).max(1);
        let t = ((cpu_s + io_s) / w as f64).max(cpu_s / w.min(cores) as f64);
        let why = format!(
            "{w} workers each hold a task for its whole time: ({} CPU + {} IO) / {w} = {}, CPU floor {} on {} cores",
            fmt_s(cpu_s),
            fmt_s(io_s),
            fmt_s((cpu_s + io_s) / w as f64),
            fmt_s(cpu_s / w.min(cores) as f64),
            w.min(cores)
        );
        (t, w, why)
    };
    let cpu_only = |w: u64| {
        let w = w.min(cores).max(1);
        let t = cpu_s / w as f64;
        let why = format!(
            "IO holds no thread, so only CPU counts: {} on {w} cores = {}",
            fmt_s(cpu_s),
            fmt_s(t)
        );
        (t, w, why)
    };
    let (total, threads, why) = match master {
        Some(m) => match m.worker {
            WorkerKind::Blocking => blocking(m.workers as u64),
            WorkerKind::Timer => cpu_only(m.workers as u64),
            WorkerKind::SharedPool => {
                let w = (m.workers as u64).min(cores).max(1);
                let d = m.shared_pool.unwrap_or(24).max(1) as u64;
                let t = (cpu_s / w as f64).max(io_s / d as f64);
                let why = format!(
                    "CPU runs on {w} workers ({} / {w} = {}) while IO still blocks {d} shared-pool threads ({} / {d} = {})",
                    fmt_s(cpu_s),
                    fmt_s(cpu_s / w as f64),
                    fmt_s(io_s),
                    fmt_s(io_s / d as f64)
                );
                (t, m.workers as u64 + d, why)
            }
        },
        None if model.blocks_threads() => blocking(p),
        None => cpu_only(cores),
    };
    let total = total.max(longest);
    // completion times spread evenly over the batch
    (tasks, total, total * 500.0, total * 990.0, threads, why)
}

fn fmt_s(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.0} ms", s * 1e3)
    }
}
