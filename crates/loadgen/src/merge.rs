//! Merge the threads' recorders into one [`AttackReport`]: counters add,
//! histograms add exactly, series intervals line up on the shared run clock.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use iolab_model::attack::{
    AttackPlan, AttackResult, DriverSummary, ErrorCounts, GeneratorStats, LatencySummary,
    RequestCounts, SeriesPoint, ServiceSummary, SpectrumPoint, Throughput, ATTACK_SCHEMA,
};
use iolab_model::driver::{Arrival, ConnectionMode, Driver};
use iolab_model::protocol::ProtocolSummary;

use crate::recorder::{new_histogram, Interval, RequestRow};
use crate::report::{AttackReport, IntervalHistogram};
use crate::run_ctx::{RunOutput, ThreadOutput};
use crate::shard::record::encode;

/// Percentiles of the spectrum (HdrHistogram-style, denser in the tail).
const SPECTRUM: [f64; 18] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5, 99.9,
    99.99, 100.0,
];

fn ms(us: u64) -> f64 {
    us as f64 / 1e3
}

pub(crate) fn add(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // Same bounds everywhere, so adding cannot fail; saturate if it ever did.
    if into.add(from).is_err() {
        for v in from.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

/// Summarise a service-time histogram.
pub(crate) fn service_summary(h: &Histogram<u64>) -> ServiceSummary {
    ServiceSummary {
        p50: ms(h.value_at_quantile(0.5)),
        p99: ms(h.value_at_quantile(0.99)),
        max: ms(h.max()),
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

/// What a document says of its driver.
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

/// Every thread's recorder added into one: counters, histograms, status
/// codes, intervals (by index on the shared run clock) and request rows.
struct Merged {
    latency: Histogram<u64>,
    service: Histogram<u64>,
    lag: Histogram<u64>,
    requests: RequestCounts,
    errors: ErrorCounts,
    /// Answers by HTTP status code (index = code).
    status: Vec<u64>,
    intervals: Vec<Interval>,
    rows: Vec<RequestRow>,
    cpu_s: f64,
    spin_s: f64,
    wait_s: Option<f64>,
    end_ns: u64,
    /// The earliest send over threads, `(intended, sent)`.
    first_send: Option<(u64, u64)>,
    /// HTTP/2: the threads' connections and the servers' stream limits.
    protocol: Option<ProtocolSummary>,
    /// A replayed mix: each endpoint's books.
    endpoints: Vec<crate::endpoints::Book>,
}

impl Merged {
    fn new(run: &RunOutput) -> Self {
        let highest = run
            .threads
            .first()
            .map_or(1_000_000, |t| t.rec.latency.high());
        Merged {
            latency: new_histogram(highest),
            service: new_histogram(highest),
            lag: new_histogram(highest),
            requests: RequestCounts::default(),
            errors: ErrorCounts::default(),
            status: vec![0u64; 1000],
            intervals: Vec::new(),
            rows: Vec::new(),
            cpu_s: 0.0,
            spin_s: 0.0,
            wait_s: Some(0.0),
            end_ns: run.start_ns,
            first_send: None,
            protocol: None,
            endpoints: Vec::new(),
        }
    }

    fn add(&mut self, t: ThreadOutput) {
        let r = t.rec;
        self.cpu_s += t.cpu_s;
        self.wait_s = self.wait_s.zip(t.wait_s).map(|(a, b)| a + b);
        // Wall time spinning; the thread was on CPU for (nearly) all of it.
        self.spin_s += (r.spin_ns as f64 / 1e9).min(t.cpu_s);
        self.end_ns = self.end_ns.max(t.end_ns);
        if let Some(f) = r.first_send {
            if self.first_send.is_none_or(|(_, s)| f.1 < s) {
                self.first_send = Some(f);
            }
        }
        add(&mut self.latency, &r.latency);
        add(&mut self.service, &r.service);
        add(&mut self.lag, &r.lag);
        add_counts(&mut self.requests, &r.counts);
        self.errors.add(&r.errors);
        for (s, n) in self.status.iter_mut().zip(&r.status) {
            *s += n;
        }
        for (i, iv) in r.intervals.into_iter().enumerate() {
            if i == self.intervals.len() {
                self.intervals.push(iv);
            } else {
                self.intervals[i].absorb(&iv);
            }
        }
        if let Some(r) = r.rows {
            self.rows.extend(r);
        }
        add_protocol(&mut self.protocol, r.protocol.as_ref());
        crate::endpoints::absorb(&mut self.endpoints, r.endpoints);
    }
}

/// Add one set of request counts into another (a thread's, or a shard's).
pub(crate) fn add_counts(into: &mut RequestCounts, from: &RequestCounts) {
    into.planned += from.planned;
    into.sent += from.sent;
    into.not_sent += from.not_sent;
    into.ok += from.ok;
    into.non_2xx += from.non_2xx;
    into.retried += from.retried;
    into.unclean_tls_close += from.unclean_tls_close;
}

/// Add a thread's or a shard's protocol summary into the sum so far.
pub(crate) fn add_protocol(into: &mut Option<ProtocolSummary>, from: Option<&ProtocolSummary>) {
    match (into.as_mut(), from) {
        (Some(i), Some(f)) => i.add(f),
        (None, Some(f)) => *into = Some(f.clone()),
        (_, None) => {}
    }
}

/// The intervals' latency histograms on the run's clock (for `--hdr`).
pub(crate) fn interval_histograms(
    intervals: Vec<Interval>,
    interval: Duration,
) -> Vec<IntervalHistogram> {
    intervals
        .into_iter()
        .enumerate()
        .map(|(i, iv)| IntervalHistogram {
            start: interval * i as u32,
            duration: interval,
            histogram: iv.latency,
        })
        .collect()
}

/// One series point per interval, on the run clock (t rounded to 1 us).
pub(crate) fn series(intervals: &[Interval], interval: Duration) -> Vec<SeriesPoint> {
    intervals
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
        .collect()
}

/// The status codes that were seen, by code.
fn status_codes(status: &[u64]) -> BTreeMap<String, u64> {
    status
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(code, &n)| (code.to_string(), n))
        .collect()
}

/// The generator's self-check: flagged when its lateness could change the
/// run's figures (see `GeneratorStats::verdict`), with the cause named.
fn generator_stats(
    m: &Merged,
    elapsed_s: f64,
    threads: usize,
    cpus: Vec<usize>,
    closed_loop: bool,
) -> GeneratorStats {
    let mut g = GeneratorStats {
        cpu_s: m.cpu_s,
        lag_p99_ms: ms(m.lag.value_at_quantile(0.99)),
        lag_max_ms: ms(m.lag.max()),
        saturated: false,
        threads,
        cpus,
        spin_s: m.spin_s,
        wait_s: m.wait_s,
        cause: None,
        engine: String::new(),
        peak_rss_kib: None,
    };
    let p50_ms = ms(m.latency.value_at_quantile(0.5));
    let v = g.verdict(elapsed_s, p50_ms, closed_loop);
    g.saturated = v.flagged;
    g.cause = v.cause;
    g
}

/// The latency spectrum at [`SPECTRUM`]'s percentiles (empty when nothing answered).
pub(crate) fn spectrum(latency: &Histogram<u64>) -> Vec<SpectrumPoint> {
    if latency.is_empty() {
        return Vec::new();
    }
    SPECTRUM
        .iter()
        .map(|&p| SpectrumPoint {
            percentile: p,
            latency_ms: ms(latency.value_at_quantile(p / 100.0)),
        })
        .collect()
}

/// Build the report from the threads' outputs.
pub fn report(plan: &AttackPlan, mut run: RunOutput) -> AttackReport {
    // A thread may have widened its intervals (a long run): all to the widest.
    let width_ns = run
        .threads
        .iter()
        .map(|t| t.rec.interval_ns())
        .max()
        .unwrap_or(plan.interval.as_nanos() as u64);
    for t in &mut run.threads {
        t.rec.coarsen_to(width_ns);
    }
    let mut m = Merged::new(&run);
    let (start_ns, started_unix_ms, cancelled) = (run.start_ns, run.started_unix_ms, run.cancelled);
    for t in run.threads {
        m.add(t);
    }
    m.rows.sort_by_key(|r| r.intended_ns);
    let elapsed_s = (m.end_ns - start_ns) as f64 / 1e9;
    let interval = Duration::from_nanos(width_ns);
    let driver = driver_summary(plan);
    let result = AttackResult {
        schema: ATTACK_SCHEMA.to_string(),
        target: plan.target.clone(),
        throughput_rps: Throughput::of(&driver, &m.requests, elapsed_s, cancelled),
        driver,
        requests: m.requests.clone(),
        errors: m.errors.clone(),
        status_codes: status_codes(&m.status),
        latency_ms: latency_summary(&m.latency),
        service_ms: service_summary(&m.service),
        series: series(&m.intervals, interval),
        generator: GeneratorStats {
            engine: run.engine.to_string(),
            ..generator_stats(
                &m,
                elapsed_s,
                plan_threads(plan),
                run.cpus,
                matches!(plan.driver, Driver::Closed { .. }),
            )
        },
        elapsed_s,
        started_unix_ms,
        spectrum: spectrum(&m.latency),
        histogram: encode(&m.latency),
        interrupted: cancelled,
        protocol: m.protocol.take(),
        shard: crate::shard::record::record(
            plan,
            &crate::shard::record::Measured {
                service: &m.service,
                lag: &m.lag,
                intervals: &m.intervals,
                first_send: m.first_send,
                start_ns,
            },
        ),
        merged: None,
        slo: None,
        endpoints: crate::endpoints::results(plan.request.mix.as_ref(), &m.endpoints),
        connections: None,
        messages: None,
    };
    let intervals = interval_histograms(m.intervals, interval);
    AttackReport {
        result,
        cancelled,
        latency: m.latency,
        intervals,
        requests: m.rows,
    }
}

fn plan_threads(plan: &AttackPlan) -> usize {
    crate::thread_share::thread_count(plan)
}
