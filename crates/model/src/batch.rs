//! In-process batch experiments (E1 master/worker, E3 futures): the spec of a
//! batch run and its `iolab.batch/1` result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::concurrency::ModelKind;
use crate::knob::ModelParams;
use crate::steps::BackendKind;

/// The schema tag of a batch JSON document.
pub const BATCH_SCHEMA: &str = "iolab.batch/1";

/// What tasks a batch runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TaskMix {
    /// E1: `cpu` CPU tasks with terms drawn from `cpu_terms`, `io` IO tasks
    /// with sleeps drawn from `io_ms`, shuffled with the batch's seed.
    Mixed {
        /// Number of CPU tasks.
        cpu: u32,
        /// Number of IO tasks.
        io: u32,
        /// Leibniz term counts to draw from.
        cpu_terms: Vec<u64>,
        /// Sleep durations (ms) to draw from.
        io_ms: Vec<f64>,
    },
    /// E3: `n` calls of one blocking service taking `ms` each.
    Calls {
        /// Number of calls.
        n: u64,
        /// Service time, ms.
        ms: f64,
    },
}

/// How a master hands tasks to workers (E1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerKind {
    /// Sleeps in place, then reports Ready.
    Blocking,
    /// Moves the sleep to a shared pool and reports Ready at once (E1's flawed "non-blocking").
    SharedPool,
    /// A timer: no thread held while waiting.
    Timer,
}

/// Master/worker settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MasterSpec {
    /// Number of workers W.
    pub workers: u32,
    /// Worker behaviour.
    pub worker: WorkerKind,
    /// Shared dispatcher threads D for [`WorkerKind::SharedPool`].
    #[serde(default)]
    pub shared_pool: Option<u32>,
}

/// One batch run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BatchSpec {
    /// The tasks.
    pub tasks: TaskMix,
    /// A master/worker set-up, or none for a plain executor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<MasterSpec>,
    /// Seed of the task shuffle and draws (always recorded).
    pub seed: u64,
    /// Where IO tasks wait: the embedded timer (`sleep`, E1 and E3 as
    /// published) or one real call each to `http` or `pg`.
    #[serde(default, skip_serializing_if = "BackendKind::is_sleep")]
    pub io_backend: BackendKind,
}

/// Statistics of one task type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskTypeStats {
    /// Tasks of this type.
    pub count: u64,
    /// Mean time from batch start to task completion... split below, ms.
    pub mean_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Mean time waiting for a thread or worker, ms.
    pub wait_mean_ms: f64,
    /// Mean time being served, ms.
    pub service_mean_ms: f64,
    /// 99th percentile of the wait, ms.
    #[serde(default)]
    pub wait_p99_ms: f64,
    /// 99th percentile of the service time, ms.
    #[serde(default)]
    pub service_p99_ms: f64,
}

/// The result of one batch run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BatchResult {
    /// Executor model.
    pub model: Option<ModelKind>,
    /// Knobs and master settings, flattened for display.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Tasks run.
    pub tasks: u64,
    /// Tasks that failed (e.g. a thread could not be started).
    #[serde(default)]
    pub failed: u64,
    /// Wall time of the whole batch, seconds.
    pub total_s: f64,
    /// Per task type (`cpu`, `io`).
    pub by_type: BTreeMap<String, TaskTypeStats>,
    /// Peak OS threads of the process.
    pub peak_threads: u64,
    /// Peak RSS, MiB.
    pub peak_rss_mb: f64,
    /// CPU seconds / (wall seconds x cores).
    #[serde(default)]
    pub cpu_utilisation: f64,
    /// Why it stopped early or what went wrong (e.g. the OS refused a thread), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Executor-specific counters, e.g. `threads_spawned`, `spawn_us_mean`,
    /// `cap_waits`, `peak_io_in_flight`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, f64>,
    /// Who held what, when, for a sample of the tasks (`iolab batch --spans N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spans: Option<crate::spans::Timeline>,
}

/// A model plus knobs, for batch runs that use [`ModelParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BatchExecutor {
    /// Executor model.
    pub model: ModelKind,
    /// Its knobs.
    pub params: ModelParams,
}

/// E1's Leibniz term counts (one CPU task = one whole series).
pub const E1_CPU_TERMS: [u64; 10] = [
    308_836_549,
    433_275_937,
    505_880_809,
    281_779_493,
    346_726_528,
    367_281_330,
    497_563_398,
    465_600_232,
    526_508_662,
    662_777_539,
];

/// E1's IO task sleeps, ms.
pub const E1_IO_MS: [f64; 5] = [5000.0, 5500.0, 6000.0, 6500.0, 7000.0];

/// The seed used when none is given (recorded in every result).
pub const DEFAULT_SEED: u64 = 42;

impl TaskMix {
    /// E1's exact mix: 100 CPU tasks and 100 IO tasks.
    pub fn e1() -> Self {
        TaskMix::Mixed {
            cpu: 100,
            io: 100,
            cpu_terms: E1_CPU_TERMS.to_vec(),
            io_ms: E1_IO_MS.to_vec(),
        }
    }

    /// Number of tasks.
    pub fn len(&self) -> u64 {
        match self {
            TaskMix::Mixed { cpu, io, .. } => u64::from(*cpu) + u64::from(*io),
            TaskMix::Calls { n, .. } => *n,
        }
    }

    /// True when there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same mix with every sleep and CPU term count multiplied by `factor`
    /// (term counts rounded, at least 1 when the original was not 0).
    pub fn scaled(&self, factor: f64) -> Self {
        match self {
            TaskMix::Mixed {
                cpu,
                io,
                cpu_terms,
                io_ms,
            } => TaskMix::Mixed {
                cpu: *cpu,
                io: *io,
                cpu_terms: cpu_terms
                    .iter()
                    .map(|&t| {
                        if t == 0 {
                            0
                        } else {
                            ((t as f64 * factor).round() as u64).max(1)
                        }
                    })
                    .collect(),
                io_ms: io_ms.iter().map(|ms| ms * factor).collect(),
            },
            TaskMix::Calls { n, ms } => TaskMix::Calls {
                n: *n,
                ms: ms * factor,
            },
        }
    }
}

impl BatchSpec {
    /// The same batch at time-scale `factor` (see [`TaskMix::scaled`]); the
    /// master set-up and seed are unchanged.
    pub fn scaled(&self, factor: f64) -> Self {
        BatchSpec {
            tasks: self.tasks.scaled(factor),
            master: self.master.clone(),
            seed: self.seed,
            io_backend: self.io_backend,
        }
    }
}

impl WorkerKind {
    /// Every worker kind.
    pub const ALL: [WorkerKind; 3] = [Self::Blocking, Self::SharedPool, Self::Timer];

    /// The name used on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Blocking => "blocking",
            Self::SharedPool => "shared-pool",
            Self::Timer => "timer",
        }
    }
}

/// `min-max` of a list (one value when all are equal), `f` formatting each.
fn range<T: Copy + PartialOrd>(v: &[T], f: impl Fn(T) -> String) -> String {
    let lo = v.iter().copied().reduce(|a, b| if b < a { b } else { a });
    let hi = v.iter().copied().reduce(|a, b| if b > a { b } else { a });
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo < hi => format!("{}-{}", f(lo), f(hi)),
        (Some(lo), _) => f(lo),
        _ => "-".into(),
    }
}

/// The tasks as the lab says them: `1,000 calls of 100 ms`, `200 tasks:
/// 100 cpu of 3,088,365-12,353,460 Leibniz terms, 100 io of 50-500 ms`.
impl std::fmt::Display for TaskMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |m: f64| crate::format_duration(std::time::Duration::from_secs_f64(m / 1e3));
        match self {
            TaskMix::Calls { n, ms: each } => {
                write!(f, "{} calls of {}", crate::units::thousands(*n), ms(*each))
            }
            TaskMix::Mixed {
                cpu,
                io,
                cpu_terms,
                io_ms,
            } => write!(
                f,
                "{} tasks: {cpu} cpu of {} Leibniz terms, {io} io of {}",
                cpu + io,
                range(cpu_terms, crate::units::thousands),
                range(io_ms, ms)
            ),
        }
    }
}

/// A batch as the lab says it: its tasks, then the master and its
/// workers when there is one, then where IO waits when it is not the timer.
impl std::fmt::Display for BatchSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.tasks)?;
        if let Some(m) = &self.master {
            write!(f, " · a master and {} {} workers", m.workers, m.worker)?;
            if let Some(d) = m.shared_pool {
                write!(f, " sharing {d} pool threads")?;
            }
        }
        if !self.io_backend.is_sleep() {
            write!(f, " · io on {}", self.io_backend)?;
        }
        Ok(())
    }
}

impl std::fmt::Display for WorkerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for WorkerKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| {
                format!("unknown worker '{s}' (expected one of: blocking, shared-pool, timer)")
            })
    }
}

impl MasterSpec {
    /// Shared dispatcher threads, defaulted like Akka's default dispatcher:
    /// 3 x cores, at least 8, at most 64 (24 on E1's 8-thread machine).
    pub fn shared_pool(&self, cores: u32) -> u32 {
        self.shared_pool
            .unwrap_or_else(|| default_shared_pool(cores))
    }
}

/// Akka's default-dispatcher size for `cores` cores: 3 x cores clamped to 8..=64.
pub fn default_shared_pool(cores: u32) -> u32 {
    (3 * cores).clamp(8, 64)
}

/// An `iolab.batch/1` document: what `iolab batch --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BatchFile {
    /// Always [`BATCH_SCHEMA`].
    pub schema: String,
    /// One result per run, in order.
    pub runs: Vec<BatchResult>,
}

impl BatchFile {
    /// Wrap results with the schema tag.
    pub fn new(runs: Vec<BatchResult>) -> Self {
        BatchFile {
            schema: BATCH_SCHEMA.to_string(),
            runs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e1_mix_scales_sleeps_and_terms() {
        let mix = TaskMix::e1().scaled(0.01);
        assert_eq!(mix.len(), 200);
        match mix {
            TaskMix::Mixed {
                cpu_terms, io_ms, ..
            } => {
                assert_eq!(cpu_terms[0], 3_088_365);
                assert!((io_ms[0] - 50.0).abs() < 1e-9);
            }
            TaskMix::Calls { .. } => unreachable!(),
        }
    }

    #[test]
    fn worker_names_round_trip() {
        for w in WorkerKind::ALL {
            assert_eq!(w.as_str().parse::<WorkerKind>().unwrap(), w);
            assert_eq!(serde_json::to_value(w).unwrap(), w.as_str());
        }
        assert!("actor".parse::<WorkerKind>().is_err());
        assert_eq!(default_shared_pool(2), 8);
        assert_eq!(default_shared_pool(8), 24);
    }
}
