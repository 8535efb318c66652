//! The outside view of a target while load runs: a thread that every 100 ms
//! reads the target's process tree from `/proc` ([`procs`]), the kernel's
//! view of its port ([`net`]: accept queue, connections) and scrapes its
//! `/metrics`, preferably from a listener of its own that a saturated pool
//! cannot starve (a foreign service's own Prometheus endpoint: the series
//! named for it). What a source could not give is recorded as missing.
//! Samples carry Unix time, so they are put on the attack's clock afterwards.
//! [`cores`] reads the busy time of the CPUs a target is pinned to, [`jit`]
//! the CPU a JIT's compiler threads used. The machine itself: what a run
//! happened on ([`environment`]), what it will start ([`machine`]), its
//! sockets draining between runs ([`drain`]).

pub mod cores;
pub mod drain;
pub mod environment;
pub mod jit;
pub mod machine;
pub mod net;
pub mod pauses;
pub mod procs;
pub mod tasks;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iolab_model::telemetry::{Telemetry, TelemetryPoint};

use iolab_verify::client as http;

pub use procs::cpu_seconds as proc_cpu_seconds;

/// Sampling period.
pub const PERIOD: Duration = Duration::from_millis(100);
/// Longest wait for one `/metrics` answer (a busy target may be slow to answer).
const SCRAPE_TIMEOUT: Duration = Duration::from_millis(80);

/// What to sample.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The target's process (its tree is summed).
    pub pid: u32,
    /// Its port, for the kernel's view (accept queue, connections).
    pub port: Option<u16>,
    /// Its `/metrics` URL.
    pub metrics_url: Option<String>,
    /// The metrics URL is a listener of its own, apart from the load's port.
    pub metrics_separate: bool,
    /// A foreign service's endpoint: the series kept from it (instead of
    /// iolab's own four).
    pub series: Vec<String>,
    /// `--live`: every sample is also put here as it is taken.
    pub tap: Option<Tap>,
}

/// Samples as they are taken, for a live page: the sampler pushes, the
/// runner takes them to its observer. Bounded: a reader that stops reading
/// loses the oldest samples, never slows the sampler.
#[derive(Debug, Clone, Default)]
pub struct Tap(Arc<Mutex<VecDeque<(f64, TelemetryPoint)>>>);

impl Tap {
    /// Samples kept for a reader that is late.
    const CAP: usize = 100;

    fn push(&self, unix_ms: f64, point: &TelemetryPoint) {
        if let Ok(mut q) = self.0.lock() {
            if q.len() == Self::CAP {
                q.pop_front();
            }
            q.push_back((unix_ms, point.clone()));
        }
    }

    /// Every sample since the last call: `(Unix ms, point)`.
    pub fn take(&self) -> Vec<(f64, TelemetryPoint)> {
        self.0
            .lock()
            .map(|mut q| q.drain(..).collect())
            .unwrap_or_default()
    }
}

/// One sample before alignment: Unix ms and the point (its `t_s` unset).
#[derive(Debug, Clone)]
struct Raw {
    unix_ms: f64,
    point: TelemetryPoint,
}

/// A running sampler; [`Sampler::finish`] stops it and returns the series.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<Raw>>>,
    sources: Sources,
}

impl Sampler {
    /// Start sampling process `pid`, scraping `metrics_url` if given.
    pub fn start(pid: u32, metrics_url: Option<String>) -> Sampler {
        Self::start_with(Sources {
            pid,
            metrics_url,
            ..Sources::default()
        })
    }

    /// Start sampling every source in `sources`.
    pub fn start_with(sources: Sources) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let s = sources.clone();
        let handle = thread::Builder::new()
            .name("iolab-telemetry".into())
            .spawn(move || sample_until(&s, &flag))
            .ok();
        Sampler {
            stop,
            handle,
            sources,
        }
    }

    /// Stop and return the series with `t_s` measured from `zero_unix_ms`
    /// (the attack's start; earlier samples are negative), and how many
    /// measured samples each source lost.
    pub fn finish(mut self, zero_unix_ms: f64) -> Telemetry {
        self.stop.store(true, Ordering::Relaxed);
        let raw = self
            .handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let series: Vec<TelemetryPoint> = raw
            .into_iter()
            .map(|r| TelemetryPoint {
                t_s: ((r.unix_ms - zero_unix_ms) / 1000.0 * 1000.0).round() / 1000.0,
                ..r.point
            })
            .collect();
        let mut lost = BTreeMap::new();
        let measured = || series.iter().filter(|p| p.t_s >= 0.0);
        if self.sources.metrics_url.is_some() {
            lost.insert(
                "metrics".into(),
                measured().filter(|p| !p.metrics_answered()).count() as u64,
            );
        }
        if self.sources.port.is_some() {
            lost.insert(
                "kernel".into(),
                measured().filter(|p| p.accept_queue.is_none()).count() as u64,
            );
        }
        lost.retain(|_, n| *n > 0);
        Telemetry {
            pid: Some(self.sources.pid),
            series,
            lost,
            metrics_source: self.sources.metrics_url.as_ref().map(|_| {
                if self.sources.metrics_separate {
                    "separate"
                } else {
                    "shared"
                }
                .to_string()
            }),
            ready_s: None,
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Sample every [`PERIOD`] until `flag` is set or the process is gone.
fn sample_until(s: &Sources, flag: &AtomicBool) -> Vec<Raw> {
    let mut out = Vec::new();
    let mut next = Instant::now();
    while !flag.load(Ordering::Relaxed) {
        let Some(mut point) = sample_proc(s.pid) else {
            break; // the process is gone
        };
        if let Some(view) = s.port.and_then(net::port_view) {
            point.accept_queue = Some(view.accept_queue);
            point.connections = Some(view.established);
        }
        if let Some(url) = &s.metrics_url {
            scrape(url, &s.series, &mut point);
        }
        let at = unix_ms();
        if let Some(tap) = &s.tap {
            tap.push(at, &point);
        }
        out.push(Raw { unix_ms: at, point });
        next += PERIOD;
        let now = Instant::now();
        if next > now {
            sleep_unless(flag, next - now);
        } else {
            next = now;
        }
    }
    out
}

fn sleep_unless(flag: &AtomicBool, d: Duration) {
    let end = Instant::now() + d;
    while !flag.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            return;
        }
        thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Threads, RSS, CPU seconds and open fds of `pid` and every process below
/// it; `None` once it is gone.
pub fn sample_proc(pid: u32) -> Option<TelemetryPoint> {
    let t = procs::tree(pid)?;
    Some(TelemetryPoint {
        t_s: 0.0,
        threads: t.threads,
        rss_mb: t.rss_mb,
        cpu_s: t.cpu_s,
        fds: t.fds,
        processes: Some(t.processes),
        ..TelemetryPoint::default()
    })
}

fn scrape(url: &str, series: &[String], p: &mut TelemetryPoint) {
    let Ok(r) = http::get(url, SCRAPE_TIMEOUT) else {
        return;
    };
    if r.status != 200 {
        return;
    }
    if !series.is_empty() {
        p.service = pick(&r.body, series);
        return;
    }
    let m = parse_metrics(&r.body);
    p.in_flight = m.in_flight;
    p.queued = m.queued;
    p.completed = m.completed;
    p.rejected = m.rejected;
}

/// Each named series' value in Prometheus text, summed over label sets
/// (a series absent from the text is left out).
pub fn pick(text: &str, series: &[String]) -> BTreeMap<String, f64> {
    let samples = iolab_verify::prometheus::parse_lenient(text);
    let mut out = BTreeMap::new();
    for name in series {
        let mut sum = None;
        for (key, v) in &samples {
            let base = key.split('{').next().unwrap_or(key);
            if base == name {
                *sum.get_or_insert(0.0) += v;
            }
        }
        if let Some(s) = sum {
            out.insert(name.clone(), s);
        }
    }
    out
}

/// The four gauges/counters iolab reads from a target's `/metrics`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Metrics {
    /// `iolab_requests_in_flight`.
    pub in_flight: Option<f64>,
    /// `iolab_requests_queued`.
    pub queued: Option<f64>,
    /// `iolab_requests_completed_total`.
    pub completed: Option<f64>,
    /// `iolab_requests_rejected_total`.
    pub rejected: Option<f64>,
}

/// Read the iolab series out of Prometheus text (with verify's parser,
/// leniently: a bad line costs that line, not the sample).
pub fn parse_metrics(text: &str) -> Metrics {
    let samples = iolab_verify::prometheus::parse_lenient(text);
    let get = |series: &str| samples.get(series).copied();
    Metrics {
        in_flight: get("iolab_requests_in_flight"),
        queued: get("iolab_requests_queued"),
        completed: get("iolab_requests_completed_total"),
        rejected: get("iolab_requests_rejected_total"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_prometheus_text() {
        let m = parse_metrics(
            "# HELP x\n# TYPE iolab_requests_in_flight gauge\niolab_requests_in_flight 3\n\
             iolab_requests_queued 0\niolab_requests_completed_total 1200\n\
             iolab_requests_rejected_total 7 1700000000\niolab_threads 22\n\
             iolab_backend_calls_total{kind=\"sleep\"} 5\n",
        );
        assert_eq!(m.in_flight, Some(3.0));
        assert_eq!(m.queued, Some(0.0));
        assert_eq!(m.completed, Some(1200.0));
        assert_eq!(m.rejected, Some(7.0));
        assert_eq!(parse_metrics("garbage\n\n"), Metrics::default());
        let m = parse_metrics("iolab_requests_queued 4\niolab_requests_in_flight{ 9\n");
        assert_eq!((m.queued, m.in_flight), (Some(4.0), None));
    }

    #[test]
    fn samples_a_real_child_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let s = Sampler::start(child.id(), None);
        thread::sleep(Duration::from_millis(350));
        let start = unix_ms();
        let t = s.finish(start);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(t.series.len() >= 2, "{t:?}");
        let p = &t.series[0];
        assert!(p.threads >= 1 && p.rss_mb > 0.0 && p.fds >= 3, "{p:?}");
        assert!(p.t_s < 0.0, "samples before the zero are negative");
        assert!(
            sample_proc(child.id()).is_none(),
            "a reaped process is gone"
        );
        assert!(proc_cpu_seconds(std::process::id()).is_some());
    }
}
