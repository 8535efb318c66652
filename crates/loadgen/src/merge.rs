//! Merge the threads' recorders into one [`AttackReport`]: counters add,
//! histograms add exactly, series intervals line up on the shared run clock.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use iolab_model::attack::{
    AttackPlan, AttackResult, DriverSummary, ErrorCounts, GeneratorStats, LatencySummary,
    RequestCounts, SeriesPoint, ServiceSummary, SpectrumPoint, Throughput, ATTACK_SCHEMA,
};
use iolab_model::driver::{Arrival, ConnectionMode, Driver};

use crate::generator::RunOutput;
use crate::recorder::{new_histogram, Interval};
use crate::{AttackReport, IntervalHistogram};

/// Percentiles of the spectrum (HdrHistogram-style, denser in the tail).
const SPECTRUM: [f64; 18] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5, 99.9,
    99.99, 100.0,
];

/// Schedule lag past which the generator, not the target, is suspect.
const LAG_SATURATED_MS: f64 = 1.0;
/// CPU share past which the generator threads are suspect.
const CPU_SATURATED: f64 = 0.9;

fn ms(us: u64) -> f64 {
    us as f64 / 1e3
}

fn add(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // Same bounds everywhere, so adding cannot fail; saturate if it ever did.
    if into.add(from).is_err() {
        for v in from.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// Summarise a latency histogram (zeros when empty).
pub fn latency_summary(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let q = |p: f64| ms(h.value_at_quantile(p));
    LatencySummary {
        min: ms(h.min()),
        mean: h.mean() / 1e3,
        p50: q(0.5),
        p90: q(0.9),
        p95: q(0.95),
        p99: q(0.99),
        p999: q(0.999),
        max: ms(h.max()),
    }
}

fn driver_summary(plan: &AttackPlan) -> DriverSummary {
    let (kind, arrival, concurrency) = match &plan.driver {
        Driver::Open { arrival, .. } => (
            "open",
            Some(match arrival {
                Arrival::Constant => "constant".to_string(),
                Arrival::Poisson { .. } => "poisson".to_string(),
            }),
            None,
        ),
        Driver::Closed { concurrency, .. } => ("closed", None, Some(*concurrency)),
    };
    DriverSummary {
        kind: kind.into(),
        rate: plan.driver.peak_rate(),
        duration_s: plan.driver.duration().map(|d| d.as_secs_f64()),
        timeout_s: plan.timeout.as_secs_f64(),
        arrival,
        concurrency,
        connections: match plan.connections {
            ConnectionMode::KeepAlive { .. } => "keep-alive",
            ConnectionMode::NewPerRequest { .. } => "new-connection",
        }
        .into(),
        max_connections: plan.connections.max(),
    }
}

/// Build the report from the threads' outputs.
pub fn report(plan: &AttackPlan, run: RunOutput) -> AttackReport {
    let highest = run
        .threads
        .first()
        .map_or(1_000_000, |t| t.rec.latency.high());
    let mut latency = new_histogram(highest);
    let mut service = new_histogram(highest);
    let mut lag = new_histogram(highest);
    let mut requests = RequestCounts::default();
    let mut errors = ErrorCounts::default();
    let mut status = vec![0u64; 1000];
    let mut intervals: Vec<Interval> = Vec::new();
    let mut rows = Vec::new();
    let mut cpu_s = 0.0;
    let mut spin_s = 0.0;
    let mut end_ns = run.start_ns;
    for t in run.threads {
        let r = t.rec;
        cpu_s += t.cpu_s;
        // Wall time spinning; the thread was on CPU for (nearly) all of it.
        spin_s += (r.spin_ns as f64 / 1e9).min(t.cpu_s);
        end_ns = end_ns.max(t.end_ns);
        add(&mut latency, &r.latency);
        add(&mut service, &r.service);
        add(&mut lag, &r.lag);
        requests.planned += r.counts.planned;
        requests.sent += r.counts.sent;
        requests.not_sent += r.counts.not_sent;
        requests.ok += r.counts.ok;
        requests.non_2xx += r.counts.non_2xx;
        let e = &r.errors;
        errors.timeout += e.timeout;
        errors.refused += e.refused;
        errors.reset += e.reset;
        errors.addr_unavailable += e.addr_unavailable;
        errors.connect_other += e.connect_other;
        errors.read += e.read;
        for (s, n) in status.iter_mut().zip(&r.status) {
            *s += n;
        }
        for (i, iv) in r.intervals.into_iter().enumerate() {
            if i == intervals.len() {
                intervals.push(iv);
            } else {
                let m = &mut intervals[i];
                m.sent += iv.sent;
                m.ok += iv.ok;
                m.errors += iv.errors;
                add(&mut m.latency, &iv.latency);
            }
        }
        if let Some(r) = r.rows {
            rows.extend(r);
        }
    }
    rows.sort_by_key(|r| r.intended_ns);

    let elapsed_s = (end_ns - run.start_ns) as f64 / 1e9;
    let threads = plan_threads(plan);
    let interval = plan.interval;
    let series = intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| SeriesPoint {
            t_s: (interval.as_secs_f64() * i as f64 * 1e6).round() / 1e6,
            sent: iv.sent,
            ok: iv.ok,
            errors: iv.errors,
            p50_ms: ms(iv.latency.value_at_quantile(0.5)),
            p99_ms: ms(iv.latency.value_at_quantile(0.99)),
        })
        .collect();
    let status_codes: BTreeMap<String, u64> = status
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(code, &n)| (code.to_string(), n))
        .collect();
    let per_s = |n: u64| {
        if elapsed_s > 0.0 {
            n as f64 / elapsed_s
        } else {
            0.0
        }
    };
    let offered = match (&plan.driver, plan.driver.duration()) {
        (Driver::Open { .. }, Some(d)) if d > Duration::ZERO => {
            requests.planned as f64 / d.as_secs_f64()
        }
        _ => per_s(requests.planned),
    };
    let lag_p99_ms = ms(lag.value_at_quantile(0.99));
    let lag_max_ms = ms(lag.max());
    let cpu_share = if elapsed_s > 0.0 {
        (cpu_s - spin_s) / (elapsed_s * threads as f64)
    } else {
        0.0
    };
    let spectrum = if latency.is_empty() {
        Vec::new()
    } else {
        SPECTRUM
            .iter()
            .map(|&p| SpectrumPoint {
                percentile: p,
                latency_ms: ms(latency.value_at_quantile(p / 100.0)),
            })
            .collect()
    };
    let mut encoded = Vec::new();
    let histogram = V2DeflateSerializer::new()
        .serialize(&latency, &mut encoded)
        .ok()
        .map(|_| base64::engine::general_purpose::STANDARD.encode(&encoded));

    let result = AttackResult {
        schema: ATTACK_SCHEMA.to_string(),
        target: plan.target.clone(),
        driver: driver_summary(plan),
        throughput_rps: Throughput {
            offered,
            achieved: per_s(requests.ok + requests.non_2xx),
            goodput: per_s(requests.ok),
        },
        requests,
        errors,
        status_codes,
        latency_ms: latency_summary(&latency),
        service_ms: ServiceSummary {
            p50: ms(service.value_at_quantile(0.5)),
            p99: ms(service.value_at_quantile(0.99)),
            max: ms(service.max()),
        },
        series,
        generator: GeneratorStats {
            cpu_s,
            lag_p99_ms,
            lag_max_ms,
            saturated: lag_p99_ms > LAG_SATURATED_MS || cpu_share > CPU_SATURATED,
            threads,
            cpus: run.cpus,
            spin_s,
        },
        elapsed_s,
        started_unix_ms: run.started_unix_ms,
        spectrum,
        histogram,
        interrupted: run.cancelled,
    };
    let intervals = intervals
        .into_iter()
        .enumerate()
        .map(|(i, iv)| IntervalHistogram {
            start: interval * i as u32,
            duration: interval,
            histogram: iv.latency,
        })
        .collect();
    AttackReport {
        result,
        cancelled: run.cancelled,
        latency,
        intervals,
        requests: rows,
    }
}

fn plan_threads(plan: &AttackPlan) -> usize {
    crate::generator::thread_count(plan)
}
