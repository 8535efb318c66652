//! The batch experiments' fixtures: E1's master and W workers (three worker
//! kinds) and E3's n calls through five executors, each with the closed-form
//! total `iolab predict` gives.

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::batch::*;
use iolab_model::experiment::{RunSpec, Work};
use iolab_model::predict::Prediction;
use iolab_model::runs::{Outcome, RunRecord, RunsFile};
use iolab_model::{ModelKind, ModelParams};
use serde_json::json;

use super::{r, runs_file, About, Lcg};

/// A completed batch run and its result.
fn batch_record(
    name: String,
    coords: BTreeMap<String, serde_json::Value>,
    model: ModelKind,
    params: ModelParams,
    spec: BatchSpec,
    scale: f64,
    result: BatchResult,
) -> RunRecord {
    let spec = RunSpec {
        name,
        coordinates: coords,
        ..RunSpec::of_model(model, params, scale, Work::Batch(spec))
    };
    RunRecord {
        batch: Some(result),
        ..RunRecord::new(spec, Outcome::Completed)
    }
}

pub fn e1_workers() -> RunsFile {
    let scale = 0.1;
    let mut rng = Lcg(7);
    let mut runs = Vec::new();
    let kinds = [
        (WorkerKind::Blocking, 950.0),
        (WorkerKind::SharedPool, 350.0),
        (WorkerKind::Timer, 240.0),
    ];
    for (kind, k) in kinds {
        for w in [4u32, 8, 12, 16, 20, 24] {
            let model = if kind == WorkerKind::Timer {
                ModelKind::LoopAsync
            } else {
                ModelKind::Pool
            };
            let kind_s = serde_json::to_value(kind).unwrap();
            let name = format!("{}-workers={w}", kind_s.as_str().unwrap());
            let coords = BTreeMap::from([
                ("worker".to_string(), kind_s.clone()),
                ("workers".to_string(), json!(w)),
            ]);
            let total = (k / w as f64).max(50.0) * scale * (1.0 + 0.03 * rng.uniform());
            let spec = e1_spec(kind, w);
            let result = e1_result(model, &kind_s, w, total, scale, &mut rng);
            runs.push(batch_record(
                name,
                coords,
                model,
                ModelParams {
                    threads: Some(w),
                    ..Default::default()
                },
                spec,
                scale,
                result,
            ));
        }
    }
    let about = About {
        name: "e1-master-worker",
        description: "E1: 200 mixed CPU/IO tasks through a master and W workers, blocking vs shared-pool vs timer",
        scale,
        warmup: Duration::ZERO,
        published: Some(e1_published()),
        when: ("2026-11-21T20:20:00Z", "2026-11-21T20:26:00Z"),
        command: "iolab run e1-master-worker --scale 0.1",
    };
    runs_file(about, runs)
}

/// E1's batch: 100 CPU and 100 IO tasks through a master and `w` workers.
fn e1_spec(kind: WorkerKind, w: u32) -> BatchSpec {
    let master = MasterSpec {
        workers: w,
        worker: kind,
        shared_pool: (kind == WorkerKind::SharedPool).then_some(24),
    };
    BatchSpec {
        tasks: TaskMix::Mixed {
            cpu: 100,
            io: 100,
            cpu_terms: vec![30_883_655, 43_327_594, 50_588_081, 28_177_949, 34_672_653],
            io_ms: vec![500.0, 550.0, 600.0, 650.0, 700.0],
        },
        master: Some(master),
        seed: 42,
        io_backend: Default::default(),
    }
}

/// What E1 measured of `w` workers that took `total` seconds (the CPU tasks
/// waiting for workers, the IO tasks for their turn).
fn e1_result(
    model: ModelKind,
    kind_s: &serde_json::Value,
    w: u32,
    total: f64,
    scale: f64,
    rng: &mut Lcg,
) -> BatchResult {
    let io_wait = ((total - 0.6) * 1e3 * 0.4).max(0.0);
    BatchResult {
        model: Some(model),
        params: BTreeMap::from([
            ("workers".to_string(), json!(w)),
            ("worker".to_string(), kind_s.clone()),
        ]),
        tasks: 200,
        failed: 0,
        total_s: r(total, 3),
        by_type: BTreeMap::from([
            (
                "cpu".to_string(),
                TaskTypeStats {
                    count: 100,
                    mean_ms: r(total * 520.0, 1),
                    p99_ms: r(total * 980.0, 1),
                    wait_mean_ms: r(total * 170.0, 1),
                    service_mean_ms: r(350.0 * (1.0 + 0.2 * rng.uniform()), 1),
                    ..Default::default()
                },
            ),
            (
                "io".to_string(),
                TaskTypeStats {
                    count: 100,
                    mean_ms: r(600.0 + io_wait, 1),
                    p99_ms: r(700.0 + io_wait * 1.8, 1),
                    wait_mean_ms: r(io_wait, 1),
                    service_mean_ms: r(601.0 + rng.uniform(), 1),
                    ..Default::default()
                },
            ),
        ]),
        peak_threads: 3 + w as u64 + if kind_s == "shared-pool" { 24 } else { 0 },
        peak_rss_mb: r(7.5 + w as f64 * 0.1, 2),
        cpu_utilisation: r((50.0 * scale / total).min(1.0) * 0.97, 3),
        failure: None,
        ..Default::default()
    }
}

fn e1_published() -> serde_json::Value {
    json!({
        "source": "seed 000: Scala 2.11 + Akka 2.3 on an i7-4790 (4 cores / 8 threads)",
        "rows": [
            {"run": {"worker": "blocking", "workers": 4}, "metric": "total_s", "value": 238, "note": "blocking workers"},
            {"run": {"worker": "shared-pool", "workers": 4}, "metric": "total_s", "value": 92, "note": "\"non-blocking\" workers (Future on the shared dispatcher)"},
            {"run": {"worker": "blocking", "workers": 24}, "metric": "total_s", "value": 50, "note": "published at W=22"}
        ]
    })
}

pub fn e3_calls() -> RunsFile {
    let scale = 0.01;
    let s = 1.0 * scale;
    let mut rng = Lcg(11);
    let mut runs = Vec::new();
    let execs = e3_executors();
    for (model, params, c) in execs {
        for n in [1u64, 10, 100, 1_000, 10_000] {
            let label = params.label();
            let exec = if label.is_empty() {
                model.to_string()
            } else {
                format!("{model}({label})")
            };
            let name = format!("{exec}-calls={n}");
            let coords = BTreeMap::from([
                ("executor".to_string(), json!(exec)),
                ("calls".to_string(), json!(n)),
            ]);
            let rounds = c.map_or(1, |c| n.div_ceil(c));
            let total = rounds as f64 * s * (1.0 + 0.01 * rng.uniform())
                + 0.0004 * (n as f64).sqrt()
                + 0.002;
            let result = e3_result(model, &params, n, total, c, s, &mut rng);
            let spec = BatchSpec {
                tasks: TaskMix::Calls { n, ms: s * 1e3 },
                master: None,
                seed: 42,
                io_backend: Default::default(),
            };
            let mut rec = batch_record(
                name.clone(),
                coords,
                model,
                params.clone(),
                spec,
                scale,
                result,
            );
            // The closed form T(n) = ceil(n/P) x S, as `iolab predict` gives it.
            rec.prediction = Some(Prediction {
                name,
                model: model.as_str().into(),
                offered: n,
                ok: n,
                success_ratio: 1.0,
                total_s: Some(r(rounds as f64 * s, 4)),
                ..Default::default()
            });
            runs.push(rec);
        }
    }
    let about = About {
        name: "e3-futures",
        description: "E3: n calls of a 1 s blocking service through executors of different sizes",
        scale,
        warmup: Duration::ZERO,
        published: Some(e3_published()),
        when: ("2026-11-21T20:30:00Z", "2026-11-21T20:33:00Z"),
        command: "iolab run e3-futures --scale 0.01",
    };
    runs_file(about, runs)
}

/// E3's executors: a model, its knobs, how many calls it runs at once.
fn e3_executors() -> [(ModelKind, ModelParams, Option<u64>); 5] {
    [
        (ModelKind::Sequential, ModelParams::default(), Some(1)),
        (
            ModelKind::Pool,
            ModelParams {
                threads: Some(8),
                ..Default::default()
            },
            Some(8),
        ),
        (
            ModelKind::Pool,
            ModelParams {
                threads: Some(16),
                ..Default::default()
            },
            Some(16),
        ),
        (
            ModelKind::ThreadPerRequest,
            ModelParams {
                max_threads: Some(272),
                ..Default::default()
            },
            Some(272),
        ),
        (
            ModelKind::LoopAsync,
            ModelParams {
                workers: Some(8),
                ..Default::default()
            },
            None,
        ),
    ]
}

/// What E3 measured of `n` calls of `s` seconds that took `total`, `c` at
/// a time (`None`: all at once).
fn e3_result(
    model: ModelKind,
    params: &ModelParams,
    n: u64,
    total: f64,
    c: Option<u64>,
    s: f64,
    rng: &mut Lcg,
) -> BatchResult {
    let threads = c.map_or(9, |c| c.min(n) + 1);
    BatchResult {
        model: Some(model),
        params: serde_json::from_value(serde_json::to_value(params).unwrap()).unwrap(),
        tasks: n,
        failed: 0,
        total_s: r(total, 4),
        by_type: BTreeMap::from([(
            "io".to_string(),
            TaskTypeStats {
                count: n,
                mean_ms: r(total * 1e3 * 0.5 + 5.0, 2),
                p99_ms: r(total * 1e3 * 0.99, 2),
                wait_mean_ms: r((total * 1e3 * 0.5 - 5.0).max(0.0), 2),
                service_mean_ms: r(s * 1e3 + 0.08, 2),
                ..Default::default()
            },
        )]),
        peak_threads: threads,
        peak_rss_mb: r(5.0 + threads as f64 * 0.07 + n as f64 * 0.0004, 2),
        cpu_utilisation: r(0.01 + 0.02 * rng.uniform(), 3),
        failure: None,
        ..Default::default()
    }
}

fn e3_published() -> serde_json::Value {
    json!({
        "source": "seed 002: Scala Futures, 100 calls of a 1 s service",
        "rows": [
            {"run": {"executor": "sequential", "calls": 100}, "metric": "total_s", "value": 100.122, "note": "sequential"},
            {"run": {"executor": "pool(threads=8)", "calls": 100}, "metric": "total_s", "value": 13.057, "note": "fixed pool of 8"},
            {"run": {"executor": "pool(threads=16)", "calls": 100}, "metric": "total_s", "value": 7.057, "note": "global pool of 16"},
            {"run": {"executor": "thread-per-request(max_threads=272)", "calls": 100}, "metric": "total_s", "value": 1.069, "note": "global + blocking{}"},
            {"run": {"executor": "loop-async(workers=8)", "calls": 100}, "metric": "total_s", "value": 1.044, "note": "scheduled promise, pool of 8"}
        ]
    })
}
