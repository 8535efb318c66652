//! The `[batch]` table of a batch preset: its sweep axes, and the
//! [`BatchSpec`] of one run picked out of them.

use iolab_model::batch::{BatchSpec, MasterSpec, TaskMix, WorkerKind};

use super::super::file::{BatchSection, TasksKind};
use super::super::sweep::{Axis, Point};
use super::{counts, fault, FieldError, Pick};

pub(super) fn batch_axes(b: &BatchSection) -> Result<Vec<Axis>, FieldError> {
    let mut axes = Vec::new();
    match b.tasks {
        TasksKind::Calls => {
            let n = counts("n", &b.n)
                .ok_or_else(|| fault("batch.n", "tasks = \"calls\" needs `n` (number of calls)"))?;
            let ms = b.ms.as_ref().ok_or_else(|| {
                fault(
                    "batch.ms",
                    "tasks = \"calls\" needs `ms` (service time of one call)",
                )
            })?;
            axes.push(n);
            axes.push(Axis::new(
                "ms",
                ms.values().iter().map(|m| Point::Number(m.0)).collect(),
            ));
        }
        TasksKind::Mixed => {
            for (f, missing) in [
                ("batch.cpu", b.cpu.is_none()),
                ("batch.io", b.io.is_none()),
                (
                    "batch.cpu_terms",
                    b.cpu_terms.as_ref().is_none_or(|v| v.is_empty()),
                ),
                ("batch.io_ms", b.io_ms.as_ref().is_none_or(|v| v.is_empty())),
            ] {
                if missing {
                    return Err(fault(
                        f,
                        "tasks = \"mixed\" needs cpu, io, cpu_terms and io_ms",
                    ));
                }
            }
            if b.io_ms
                .iter()
                .flatten()
                .any(|m| !(m.is_finite() && *m >= 0.0))
            {
                return Err(fault(
                    "batch.io_ms",
                    "sleeps are milliseconds, zero or more",
                ));
            }
        }
    }
    if b.workers.is_none() && (b.worker.is_some() || b.shared_pool.is_some()) {
        return Err(fault(
            "batch.workers",
            "a master/worker set-up needs `workers` (W)",
        ));
    }
    axes.extend(counts("workers", &b.workers));
    if let Some(w) = &b.worker {
        axes.push(Axis::new(
            "worker",
            w.values().iter().map(|k| Point::Worker(*k)).collect(),
        ));
    }
    axes.extend(counts("shared_pool", &b.shared_pool));
    Ok(axes)
}

/// The batch of the run at `pick`, scaled (a fault names a field whose
/// point is missing).
pub(super) fn batch_spec(
    b: &BatchSection,
    pick: &Pick,
    scale: f64,
) -> Result<BatchSpec, FieldError> {
    let tasks = match b.tasks {
        TasksKind::Calls => match (pick.count("n"), pick.number("ms")) {
            (Some(n), Some(ms)) => TaskMix::Calls { n, ms: ms * scale },
            _ => {
                return Err(fault(
                    "batch.n",
                    "tasks = \"calls\" needs `n` and `ms` (calls and the service time of one)",
                ))
            }
        },
        TasksKind::Mixed => TaskMix::Mixed {
            cpu: b.cpu.unwrap_or(0),
            io: b.io.unwrap_or(0),
            cpu_terms: b
                .cpu_terms
                .iter()
                .flatten()
                .map(|t| ((*t as f64 * scale).round() as u64).max(1))
                .collect(),
            io_ms: b.io_ms.iter().flatten().map(|m| m * scale).collect(),
        },
    };
    // Only `[batch] workers` makes a master/worker run; a target's own
    // `workers` knob sizes its event loop (the two may not both be set).
    let master = b
        .workers
        .as_ref()
        .and(pick.count_u32("workers"))
        .map(|workers| MasterSpec {
            workers,
            worker: pick.worker().unwrap_or(WorkerKind::Blocking),
            shared_pool: pick.count_u32("shared_pool"),
        });
    Ok(BatchSpec {
        tasks,
        master,
        seed: b.seed.unwrap_or(1),
        io_backend: b.backend.unwrap_or_default(),
    })
}
