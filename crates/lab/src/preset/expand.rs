//! A parsed preset file expanded into an [`ExperimentPlan`]: rules that need
//! more than one field, the sweep's cartesian product, and the time-scale.

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::batch::{BatchSpec, MasterSpec, TaskMix, WorkerKind};
use iolab_model::experiment::{ExperimentPlan, HttpWork, RunSpec, Work};
use iolab_model::{Arrival, ConnectionMode, Driver, ModelKind, ModelParams, Runtime};

use super::file::{
    ArrivalKind, BatchSection, ConnectionKind, DriverKind, LoadSection, PresetFile, TargetSection,
    TasksKind, WorkKind,
};
use super::sweep::{self, Axis, Point};
use super::values::{Count, OneOrMany};

/// Most runs one preset may expand to.
pub const MAX_RUNS: usize = 10_000;
/// Warm-up when the preset gives none.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(1);
/// Client timeout when the preset gives none (artillery's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Series interval when the preset gives none.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);
/// Shortest series interval after scaling.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// A rule broken by a field: `field` is its dotted path, e.g. `load.rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Dotted path of the field, e.g. `targets[1].command`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

fn fault(field: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

/// Overrides from the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    /// `--scale`.
    pub scale: Option<f64>,
    /// `--reps`.
    pub reps: Option<u32>,
}

/// Expand a parsed file into a plan.
pub fn expand(
    file: PresetFile,
    source: Option<String>,
    over: Overrides,
) -> Result<ExperimentPlan, FieldError> {
    if file.name.trim().is_empty() || file.name.contains(['/', '\\']) {
        return Err(fault(
            "name",
            "give a short name without slashes, e.g. \"showdown\"",
        ));
    }
    if file.targets.is_empty() {
        return Err(fault("targets", "add at least one [[targets]] table"));
    }
    let scale = over.scale.or(file.scale.map(|s| s.0)).unwrap_or(1.0);
    let reps = over.reps.or(file.reps.map(Count::u32)).unwrap_or(1);
    let warmup = file.warmup.map_or(DEFAULT_WARMUP, |d| d.0);

    let common = match file.kind {
        WorkKind::Http => {
            if file.batch.is_some() {
                return Err(fault("batch", "a [batch] table needs kind = \"batch\""));
            }
            let load = file
                .load
                .as_ref()
                .ok_or_else(|| fault("load", "an HTTP preset needs a [load] table"))?;
            http_axes(load)?
        }
        WorkKind::Batch => {
            if file.load.is_some() {
                return Err(fault("load", "a batch preset has no [load]; use [batch]"));
            }
            let batch = file
                .batch
                .as_ref()
                .ok_or_else(|| fault("batch", "kind = \"batch\" needs a [batch] table"))?;
            batch_axes(batch)?
        }
    };

    let mut runs = Vec::new();
    for (ti, target) in file.targets.iter().enumerate() {
        check_target(ti, target, file.kind)?;
        if target.workers.is_some() && file.batch.as_ref().is_some_and(|b| b.workers.is_some()) {
            return Err(fault(
                format!("targets[{ti}].workers"),
                "[batch] workers already sets the master's workers: remove one of the two",
            ));
        }
        if target.rate.is_some()
            && file
                .load
                .as_ref()
                .is_some_and(|l| matches!(l.driver, DriverKind::Closed))
        {
            return Err(fault(
                format!("targets[{ti}].rate"),
                "applies to an open loop: set driver = \"open\" or remove it",
            ));
        }
        let t_axes = target_axes(target);
        let overrides = target_overrides(target);
        let mut axes = t_axes.clone();
        axes.extend(common.iter().map(|a| {
            overrides
                .iter()
                .find(|o| o.name == a.name)
                .unwrap_or(a)
                .clone()
        }));
        if sweep::count(&axes).saturating_add(runs.len()) > MAX_RUNS {
            return Err(fault(
                "targets",
                format!("the sweep expands to more than {MAX_RUNS} runs; shorten a list"),
            ));
        }
        for combo in sweep::product(&axes) {
            let pick = |name: &str| -> Option<&Point> {
                axes.iter()
                    .position(|a| a.name == name)
                    .map(|i| &axes[i].points[combo[i]])
            };
            let model: ModelKind = serde_json::from_value(pick("model").unwrap().value.clone())
                .expect("model axis holds model names");
            let params = params_of(&pick);
            let synchronized = pick(crate::jvm::SYNCHRONIZED).is_some_and(|p| p.value == true);
            if target.runtime == Runtime::Jvm && target.command.is_none() {
                crate::jvm::check(model, &params, synchronized)
                    .map_err(|e| fault(format!("targets[{ti}]"), e))?;
            }
            let mut coordinates = BTreeMap::new();
            coordinates.insert("model".to_string(), pick("model").unwrap().value.clone());
            let mut name = target
                .label
                .clone()
                .unwrap_or_else(|| model.as_str().to_string());
            if let Some(label) = &target.label {
                coordinates.insert("target".into(), label.clone().into());
            }
            if synchronized {
                coordinates.insert(crate::jvm::SYNCHRONIZED.into(), true.into());
            }
            for (ai, axis) in axes.iter().enumerate() {
                if axis.name != "model" && swept(axis.name, &file.targets, &common) {
                    let p = &axis.points[combo[ai]];
                    coordinates.insert(axis.name.to_string(), p.value.clone());
                    name.push_str(&format!("-{}={}", axis.name, p.label));
                }
            }
            let work = match file.kind {
                WorkKind::Http => {
                    Work::Http(http_work(file.load.as_ref().unwrap(), target, &pick, scale))
                }
                WorkKind::Batch => {
                    Work::Batch(batch_spec(file.batch.as_ref().unwrap(), &pick, scale))
                }
            };
            runs.push(RunSpec {
                name,
                coordinates,
                model,
                runtime: target.runtime,
                params,
                scale,
                work,
            });
        }
    }
    let mut seen = std::collections::HashSet::new();
    for r in &runs {
        if !seen.insert(r.name.clone()) {
            return Err(fault(
                "targets",
                format!(
                    "two runs would both be named '{}': give the [[targets]] tables distinct `label`s",
                    r.name
                ),
            ));
        }
    }

    Ok(ExperimentPlan {
        name: file.name,
        description: file.description,
        source,
        scale,
        reps,
        warmup: warmup.mul_f64(scale),
        runs,
        published: file.published.map(toml_to_json),
    })
}

/// Is this axis a sweep anywhere in the preset? (Then every run names it.)
fn swept(name: &str, targets: &[TargetSection], common: &[Axis]) -> bool {
    common.iter().any(|a| a.name == name && a.sweeps())
        || targets.iter().any(|t| {
            target_axes(t)
                .iter()
                .chain(target_overrides(t).iter())
                .any(|a| a.name == name && a.sweeps())
        })
}

fn counts(name: &'static str, v: &Option<OneOrMany<Count>>) -> Option<Axis> {
    v.as_ref()
        .map(|v| Axis::new(name, v.values().iter().map(|c| Point::count(c.0)).collect()))
}

fn target_axes(t: &TargetSection) -> Vec<Axis> {
    let mut axes = vec![Axis::new(
        "model",
        t.model
            .values()
            .iter()
            .map(|m| Point::text(m.as_str()))
            .collect(),
    )];
    if let Some(s) = &t.synchronized {
        axes.push(Axis::new(
            crate::jvm::SYNCHRONIZED,
            s.values()
                .iter()
                .map(|&b| Point {
                    value: b.into(),
                    label: b.to_string(),
                })
                .collect(),
        ));
    }
    for (name, v) in [
        ("threads", &t.threads),
        ("max_connections", &t.max_connections),
        ("backlog", &t.backlog),
        ("workers", &t.workers),
        ("offload", &t.offload),
        ("max_threads", &t.max_threads),
        ("mc_pool", &t.mc_pool),
        ("pg_pool", &t.pg_pool),
    ] {
        axes.extend(counts(name, v));
    }
    axes
}

/// Load axes a target replaces with its own (`steps`, `rate`).
fn target_overrides(t: &TargetSection) -> Vec<Axis> {
    let mut axes = Vec::new();
    if let Some(steps) = &t.steps {
        axes.push(Axis::new(
            "steps",
            steps
                .values()
                .iter()
                .map(|s| Point::text(s.0.to_string()))
                .collect(),
        ));
    }
    if let Some(rate) = &t.rate {
        axes.push(Axis::new(
            "rate",
            rate.values().iter().map(|r| Point::number(r.0)).collect(),
        ));
    }
    axes
}

fn check_target(i: usize, t: &TargetSection, kind: WorkKind) -> Result<(), FieldError> {
    let field = |f: &str| format!("targets[{i}].{f}");
    if kind == WorkKind::Batch && (t.steps.is_some() || t.rate.is_some()) {
        let f = if t.steps.is_some() { "steps" } else { "rate" };
        return Err(fault(
            field(f),
            "applies to HTTP presets only: a batch preset sets its tasks in [batch]",
        ));
    }
    if let Some(cmd) = &t.command {
        if cmd.is_empty() || cmd[0].trim().is_empty() {
            return Err(fault(
                field("command"),
                "give the program and its arguments, e.g. [\"java\", \"-jar\", \"t.jar\"]",
            ));
        }
        if kind == WorkKind::Batch {
            return Err(fault(
                field("command"),
                "batch runs happen in process; remove `command`",
            ));
        }
    }
    if t.runtime == Runtime::Rust && t.command.is_none() {
        if t.model.values().contains(&ModelKind::Virtual) {
            return Err(fault(
                field("model"),
                "'virtual' is a JVM model: give runtime = \"jvm\"",
            ));
        }
        if t.synchronized.is_some() {
            return Err(fault(
                field(crate::jvm::SYNCHRONIZED),
                "applies to the JVM targets: give runtime = \"jvm\" or remove it",
            ));
        }
    }
    if t.runtime == Runtime::Jvm && t.command.is_none() && kind == WorkKind::Batch {
        return Err(fault(
            field("runtime"),
            "batch runs happen in process; remove runtime = \"jvm\"",
        ));
    }
    if let Some(label) = &t.label {
        if label.trim().is_empty() || label.contains(['/', ' ']) {
            return Err(fault(
                field("label"),
                "a label is one word without spaces or slashes",
            ));
        }
    }
    Ok(())
}

fn http_axes(load: &LoadSection) -> Result<Vec<Axis>, FieldError> {
    let mut axes = vec![Axis::new(
        "steps",
        load.steps
            .values()
            .iter()
            .map(|s| Point::text(s.0.to_string()))
            .collect(),
    )];
    match load.driver {
        DriverKind::Open => {
            let rate = load.rate.as_ref().ok_or_else(|| {
                fault(
                    "load.rate",
                    "an open loop needs `rate` (requests per second), e.g. rate = 200",
                )
            })?;
            if load.concurrency.is_some() || load.requests.is_some() {
                return Err(fault(
                    if load.concurrency.is_some() {
                        "load.concurrency"
                    } else {
                        "load.requests"
                    },
                    "applies to a closed loop: set driver = \"closed\" or remove it",
                ));
            }
            if load.duration.is_none() {
                return Err(fault(
                    "load.duration",
                    "an open loop needs `duration`, e.g. \"5s\"",
                ));
            }
            axes.push(Axis::new(
                "rate",
                rate.values().iter().map(|r| Point::number(r.0)).collect(),
            ));
        }
        DriverKind::Closed => {
            let c = load.concurrency.as_ref().ok_or_else(|| {
                fault(
                    "load.concurrency",
                    "a closed loop needs `concurrency` (clients), e.g. 50",
                )
            })?;
            if load.rate.is_some() {
                return Err(fault(
                    "load.rate",
                    "applies to an open loop: set driver = \"open\" or use `concurrency`",
                ));
            }
            if load.duration.is_none() && load.requests.is_none() {
                return Err(fault(
                    "load.duration",
                    "a closed loop needs `duration` or `requests`",
                ));
            }
            axes.push(Axis::new(
                "concurrency",
                c.values().iter().map(|c| Point::count(c.0)).collect(),
            ));
            axes.extend(counts("requests", &load.requests));
        }
    }
    if let Some(d) = &load.duration {
        axes.push(Axis::new(
            "duration",
            d.values()
                .iter()
                .map(|d| Point::text(d.to_string()))
                .collect(),
        ));
    }
    if let Some(t) = &load.timeout {
        axes.push(Axis::new(
            "timeout",
            t.values()
                .iter()
                .map(|d| Point::text(d.to_string()))
                .collect(),
        ));
    }
    if let Some(c) = &load.connections {
        axes.push(Axis::new(
            "connections",
            c.values()
                .iter()
                .map(|c| {
                    Point::text(match c {
                        ConnectionKind::KeepAlive => "keep-alive",
                        ConnectionKind::NewPerRequest => "new-per-request",
                    })
                })
                .collect(),
        ));
    }
    if load.seed.is_some() && load.arrival != ArrivalKind::Poisson {
        return Err(fault(
            "load.seed",
            "a seed applies to arrival = \"poisson\"",
        ));
    }
    Ok(axes)
}

fn batch_axes(b: &BatchSection) -> Result<Vec<Axis>, FieldError> {
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
                ms.values().iter().map(|m| Point::number(m.0)).collect(),
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
            w.values()
                .iter()
                .map(|k| Point::text(worker_name(*k)))
                .collect(),
        ));
    }
    axes.extend(counts("shared_pool", &b.shared_pool));
    Ok(axes)
}

fn worker_name(k: WorkerKind) -> &'static str {
    match k {
        WorkerKind::Blocking => "blocking",
        WorkerKind::SharedPool => "shared-pool",
        WorkerKind::Timer => "timer",
    }
}

type Pick<'a> = dyn Fn(&str) -> Option<&'a Point> + 'a;

fn num(pick: &Pick, name: &str) -> Option<f64> {
    pick(name).and_then(|p| p.value.as_f64())
}

fn count_of(pick: &Pick, name: &str) -> Option<u32> {
    pick(name)
        .and_then(|p| p.value.as_u64())
        .map(|v| u32::try_from(v).unwrap_or(u32::MAX))
}

fn params_of(pick: &Pick) -> ModelParams {
    ModelParams {
        threads: count_of(pick, "threads"),
        max_connections: count_of(pick, "max_connections"),
        backlog: count_of(pick, "backlog"),
        workers: count_of(pick, "workers"),
        offload: count_of(pick, "offload"),
        max_threads: count_of(pick, "max_threads"),
        mc_pool: count_of(pick, "mc_pool"),
        pg_pool: count_of(pick, "pg_pool"),
    }
}

fn text_duration(pick: &Pick, name: &str) -> Option<Duration> {
    pick(name)
        .and_then(|p| p.value.as_str())
        .map(|s| iolab_model::parse_duration(s).expect("durations were validated when read"))
}

fn http_work(load: &LoadSection, target: &TargetSection, pick: &Pick, scale: f64) -> HttpWork {
    let steps: iolab_model::Step = pick("steps")
        .and_then(|p| p.value.as_str())
        .expect("steps axis")
        .parse()
        .expect("steps were validated when read");
    let duration = text_duration(pick, "duration");
    let driver = match load.driver {
        DriverKind::Open => Driver::Open {
            phases: vec![iolab_model::Phase::hold(
                num(pick, "rate").expect("rate axis"),
                duration.expect("checked: open loops have a duration"),
            )],
            arrival: match load.arrival {
                ArrivalKind::Constant => Arrival::Constant,
                ArrivalKind::Poisson => Arrival::Poisson {
                    seed: load.seed.unwrap_or(1),
                },
            },
        },
        DriverKind::Closed => Driver::Closed {
            concurrency: count_of(pick, "concurrency").expect("concurrency axis"),
            requests: pick("requests").and_then(|p| p.value.as_u64()),
            duration,
        },
    };
    let max = load
        .max_connections
        .map_or(ConnectionMode::DEFAULT_MAX, Count::u32);
    let connections = match pick("connections").and_then(|p| p.value.as_str()) {
        Some("new-per-request") => ConnectionMode::NewPerRequest { max },
        _ => ConnectionMode::KeepAlive { max },
    };
    let timeout = text_duration(pick, "timeout").unwrap_or(DEFAULT_TIMEOUT);
    let interval = load.interval.map_or(DEFAULT_INTERVAL, |d| d.0);
    HttpWork {
        steps: steps.scaled(scale),
        driver: driver.scaled(scale),
        connections,
        timeout: timeout.mul_f64(scale),
        interval: interval.mul_f64(scale).max(MIN_INTERVAL),
        command: target.command.clone(),
        body: load.body,
    }
}

fn batch_spec(b: &BatchSection, pick: &Pick, scale: f64) -> BatchSpec {
    let tasks = match b.tasks {
        TasksKind::Calls => TaskMix::Calls {
            n: pick("n").and_then(|p| p.value.as_u64()).expect("n axis"),
            ms: num(pick, "ms").expect("ms axis") * scale,
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
        .and(count_of(pick, "workers"))
        .map(|workers| MasterSpec {
            workers,
            worker: pick("worker")
                .and_then(|p| serde_json::from_value(p.value.clone()).ok())
                .unwrap_or(WorkerKind::Blocking),
            shared_pool: count_of(pick, "shared_pool"),
        });
    BatchSpec {
        tasks,
        master,
        seed: b.seed.unwrap_or(1),
        io_backend: b.backend.unwrap_or_default(),
    }
}

/// TOML published numbers as JSON, for the report.
fn toml_to_json(v: toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => s.into(),
        toml::Value::Integer(i) => i.into(),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
        }
        toml::Value::Boolean(b) => b.into(),
        toml::Value::Datetime(d) => d.to_string().into(),
        toml::Value::Array(a) => a.into_iter().map(toml_to_json).collect(),
        toml::Value::Table(t) => t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect(),
    }
}
