//! The small deterministic queue simulation behind the HTTP fixtures: `c`
//! servers, an optional bounded queue, a timeout; what the generator and the
//! target's telemetry would have recorded of it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use iolab_model::attack::*;
use iolab_model::telemetry::{Telemetry, TelemetryPoint};
use iolab_model::{ModelKind, ModelParams};

use super::{r, Lcg};

/// How a simulated server holds requests.
#[derive(Clone, Copy)]
pub struct Server {
    /// Requests served at once (`None` = unlimited).
    pub c: Option<usize>,
    /// Requests that may wait; beyond it a connection is refused.
    pub queue_cap: Option<usize>,
    /// Threads the process has besides request threads.
    base_threads: u64,
    /// Request threads are created per request (thread-per-request) or grow to `c` (offload).
    threads_follow_load: bool,
}

/// An open-loop load and what went wrong on the generator's side.
pub struct Load {
    pub rate: f64,
    pub dur: f64,
    pub s: f64,
    pub timeout: f64,
    pub interval: f64,
    pub seed: u64,
    /// Last requests that never left the generator.
    pub not_sent: u64,
    /// Timeouts turned into EADDRNOTAVAIL (ports ran out).
    pub addr_unavailable: u64,
    pub saturated: bool,
}

impl Load {
    /// `rate` for `dur` seconds of `s`-second requests, nothing going wrong.
    pub fn clean(rate: f64, dur: f64, s: f64, timeout: f64, interval: f64, seed: u64) -> Load {
        Load {
            rate,
            dur,
            s,
            timeout,
            interval,
            seed,
            not_sent: 0,
            addr_unavailable: 0,
            saturated: false,
        }
    }
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

/// The simulated server of a model, as the fixtures need it.
pub fn server_of(model: ModelKind, p: &ModelParams) -> Server {
    let (c, queue_cap, base_threads, threads_follow_load) = match model {
        ModelKind::Sequential => (Some(1), Some(p.backlog() as usize), 2, false),
        ModelKind::Prefork => (
            Some(p.processes(2) as usize),
            Some(p.backlog() as usize),
            1,
            false,
        ),
        ModelKind::Pool => (Some(p.threads() as usize), None, 3, false),
        ModelKind::ThreadPerRequest => (None, None, 2, true),
        ModelKind::LoopBlocking => (Some(p.workers(2) as usize), None, 1, false),
        ModelKind::LoopOffload => (
            Some(p.offload() as usize),
            None,
            1 + p.workers(2) as u64,
            true,
        ),
        ModelKind::LoopAsync | ModelKind::Virtual => (None, None, 1 + p.workers(2) as u64, false),
    };
    Server {
        c,
        queue_cap,
        base_threads,
        threads_follow_load,
    }
}

/// What the generator and the target's sampler record of `load` on `srv`.
pub fn simulate(srv: Server, load: &Load) -> (AttackResult, Telemetry) {
    let planned = (load.rate * load.dur).floor() as u64;
    let reqs = schedule(srv, load, planned - load.not_sent);
    let elapsed = reqs.iter().map(|q| q.done).fold(0.0, f64::max);
    let attack = attack(&reqs, load, planned, elapsed);
    attack.check_accounting().expect("fixture accounting");
    let telemetry = Telemetry {
        pid: Some(4000 + load.seed as u32),
        series: telemetry(srv, &reqs, load, elapsed),
        ..Telemetry::default()
    };
    (attack, telemetry)
}

/// Every sent request's fate: refused, served in turn by `c` servers, or
/// timed out; the last timeouts become EADDRNOTAVAIL when ports ran out.
fn schedule(srv: Server, load: &Load, sent: u64) -> Vec<Req> {
    let mut rng = Lcg(load.seed);
    let mut free: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut waiting: VecDeque<f64> = VecDeque::new();
    let mut reqs = Vec::with_capacity(sent as usize);
    for i in 0..sent {
        let a = i as f64 / load.rate;
        let s = load.s * (1.0 + 0.04 * rng.uniform() + 0.3 * rng.uniform().powi(40)) + 0.0002;
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
    ports_ran_out(&mut reqs, load.addr_unavailable);
    reqs
}

/// The last `n` timeouts become EADDRNOTAVAIL: the ports ran out late in the run.
fn ports_ran_out(reqs: &mut [Req], mut n: u64) {
    for q in reqs.iter_mut().rev() {
        if n == 0 {
            break;
        }
        if q.fate == Fate::Timeout {
            q.fate = Fate::AddrUnavailable;
            q.done = q.arrive + 0.001;
            q.finish = q.arrive;
            q.start = q.arrive;
            n -= 1;
        }
    }
}

/// Latencies (ms) of the answered requests, sorted.
fn answered_ms<'a>(reqs: impl Iterator<Item = &'a Req>) -> Vec<f64> {
    let mut lat: Vec<f64> = reqs
        .filter(|q| q.fate == Fate::Ok)
        .map(|q| (q.done - q.arrive) * 1e3)
        .collect();
    lat.sort_by(f64::total_cmp);
    lat
}

fn summary(lat: &[f64]) -> LatencySummary {
    let mean = if lat.is_empty() {
        0.0
    } else {
        lat.iter().sum::<f64>() / lat.len() as f64
    };
    LatencySummary {
        min: r(lat.first().copied().unwrap_or(0.0), 3),
        mean: r(mean, 3),
        p50: r(pct(lat, 50.0), 3),
        p90: r(pct(lat, 90.0), 3),
        p95: r(pct(lat, 95.0), 3),
        p99: r(pct(lat, 99.0), 3),
        p999: r(pct(lat, 99.9), 3),
        max: r(lat.last().copied().unwrap_or(0.0), 3),
    }
}

/// Percentiles at 50, 75, 87.5, ... and 100%, as the generator's spectrum.
fn spectrum(lat: &[f64], max: f64) -> Vec<SpectrumPoint> {
    if lat.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<SpectrumPoint> = (0..=14)
        .map(|k| {
            let p = 100.0 * (1.0 - 0.5f64.powi(k));
            SpectrumPoint {
                percentile: r(p, 6),
                latency_ms: r(pct(lat, p), 3),
            }
        })
        .collect();
    points.push(SpectrumPoint {
        percentile: 100.0,
        latency_ms: max,
    });
    points
}

/// Sent, answered, failed and latency per interval of the run.
fn series(reqs: &[Req], load: &Load, elapsed: f64) -> Vec<SeriesPoint> {
    let n_iv = (elapsed / load.interval).ceil() as usize;
    (0..n_iv)
        .map(|k| {
            let (t0, t1) = (k as f64 * load.interval, (k + 1) as f64 * load.interval);
            let inside = |t: f64| t >= t0 && t < t1;
            let l = answered_ms(reqs.iter().filter(|q| inside(q.done)));
            let ended = |ok: bool| {
                reqs.iter()
                    .filter(|q| (q.fate == Fate::Ok) == ok && inside(q.done))
                    .count() as u64
            };
            SeriesPoint {
                t_s: r(t0, 3),
                sent: reqs.iter().filter(|q| inside(q.arrive)).count() as u64,
                ok: ended(true),
                errors: ended(false),
                p50_ms: r(pct(&l, 50.0), 3),
                p99_ms: r(pct(&l, 99.0), 3),
            }
        })
        .collect()
}

/// The target's samples every interval/5 (at least 10 ms), from two steps
/// before the load until it ends: the target is stopped after each run.
fn telemetry(srv: Server, reqs: &[Req], load: &Load, end: f64) -> Vec<TelemetryPoint> {
    let step = (load.interval / 5.0).max(0.01);
    let mut tel = Vec::new();
    let mut peak_busy = 0u64;
    let mut t = -2.0 * step;
    while t <= end + step {
        let in_flight = reqs
            .iter()
            .filter(|q| q.fate != Fate::Refused && q.fate != Fate::AddrUnavailable)
            .filter(|q| q.arrive <= t && t < q.finish)
            .count() as u64;
        let busy = reqs.iter().filter(|q| q.start <= t && t < q.finish).count() as u64;
        let completed = reqs.iter().filter(|q| q.finish <= t).count() as u64;
        peak_busy = peak_busy.max(busy);
        let threads = srv.base_threads
            + match (srv.threads_follow_load, srv.c) {
                (true, None) => busy,
                (true, Some(c)) => peak_busy.min(c as u64),
                (false, Some(c)) => c as u64,
                (false, None) => 0,
            };
        let rejected = reqs
            .iter()
            .filter(|q| q.fate == Fate::Refused && q.done <= t)
            .count();
        tel.push(TelemetryPoint {
            t_s: r(t, 3),
            threads,
            rss_mb: r(6.0 + threads as f64 * 0.072 + in_flight as f64 * 0.011, 2),
            cpu_s: r(0.04 + completed as f64 * 0.000_035 + t.max(0.0) * 0.002, 4),
            fds: 9 + in_flight,
            in_flight: Some(in_flight as f64),
            queued: Some(in_flight.saturating_sub(busy) as f64),
            completed: Some(completed as f64),
            rejected: Some(rejected as f64),
            ..TelemetryPoint::default()
        });
        t += step;
    }
    tel
}

/// The generator's document of the run.
fn attack(reqs: &[Req], load: &Load, planned: u64, elapsed: f64) -> AttackResult {
    let sent = reqs.len() as u64;
    let count = |f: Fate| reqs.iter().filter(|q| q.fate == f).count() as u64;
    let ok = count(Fate::Ok);
    let lat = answered_ms(reqs.iter());
    let latency = summary(&lat);
    AttackResult {
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
            sent,
            not_sent: load.not_sent,
            ok,
            non_2xx: 0,
            retried: 0,
            unclean_tls_close: 0,
        },
        errors: ErrorCounts {
            timeout: count(Fate::Timeout),
            refused: count(Fate::Refused),
            addr_unavailable: count(Fate::AddrUnavailable),
            ..Default::default()
        },
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
        spectrum: spectrum(&lat, latency.max),
        latency_ms: latency,
        throughput_rps: Throughput {
            offered: r(planned as f64 / load.dur, 3),
            achieved: r(ok as f64 / elapsed, 3),
            goodput: r(ok as f64 / elapsed, 3),
        },
        series: series(reqs, load, elapsed),
        generator: generator(load, sent),
        elapsed_s: r(elapsed, 3),
        started_unix_ms: 1_763_750_000_000 + load.seed * 10_000,
        histogram: None,
        interrupted: false,
        protocol: None,
        shard: None,
        merged: None,
        slo: None,
        endpoints: Vec::new(),
        connections: None,
        messages: None,
    }
}

/// The generator's own health: lagging far behind when it was saturated.
fn generator(load: &Load, sent: u64) -> GeneratorStats {
    GeneratorStats {
        cpu_s: r(sent as f64 * 0.000_04, 3),
        lag_p99_ms: if load.saturated { 38.5 } else { 0.21 },
        lag_max_ms: if load.saturated { 91.0 } else { 1.3 },
        saturated: load.saturated,
        threads: 2,
        cpus: vec![],
        spin_s: 0.0,
        ..GeneratorStats::default()
    }
}
