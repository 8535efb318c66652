//! The HTTP experiments' fixtures: the showdown (every model at five rates)
//! and E2 at a tenth of its time (failed runs, ports running out, a
//! saturated generator).

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::experiment::{HttpWork, RunSpec, Work};
use iolab_model::runs::{Outcome, RunRecord, RunsFile};
use iolab_model::telemetry::Telemetry;
use iolab_model::verify::{Check, VerifyReport};
use iolab_model::{ConnectionMode, Driver, ModelKind, ModelParams};
use serde_json::json;

use super::predicted::predict;
use super::sim::{server_of, simulate, Load};
use super::{runs_file, About};

/// The run of `steps` (scaled by `scale`) under `load`.
fn http_spec(
    steps: &str,
    name: String,
    model: ModelKind,
    params: ModelParams,
    load: &Load,
    scale: f64,
    coords: BTreeMap<String, serde_json::Value>,
) -> RunSpec {
    let steps = iolab_model::steps::parse(steps).unwrap().scaled(scale);
    let driver = Driver::constant(load.rate, Duration::from_secs_f64(load.dur));
    let mut work = HttpWork::new(steps, driver, Duration::from_secs_f64(load.timeout));
    work.interval = Duration::from_secs_f64(load.interval);
    RunSpec {
        name,
        coordinates: coords,
        ..RunSpec::of_model(model, params, scale, Work::Http(work))
    }
}

fn params(set: impl FnOnce(&mut ModelParams)) -> ModelParams {
    let mut p = ModelParams::default();
    set(&mut p);
    p
}

fn models_showdown() -> Vec<(ModelKind, ModelParams)> {
    vec![
        (ModelKind::Sequential, ModelParams::default()),
        (ModelKind::Pool, params(|p| p.threads = Some(20))),
        (ModelKind::ThreadPerRequest, ModelParams::default()),
        (ModelKind::LoopBlocking, params(|p| p.workers = Some(2))),
        (
            ModelKind::LoopOffload,
            params(|p| (p.workers, p.offload) = (Some(2), Some(20))),
        ),
        (ModelKind::LoopAsync, params(|p| p.workers = Some(2))),
    ]
}

pub fn showdown() -> RunsFile {
    let mut runs = Vec::new();
    let mut seed = 1;
    for rate in [50.0, 100.0, 200.0, 400.0, 800.0] {
        for (model, params) in models_showdown() {
            let name = format!("{model}-rate={rate}");
            let load = Load::clean(rate, 5.0, 0.1, 2.0, 0.5, seed);
            seed += 1;
            let coords = BTreeMap::from([
                ("model".to_string(), json!(model.as_str())),
                ("rate".to_string(), json!(rate as u64)),
            ]);
            let spec = http_spec(
                "sleep:100",
                name.clone(),
                model,
                params.clone(),
                &load,
                1.0,
                coords,
            );
            let (attack, telemetry) = simulate(server_of(model, &params), &load);
            runs.push(RunRecord {
                attack: Some(attack),
                telemetry,
                verify: Some(VerifyReport {
                    target: "http://127.0.0.1:41234".into(),
                    protocol: None,
                    checks: vec![Check {
                        name: "work-sleep-takes-its-time".into(),
                        passed: true,
                        detail: "101 ms".into(),
                    }],
                }),
                prediction: Some(predict(&name, model, &params, &load)),
                ..RunRecord::new(spec, Outcome::Completed)
            });
        }
    }
    let about = About {
        name: "showdown",
        description: "Every built-in model on sleep:100 at 0.25x..4x of a 20-thread pool's capacity (200 req/s)",
        scale: 1.0,
        warmup: Duration::from_secs(1),
        published: None,
        when: ("2026-11-21T20:00:00Z", "2026-11-21T20:04:10Z"),
        command: "iolab run showdown",
    };
    runs_file(about, runs)
}

/// One E2 run: a model, its knobs, requests never sent, ports that ran out,
/// a saturated generator, and how the run ended.
type E2Case = (ModelKind, ModelParams, u64, u64, bool, Outcome);

fn e2_cases() -> Vec<E2Case> {
    let done = Outcome::Completed;
    vec![
        (ModelKind::Pool, params(|p| p.threads = Some(200)), 0, 0, false, done.clone()),
        (ModelKind::LoopBlocking, params(|p| p.workers = Some(4)), 0, 0, false, done.clone()),
        (ModelKind::LoopOffload, params(|p| (p.workers, p.offload) = (Some(4), Some(64))), 0, 2_302, false, done.clone()),
        (ModelKind::LoopAsync, params(|p| p.workers = Some(4)), 150, 0, true, done),
        (ModelKind::ThreadPerRequest, params(|p| p.max_threads = Some(1_000)), 0, 0, false,
            Outcome::TargetDied { detail: "exit status 134: thread 'main' panicked: failed to spawn thread: Resource temporarily unavailable".into() }),
        (ModelKind::Virtual, ModelParams::default(), 0, 0, false, Outcome::Skipped { detail: "runtime jvm not available: java not found on PATH".into() }),
        (ModelKind::Sequential, ModelParams::default(), 0, 0, false, Outcome::StartFailed { detail: "target did not answer /health within 10s".into() }),
    ]
}

/// E2 at a tenth of its time: failed runs, ports running out, a saturated generator.
pub fn e2_scaled() -> RunsFile {
    let scale = 0.1;
    let (rate, dur, s, timeout) = (450.0 / scale, 60.0 * scale, 1.0 * scale, 10.0 * scale);
    let mut runs = Vec::new();
    for (i, (model, params, not_sent, addr, sat, outcome)) in e2_cases().into_iter().enumerate() {
        let name = format!("{model}-rate=450");
        let load = Load {
            not_sent,
            addr_unavailable: addr,
            saturated: sat,
            ..Load::clean(rate, dur, s, timeout, 1.0 * scale, 100 + i as u64)
        };
        let coords = BTreeMap::from([
            ("model".to_string(), json!(model.as_str())),
            ("rate".to_string(), json!(450)),
        ]);
        let mut spec = http_spec(
            "sleep:1000",
            name.clone(),
            model,
            params.clone(),
            &load,
            scale,
            coords,
        );
        if let Work::Http(w) = &mut spec.work {
            w.connections = ConnectionMode::NewPerRequest { max: 10_000 };
        }
        let (attack, telemetry) = e2_measured(model, &params, &load, &outcome);
        runs.push(RunRecord {
            attack,
            telemetry,
            prediction: outcome
                .is_completed()
                .then(|| predict(&name, model, &params, &load)),
            ..RunRecord::new(spec, outcome)
        });
    }
    let about = About {
        name: "e2-endpoints",
        description: "E2: 450 req/s for 60 s, a new connection per request, 1 s of blocking or non-blocking sleep",
        scale,
        warmup: Duration::from_millis(500),
        published: Some(e2_published()),
        when: ("2026-11-21T20:10:00Z", "2026-11-21T20:11:30Z"),
        command: "iolab run e2-endpoints --scale 0.1",
    };
    runs_file(about, runs)
}

/// What was measured of a run that ended as `outcome`: all of it, the first
/// 2.1 s when the target died then, nothing when it never started.
fn e2_measured(
    model: ModelKind,
    params: &ModelParams,
    load: &Load,
    outcome: &Outcome,
) -> (Option<iolab_model::attack::AttackResult>, Telemetry) {
    let died = matches!(outcome, Outcome::TargetDied { .. });
    if !died && !outcome.is_completed() {
        return (None, Telemetry::default());
    }
    let load = Load {
        dur: if died { 2.1 } else { load.dur },
        ..*load
    };
    let (mut a, mut t) = simulate(server_of(model, params), &load);
    a.driver.connections = "new-connection".into();
    if died {
        t.series.retain(|p| p.t_s <= 2.1);
    }
    (Some(a), t)
}

fn e2_published() -> serde_json::Value {
    json!({
        "source": "seed 001: Kotlin + Spring Boot 2.7, artillery, 27,000 requests",
        "rows": [
            {"run": "pool-rate=450", "metric": "ok", "value": 3400, "note": "MVC + Thread.sleep; 17,293 ETIMEDOUT, 5,965 ECONNRESET"},
            {"run": {"model": "loop-blocking", "rate": 450}, "metric": "ok", "value": 76, "note": "WebFlux, sleep on the event loop"},
            {"run": "loop-offload-rate=450", "metric": "ok", "value": 792, "note": "withContext(IO) + sleep"},
            {"run": "loop-offload-rate=450", "metric": "addr_unavailable", "value": 2302, "note": "EADDRNOTAVAIL: ephemeral ports ran out"},
            {"run": "loop-async-rate=450", "metric": "success_ratio", "value": 1.0, "note": "delay(1 s); sometimes ~100 fail"},
            {"run": "loop-async-rate=450", "metric": "p50_ms", "value": 1002, "note": ""},
            {"run": "loop-async-rate=450", "metric": "p99_ms", "value": 1130, "note": ""}
        ]
    })
}
