//! The outside view of a target while load runs: a thread that every 100 ms
//! reads `/proc/PID/{status,stat,fd}` and scrapes the target's `/metrics`.
//! Samples carry Unix time, so they are put on the attack's clock afterwards.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iolab_model::telemetry::{Telemetry, TelemetryPoint};

use crate::http;

/// Sampling period.
pub const PERIOD: Duration = Duration::from_millis(100);
/// Longest wait for one `/metrics` answer (a busy target may be slow to answer).
const SCRAPE_TIMEOUT: Duration = Duration::from_millis(80);

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
    pid: u32,
}

impl Sampler {
    /// Start sampling process `pid`, scraping `metrics_url` if given.
    pub fn start(pid: u32, metrics_url: Option<String>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::Builder::new()
            .name("iolab-telemetry".into())
            .spawn(move || {
                let mut out = Vec::new();
                let mut next = Instant::now();
                while !flag.load(Ordering::Relaxed) {
                    let Some(mut point) = sample_proc(pid) else {
                        break; // the process is gone
                    };
                    if let Some(url) = &metrics_url {
                        scrape(url, &mut point);
                    }
                    out.push(Raw {
                        unix_ms: unix_ms(),
                        point,
                    });
                    next += PERIOD;
                    let now = Instant::now();
                    if next > now {
                        sleep_unless(&flag, next - now);
                    } else {
                        next = now;
                    }
                }
                out
            })
            .ok();
        Sampler { stop, handle, pid }
    }

    /// Stop and return the series with `t_s` measured from `zero_unix_ms`
    /// (the attack's start; earlier samples are negative).
    pub fn finish(mut self, zero_unix_ms: f64) -> Telemetry {
        self.stop.store(true, Ordering::Relaxed);
        let raw = self
            .handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        Telemetry {
            pid: Some(self.pid),
            series: raw
                .into_iter()
                .map(|r| TelemetryPoint {
                    t_s: ((r.unix_ms - zero_unix_ms) / 1000.0 * 1000.0).round() / 1000.0,
                    ..r.point
                })
                .collect(),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
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

/// Threads, RSS, CPU seconds and open fds of `pid`; `None` once it is gone.
pub fn sample_proc(pid: u32) -> Option<TelemetryPoint> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    // A zombie has no memory and no threads to speak of: treat it as gone.
    if status
        .lines()
        .any(|l| l.starts_with("State:") && l.contains('Z'))
    {
        return None;
    }
    let threads = field("Threads:").unwrap_or(0);
    let rss_kb = field("VmRSS:").unwrap_or(0);
    let cpu_s = proc_cpu_seconds(pid).unwrap_or(0.0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count() as u64)
        .unwrap_or(0);
    Some(TelemetryPoint {
        t_s: 0.0,
        threads,
        rss_mb: rss_kb as f64 / 1024.0,
        cpu_s,
        fds,
        ..TelemetryPoint::default()
    })
}

/// utime + stime of a process, seconds.
pub fn proc_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime is field 14, stime 15.
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    Some((utime + stime) / hz)
}

fn scrape(url: &str, p: &mut TelemetryPoint) {
    let Ok(r) = http::get(url, SCRAPE_TIMEOUT) else {
        return;
    };
    if r.status != 200 {
        return;
    }
    let m = parse_metrics(&r.body);
    p.in_flight = m.in_flight;
    p.queued = m.queued;
    p.completed = m.completed;
    p.rejected = m.rejected;
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
