//! Writes the report's test fixtures (`crates/report/tests/fixtures/*.json`):
//! realistic `runs.json` files made by a small deterministic queue simulation,
//! so the renderers are tested on the shapes real runs have (queues that grow,
//! timeouts that start, goodput that collapses) without running anything.
//!
//! `cargo run -p iolab-report --example gen_fixtures -- crates/report/tests/fixtures`

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::path::Path;
use std::time::Duration;

use iolab_model::attack::*;
use iolab_model::batch::*;
use iolab_model::environment::Environment;
use iolab_model::experiment::{ExperimentPlan, HttpWork, RunSpec, Work};
use iolab_model::predict::{PredictedLatency, Prediction};
use iolab_model::runs::{Outcome, RunRecord, RunsFile, RUNS_SCHEMA};
use iolab_model::telemetry::{Telemetry, TelemetryPoint};
use iolab_model::verify::{Check, VerifyReport};
use iolab_model::{ConnectionMode, Driver, ModelKind, ModelParams};
use serde_json::json;

/// A tiny deterministic generator (no dependency, same bytes every time).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn r(x: f64, d: i32) -> f64 {
    let m = 10f64.powi(d);
    (x * m).round() / m
}

/// How a simulated server holds requests.
#[derive(Clone, Copy)]
struct Server {
    /// Requests served at once (`None` = unlimited).
    c: Option<usize>,
    /// Requests that may wait; beyond it a connection is refused.
    queue_cap: Option<usize>,
    /// Threads the process has besides request threads.
    base_threads: u64,
    /// Request threads are created per request (thread-per-request) or grow to `c` (offload).
    threads_follow_load: bool,
}

struct Load {
    rate: f64,
    dur: f64,
    s: f64,
    timeout: f64,
    interval: f64,
    seed: u64,
    /// Last requests that never left the generator.
    not_sent: u64,
    /// Timeouts turned into EADDRNOTAVAIL (ports ran out).
    addr_unavailable: u64,
    saturated: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Fate {
    Ok,
    Timeout,
    Refused,
    AddrUnavailable,
}

struct Req {
    arrive: f64,
    start: f64,
    finish: f64,
    fate: Fate,
    done: f64,
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn simulate(srv: Server, load: &Load) -> (AttackResult, Telemetry) {
    let mut rng = Lcg(load.seed);
    let planned = (load.rate * load.dur).floor() as u64;
    let sent_n = planned - load.not_sent;
    let mut free: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut waiting: VecDeque<f64> = VecDeque::new();
    let mut reqs = Vec::with_capacity(sent_n as usize);
    for i in 0..sent_n {
        let a = i as f64 / load.rate;
        let s = load.s * (1.0 + 0.04 * rng.next() + 0.3 * rng.next().powi(40)) + 0.0002;
        while waiting.front().is_some_and(|&st| st <= a) {
            waiting.pop_front();
        }
        if srv.queue_cap.is_some_and(|cap| waiting.len() >= cap) {
            reqs.push(Req {
                arrive: a,
                start: a,
                finish: a,
                fate: Fate::Refused,
                done: a + 0.0005,
            });
            continue;
        }
        let start = match srv.c {
            None => a,
            Some(c) => {
                let st = if free.len() < c {
                    a
                } else {
                    let Reverse(t) = free.pop().unwrap();
                    (t as f64 / 1e6).max(a)
                };
                free.push(Reverse(((st + s) * 1e6) as u64));
                st
            }
        };
        if start > a {
            waiting.push_back(start);
        }
        let finish = start + s;
        let (fate, done) = if finish - a > load.timeout {
            (Fate::Timeout, a + load.timeout)
        } else {
            (Fate::Ok, finish)
        };
        reqs.push(Req {
            arrive: a,
            start,
            finish,
            fate,
            done,
        });
    }
    // The last timeouts become EADDRNOTAVAIL: the ports ran out late in the run.
    let mut left = load.addr_unavailable;
    for q in reqs.iter_mut().rev() {
        if left == 0 {
            break;
        }
        if q.fate == Fate::Timeout {
            q.fate = Fate::AddrUnavailable;
            q.done = q.arrive + 0.001;
            q.finish = q.arrive;
            q.start = q.arrive;
            left -= 1;
        }
    }

    let count = |f: Fate| reqs.iter().filter(|q| q.fate == f).count() as u64;
    let ok = count(Fate::Ok);
    let errors = ErrorCounts {
        timeout: count(Fate::Timeout),
        refused: count(Fate::Refused),
        addr_unavailable: count(Fate::AddrUnavailable),
        ..Default::default()
    };
    let mut lat: Vec<f64> = reqs
        .iter()
        .filter(|q| q.fate == Fate::Ok)
        .map(|q| (q.done - q.arrive) * 1e3)
        .collect();
    lat.sort_by(f64::total_cmp);
    let elapsed = reqs.iter().map(|q| q.done).fold(0.0, f64::max);
    let mean = if lat.is_empty() {
        0.0
    } else {
        lat.iter().sum::<f64>() / lat.len() as f64
    };
    let latency = LatencySummary {
        min: r(lat.first().copied().unwrap_or(0.0), 3),
        mean: r(mean, 3),
        p50: r(pct(&lat, 50.0), 3),
        p90: r(pct(&lat, 90.0), 3),
        p95: r(pct(&lat, 95.0), 3),
        p99: r(pct(&lat, 99.0), 3),
        p999: r(pct(&lat, 99.9), 3),
        max: r(lat.last().copied().unwrap_or(0.0), 3),
    };
    let mut spectrum = Vec::new();
    if !lat.is_empty() {
        for k in 0..=14 {
            let p = 100.0 * (1.0 - 0.5f64.powi(k));
            spectrum.push(SpectrumPoint {
                percentile: r(p, 6),
                latency_ms: r(pct(&lat, p), 3),
            });
        }
        spectrum.push(SpectrumPoint {
            percentile: 100.0,
            latency_ms: latency.max,
        });
    }

    let n_iv = (elapsed / load.interval).ceil() as usize;
    let mut series = Vec::new();
    for k in 0..n_iv {
        let (t0, t1) = (k as f64 * load.interval, (k + 1) as f64 * load.interval);
        let inside = |t: f64| t >= t0 && t < t1;
        let mut l: Vec<f64> = reqs
            .iter()
            .filter(|q| q.fate == Fate::Ok && inside(q.done))
            .map(|q| (q.done - q.arrive) * 1e3)
            .collect();
        l.sort_by(f64::total_cmp);
        series.push(SeriesPoint {
            t_s: r(t0, 3),
            sent: reqs.iter().filter(|q| inside(q.arrive)).count() as u64,
            ok: reqs
                .iter()
                .filter(|q| q.fate == Fate::Ok && inside(q.done))
                .count() as u64,
            errors: reqs
                .iter()
                .filter(|q| q.fate != Fate::Ok && inside(q.done))
                .count() as u64,
            p50_ms: r(pct(&l, 50.0), 3),
            p99_ms: r(pct(&l, 99.0), 3),
        });
    }

    // Telemetry every 100 ms of the run's length (as the scale shrinks it).
    let step = (load.interval / 5.0).max(0.01);
    // Telemetry stops with the attack: the target is stopped after each run.
    let server_end = elapsed;
    let mut tel = Vec::new();
    let mut peak_busy = 0u64;
    let mut t = -2.0 * step;
    while t <= server_end + step {
        let in_flight = reqs
            .iter()
            .filter(|q| q.fate != Fate::Refused && q.fate != Fate::AddrUnavailable)
            .filter(|q| q.arrive <= t && t < q.finish)
            .count() as u64;
        let busy = reqs.iter().filter(|q| q.start <= t && t < q.finish).count() as u64;
        let queued = in_flight.saturating_sub(busy);
        let completed = reqs.iter().filter(|q| q.finish <= t).count() as u64;
        peak_busy = peak_busy.max(busy);
        let threads = srv.base_threads
            + match (srv.threads_follow_load, srv.c) {
                (true, None) => busy,
                (true, Some(c)) => peak_busy.min(c as u64),
                (false, Some(c)) => c as u64,
                (false, None) => 0,
            };
        tel.push(TelemetryPoint {
            t_s: r(t, 3),
            threads,
            rss_mb: r(6.0 + threads as f64 * 0.072 + in_flight as f64 * 0.011, 2),
            cpu_s: r(0.04 + completed as f64 * 0.000_035 + t.max(0.0) * 0.002, 4),
            fds: 9 + in_flight,
            in_flight: Some(in_flight as f64),
            queued: Some(queued as f64),
            completed: Some(completed as f64),
            rejected: Some(
                reqs.iter()
                    .filter(|q| q.fate == Fate::Refused && q.done <= t)
                    .count() as f64,
            ),
            ..TelemetryPoint::default()
        });
        t += step;
    }

    let attack = AttackResult {
        schema: ATTACK_SCHEMA.into(),
        target: "http://127.0.0.1:41234/work?steps=sleep:100".into(),
        driver: DriverSummary {
            kind: "open".into(),
            rate: Some(load.rate),
            duration_s: Some(load.dur),
            timeout_s: load.timeout,
            arrival: Some("constant".into()),
            concurrency: None,
            connections: "keep-alive".into(),
            max_connections: 10_000,
        },
        requests: RequestCounts {
            planned,
            sent: sent_n,
            not_sent: load.not_sent,
            ok,
            non_2xx: 0,
        },
        errors,
        status_codes: if ok > 0 {
            BTreeMap::from([("200".to_string(), ok)])
        } else {
            BTreeMap::new()
        },
        service_ms: ServiceSummary {
            p50: latency.p50,
            p99: latency.p99,
            max: latency.max,
        },
        latency_ms: latency,
        throughput_rps: Throughput {
            offered: r(planned as f64 / load.dur, 3),
            achieved: r(ok as f64 / elapsed, 3),
            goodput: r(ok as f64 / elapsed, 3),
        },
        series,
        generator: GeneratorStats {
            cpu_s: r(sent_n as f64 * 0.000_04, 3),
            lag_p99_ms: if load.saturated { 38.5 } else { 0.21 },
            lag_max_ms: if load.saturated { 91.0 } else { 1.3 },
            saturated: load.saturated,
            threads: 2,
            cpus: vec![],
            spin_s: 0.0,
            ..GeneratorStats::default()
        },
        elapsed_s: r(elapsed, 3),
        started_unix_ms: 1_763_750_000_000 + load.seed * 10_000,
        spectrum,
        histogram: None,
        interrupted: false,
        shard: None,
        merged: None,
    };
    attack.check_accounting().expect("fixture accounting");
    (
        attack,
        Telemetry {
            pid: Some(4000 + load.seed as u32),
            series: tel,
            ..Telemetry::default()
        },
    )
}

fn env(command: &str) -> Environment {
    Environment {
        cores: 2,
        cpu_model: "AMD EPYC 7B13".into(),
        kernel: "6.1.0-27-cloud-amd64".into(),
        nofile: (20_000, 20_000),
        port_range: (32_768, 60_999),
        tcp_tw_reuse: Some(2),
        threads_max: Some(63_457),
        pid_max: Some(4_194_304),
        somaxconn: Some(4_096),
        memory_mb: 7_940,
        versions: BTreeMap::from([
            ("iolab".to_string(), "0.1.0".to_string()),
            ("rustc".to_string(), "1.95.0".to_string()),
        ]),
        git_commit: Some("3f2c9e1".into()),
        pinning: BTreeMap::from([
            ("generator".to_string(), vec![1]),
            ("target".to_string(), vec![0]),
        ]),
        command: command.into(),
        services: vec![],
    }
}

fn http_spec(
    steps: &str,
    name: &str,
    model: ModelKind,
    params: ModelParams,
    load: &Load,
    scale: f64,
    coords: BTreeMap<String, serde_json::Value>,
) -> RunSpec {
    let steps = iolab_model::steps::parse(steps).unwrap().scaled(scale);
    RunSpec {
        name: name.into(),
        coordinates: coords,
        model,
        runtime: Default::default(),
        params,
        scale,
        spans: None,
        work: Work::Http(HttpWork {
            steps,
            driver: Driver::constant(load.rate, Duration::from_secs_f64(load.dur)),
            connections: ConnectionMode::default(),
            timeout: Duration::from_secs_f64(load.timeout),
            interval: Duration::from_secs_f64(load.interval),
            command: None,
            body: Default::default(),
            foreign: None,
        }),
    }
}

fn server_of(model: ModelKind, p: &ModelParams) -> Server {
    match model {
        ModelKind::Sequential => Server {
            c: Some(1),
            queue_cap: Some(p.backlog() as usize),
            base_threads: 2,
            threads_follow_load: false,
        },
        ModelKind::Prefork => Server {
            c: Some(p.processes(2) as usize),
            queue_cap: Some(p.backlog() as usize),
            base_threads: 1,
            threads_follow_load: false,
        },
        ModelKind::Pool => Server {
            c: Some(p.threads() as usize),
            queue_cap: None,
            base_threads: 3,
            threads_follow_load: false,
        },
        ModelKind::ThreadPerRequest => Server {
            c: None,
            queue_cap: None,
            base_threads: 2,
            threads_follow_load: true,
        },
        ModelKind::LoopBlocking => Server {
            c: Some(p.workers(2) as usize),
            queue_cap: None,
            base_threads: 1,
            threads_follow_load: false,
        },
        ModelKind::LoopOffload => Server {
            c: Some(p.offload() as usize),
            queue_cap: None,
            base_threads: 1 + p.workers(2) as u64,
            threads_follow_load: true,
        },
        ModelKind::LoopAsync | ModelKind::Virtual => Server {
            c: None,
            queue_cap: None,
            base_threads: 1 + p.workers(2) as u64,
            threads_follow_load: false,
        },
    }
}

/// The closed-form prediction (what `iolab predict` would say), a little off
/// from the simulation on purpose, as real predictions are.
fn predict(name: &str, model: ModelKind, p: &ModelParams, load: &Load) -> Prediction {
    let srv = server_of(model, p);
    let offered = (load.rate * load.dur) as u64;
    let cap = srv.c.map(|c| c as f64 / load.s);
    let (ok, first) = match cap {
        Some(cap) if load.rate > cap => {
            let rho = load.rate / cap;
            let t1 = (load.timeout - load.s) / (rho - 1.0);
            ((load.rate * t1.min(load.dur)) as u64, Some(r(t1, 3)))
        }
        _ => (offered, None),
    };
    let ok = ok.min(offered);
    let ok = match srv.queue_cap {
        Some(q) if cap.is_some_and(|c| load.rate > c) => {
            ((cap.unwrap() * load.dur) as u64 + q as u64).min(offered)
        }
        _ => ok,
    };
    let sr = ok as f64 / offered as f64;
    let p50 = if sr > 0.999 {
        load.s * 1e3
    } else {
        load.timeout * 1e3 * 0.55
    };
    Prediction {
        name: name.into(),
        model: model.as_str().into(),
        offered,
        ok,
        success_ratio: r(sr, 4),
        goodput_rps: r(ok as f64 / load.dur, 2),
        throughput_rps: r(cap.map_or(load.rate, |c| c.min(load.rate)), 2),
        latency_ms: PredictedLatency {
            p50: r(p50, 1),
            p99: r(
                if sr > 0.999 {
                    load.s * 1e3 * 1.02
                } else {
                    load.timeout * 1e3 * 0.98
                },
                1,
            ),
        },
        peak_in_flight: cap.map_or((load.rate * load.s).ceil() as u64, |c| (c * load.s) as u64),
        peak_threads: srv.c.map(|c| c as u64),
        capacity_rps: cap.map(|c| r(c, 2)),
        first_timeout_s: first,
        explanation: String::new(),
        ..Default::default()
    }
}

fn models_showdown() -> Vec<(ModelKind, ModelParams)> {
    vec![
        (ModelKind::Sequential, ModelParams::default()),
        (
            ModelKind::Pool,
            ModelParams {
                threads: Some(20),
                ..Default::default()
            },
        ),
        (ModelKind::ThreadPerRequest, ModelParams::default()),
        (
            ModelKind::LoopBlocking,
            ModelParams {
                workers: Some(2),
                ..Default::default()
            },
        ),
        (
            ModelKind::LoopOffload,
            ModelParams {
                workers: Some(2),
                offload: Some(20),
                ..Default::default()
            },
        ),
        (
            ModelKind::LoopAsync,
            ModelParams {
                workers: Some(2),
                ..Default::default()
            },
        ),
    ]
}

fn showdown() -> RunsFile {
    let mut runs = Vec::new();
    let mut specs = Vec::new();
    let mut seed = 1;
    for rate in [50.0, 100.0, 200.0, 400.0, 800.0] {
        for (model, params) in models_showdown() {
            let name = format!("{model}-rate={rate}");
            let load = Load {
                rate,
                dur: 5.0,
                s: 0.1,
                timeout: 2.0,
                interval: 0.5,
                seed,
                not_sent: 0,
                addr_unavailable: 0,
                saturated: false,
            };
            seed += 1;
            let coords = BTreeMap::from([
                ("model".to_string(), json!(model.as_str())),
                ("rate".to_string(), json!(rate as u64)),
            ]);
            let spec = http_spec(
                "sleep:100",
                &name,
                model,
                params.clone(),
                &load,
                1.0,
                coords.clone(),
            );
            let (attack, telemetry) = simulate(server_of(model, &params), &load);
            specs.push(spec.clone());
            runs.push(RunRecord {
                name: name.clone(),
                model,
                coordinates: coords,
                outcome: Outcome::Completed,
                spec,
                attack: Some(attack),
                reps: vec![],
                spread: None,
                batch: None,
                telemetry,
                verify: Some(VerifyReport {
                    target: "http://127.0.0.1:41234".into(),
                    checks: vec![Check {
                        name: "work-sleep-takes-its-time".into(),
                        passed: true,
                        detail: "101 ms".into(),
                    }],
                }),
                prediction: Some(predict(&name, model, &params, &load)),
                backend_counts: None,
                spans: None,
                host: None,
                effective_params: None,
            });
        }
    }
    RunsFile {
        schema: RUNS_SCHEMA.into(),
        plan: ExperimentPlan {
            name: "showdown".into(),
            description: "Every built-in model on sleep:100 at 0.25x..4x of a 20-thread pool's capacity (200 req/s)".into(),
            source: Some("presets/showdown.toml".into()),
            scale: 1.0,
            reps: 1,
            warmup: Duration::from_secs(1),
            runs: specs,
            published: None,
            pin: true,
        },
        runs,
        complete: true,
        started_utc: "2026-11-21T20:00:00Z".into(),
        finished_utc: Some("2026-11-21T20:04:10Z".into()),
        environment: env("iolab run showdown"),
    }
}

/// E2 at a tenth of its time: failed runs, ports running out, a saturated generator.
fn e2_scaled() -> RunsFile {
    let scale = 0.1;
    let (rate, dur, s, timeout) = (450.0 / scale, 60.0 * scale, 1.0 * scale, 10.0 * scale);
    let mut runs = Vec::new();
    let mut specs = Vec::new();
    let cases: Vec<(ModelKind, ModelParams, u64, u64, bool, Outcome)> = vec![
        (ModelKind::Pool, ModelParams { threads: Some(200), ..Default::default() }, 0, 0, false, Outcome::Completed),
        (ModelKind::LoopBlocking, ModelParams { workers: Some(4), ..Default::default() }, 0, 0, false, Outcome::Completed),
        (ModelKind::LoopOffload, ModelParams { workers: Some(4), offload: Some(64), ..Default::default() }, 0, 2_302, false, Outcome::Completed),
        (ModelKind::LoopAsync, ModelParams { workers: Some(4), ..Default::default() }, 150, 0, true, Outcome::Completed),
        (ModelKind::ThreadPerRequest, ModelParams { max_threads: Some(1_000), ..Default::default() }, 0, 0, false,
            Outcome::TargetDied { detail: "exit status 134: thread 'main' panicked: failed to spawn thread: Resource temporarily unavailable".into() }),
        (ModelKind::Virtual, ModelParams::default(), 0, 0, false, Outcome::Skipped { detail: "runtime jvm not available: java not found on PATH".into() }),
        (ModelKind::Sequential, ModelParams::default(), 0, 0, false, Outcome::StartFailed { detail: "target did not answer /health within 10s".into() }),
    ];
    for (i, (model, params, not_sent, addr, sat, outcome)) in cases.into_iter().enumerate() {
        let name = format!("{model}-rate=450");
        let load = Load {
            rate,
            dur,
            s,
            timeout,
            interval: 1.0 * scale,
            seed: 100 + i as u64,
            not_sent,
            addr_unavailable: addr,
            saturated: sat,
        };
        let coords = BTreeMap::from([
            ("model".to_string(), json!(model.as_str())),
            ("rate".to_string(), json!(450)),
        ]);
        let mut spec = http_spec(
            "sleep:1000",
            &name,
            model,
            params.clone(),
            &load,
            scale,
            coords.clone(),
        );
        if let Work::Http(w) = &mut spec.work {
            w.connections = ConnectionMode::NewPerRequest { max: 10_000 };
        }
        specs.push(spec.clone());
        let (attack, telemetry) = match &outcome {
            Outcome::Completed => {
                let (mut a, t) = simulate(server_of(model, &params), &load);
                a.driver.connections = "new-connection".into();
                (Some(a), t)
            }
            Outcome::TargetDied { .. } => {
                // Measured until the target died 2.1 s in: what was measured is kept.
                let short = Load { dur: 2.1, ..load };
                let (mut a, mut t) = simulate(server_of(model, &params), &short);
                a.driver.connections = "new-connection".into();
                t.series.retain(|p| p.t_s <= 2.1);
                (Some(a), t)
            }
            _ => (None, Telemetry::default()),
        };
        runs.push(RunRecord {
            name: name.clone(),
            model,
            coordinates: coords,
            outcome: outcome.clone(),
            spec,
            attack,
            reps: vec![],
            spread: None,
            batch: None,
            telemetry,
            verify: None,
            prediction: outcome
                .is_completed()
                .then(|| predict(&name, model, &params, &load)),
            backend_counts: None,
            spans: None,
            host: None,
            effective_params: None,
        });
    }
    RunsFile {
        schema: RUNS_SCHEMA.into(),
        plan: ExperimentPlan {
            name: "e2-endpoints".into(),
            description: "E2: 450 req/s for 60 s, a new connection per request, 1 s of blocking or non-blocking sleep".into(),
            source: Some("presets/e2-endpoints.toml".into()),
            scale,
            reps: 1,
            warmup: Duration::from_millis(500),
            runs: specs,
            pin: true,
            published: Some(json!({
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
            })),
        },
        runs,
        complete: true,
        started_utc: "2026-11-21T20:10:00Z".into(),
        finished_utc: Some("2026-11-21T20:11:30Z".into()),
        environment: env("iolab run e2-endpoints --scale 0.1"),
    }
}

fn batch_record(
    name: String,
    coords: BTreeMap<String, serde_json::Value>,
    model: ModelKind,
    params: ModelParams,
    spec: BatchSpec,
    scale: f64,
    result: BatchResult,
) -> RunRecord {
    let run_spec = RunSpec {
        name: name.clone(),
        coordinates: coords.clone(),
        model,
        runtime: Default::default(),
        params,
        scale,
        spans: None,
        work: Work::Batch(spec),
    };
    RunRecord {
        name,
        model,
        coordinates: coords,
        outcome: Outcome::Completed,
        spec: run_spec,
        attack: None,
        reps: vec![],
        spread: None,
        batch: Some(result),
        telemetry: Telemetry::default(),
        verify: None,
        prediction: None,
        backend_counts: None,
        spans: None,
        host: None,
        effective_params: None,
    }
}

fn e1_workers() -> RunsFile {
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
            let total = (k / w as f64).max(50.0) * scale * (1.0 + 0.03 * rng.next());
            let master = MasterSpec {
                workers: w,
                worker: kind,
                shared_pool: (kind == WorkerKind::SharedPool).then_some(24),
            };
            let spec = BatchSpec {
                tasks: TaskMix::Mixed {
                    cpu: 100,
                    io: 100,
                    cpu_terms: vec![30_883_655, 43_327_594, 50_588_081, 28_177_949, 34_672_653],
                    io_ms: vec![500.0, 550.0, 600.0, 650.0, 700.0],
                },
                master: Some(master),
                seed: 42,
                io_backend: Default::default(),
            };
            let io_wait = ((total - 0.6) * 1e3 * 0.4).max(0.0);
            let result = BatchResult {
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
                            service_mean_ms: r(350.0 * (1.0 + 0.2 * rng.next()), 1),
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
                            service_mean_ms: r(601.0 + rng.next(), 1),
                            ..Default::default()
                        },
                    ),
                ]),
                peak_threads: 3
                    + w as u64
                    + if kind == WorkerKind::SharedPool {
                        24
                    } else {
                        0
                    },
                peak_rss_mb: r(7.5 + w as f64 * 0.1, 2),
                cpu_utilisation: r((50.0 * scale / total).min(1.0) * 0.97, 3),
                failure: None,
                ..Default::default()
            };
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
    RunsFile {
        schema: RUNS_SCHEMA.into(),
        plan: ExperimentPlan {
            name: "e1-master-worker".into(),
            description: "E1: 200 mixed CPU/IO tasks through a master and W workers, blocking vs shared-pool vs timer".into(),
            source: Some("presets/e1-master-worker.toml".into()),
            scale,
            reps: 1,
            warmup: Duration::ZERO,
            runs: runs.iter().map(|r| r.spec.clone()).collect(),
            pin: true,
            published: Some(json!({
                "source": "seed 000: Scala 2.11 + Akka 2.3 on an i7-4790 (4 cores / 8 threads)",
                "rows": [
                    {"run": {"worker": "blocking", "workers": 4}, "metric": "total_s", "value": 238, "note": "blocking workers"},
                    {"run": {"worker": "shared-pool", "workers": 4}, "metric": "total_s", "value": 92, "note": "\"non-blocking\" workers (Future on the shared dispatcher)"},
                    {"run": {"worker": "blocking", "workers": 24}, "metric": "total_s", "value": 50, "note": "published at W=22"}
                ]
            })),
        },
        runs,
        complete: true,
        started_utc: "2026-11-21T20:20:00Z".into(),
        finished_utc: Some("2026-11-21T20:26:00Z".into()),
        environment: env("iolab run e1-master-worker --scale 0.1"),
    }
}

fn e3_calls() -> RunsFile {
    let scale = 0.01;
    let s = 1.0 * scale;
    let mut rng = Lcg(11);
    let mut runs = Vec::new();
    let execs: [(ModelKind, ModelParams, Option<u64>); 5] = [
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
    ];
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
            let total =
                rounds as f64 * s * (1.0 + 0.01 * rng.next()) + 0.0004 * (n as f64).sqrt() + 0.002;
            let threads = c.map_or(9, |c| c.min(n) + 1);
            let result = BatchResult {
                model: Some(model),
                params: serde_json::from_value(serde_json::to_value(&params).unwrap()).unwrap(),
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
                cpu_utilisation: r(0.01 + 0.02 * rng.next(), 3),
                failure: None,
                ..Default::default()
            };
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
    RunsFile {
        schema: RUNS_SCHEMA.into(),
        plan: ExperimentPlan {
            name: "e3-futures".into(),
            description:
                "E3: n calls of a 1 s blocking service through executors of different sizes".into(),
            source: Some("presets/e3-futures.toml".into()),
            scale,
            reps: 1,
            warmup: Duration::ZERO,
            runs: runs.iter().map(|r| r.spec.clone()).collect(),
            pin: true,
            published: Some(json!({
                "source": "seed 002: Scala Futures, 100 calls of a 1 s service",
                "rows": [
                    {"run": {"executor": "sequential", "calls": 100}, "metric": "total_s", "value": 100.122, "note": "sequential"},
                    {"run": {"executor": "pool(threads=8)", "calls": 100}, "metric": "total_s", "value": 13.057, "note": "fixed pool of 8"},
                    {"run": {"executor": "pool(threads=16)", "calls": 100}, "metric": "total_s", "value": 7.057, "note": "global pool of 16"},
                    {"run": {"executor": "thread-per-request(max_threads=272)", "calls": 100}, "metric": "total_s", "value": 1.069, "note": "global + blocking{}"},
                    {"run": {"executor": "loop-async(workers=8)", "calls": 100}, "metric": "total_s", "value": 1.044, "note": "scheduled promise, pool of 8"}
                ]
            })),
        },
        runs,
        complete: true,
        started_utc: "2026-11-21T20:30:00Z".into(),
        finished_utc: Some("2026-11-21T20:33:00Z".into()),
        environment: env("iolab run e3-futures --scale 0.01"),
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "crates/report/tests/fixtures".into());
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    for (file, runs) in [
        ("showdown.json", showdown()),
        ("e2-scaled-failed.json", e2_scaled()),
        ("e1-workers.json", e1_workers()),
        ("e3-calls.json", e3_calls()),
    ] {
        let mut text = serde_json::to_string_pretty(&runs).unwrap();
        text.push('\n');
        std::fs::write(dir.join(file), text).unwrap();
        println!("wrote {}", dir.join(file).display());
    }
}
