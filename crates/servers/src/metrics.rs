//! The counters and gauges behind `/metrics`, shared by every model, and their
//! rendering as Prometheus text (format 0.0.4).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use iolab_backends::Backends;

/// Live counters of one server. All relaxed atomics: a scrape is a snapshot,
/// not a transaction.
#[derive(Debug, Default)]
pub struct Metrics {
    in_flight: AtomicI64,
    queued: AtomicI64,
    completed: AtomicU64,
    rejected: AtomicU64,
}

/// Marks one `/work` request as in flight until dropped.
pub struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// A `/work` request started executing.
    pub fn start(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// Requests executing now.
    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// One more request (or offload job) waits for a thread.
    pub fn queue(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    /// One waiting request (or job) got its thread.
    pub fn dequeue(&self) {
        self.queued.fetch_sub(1, Ordering::Relaxed);
    }

    /// A `/work` request was answered (any status but an overload rejection).
    /// Counted *before* the answer is written, so a client that reads
    /// `/metrics` after its answer always sees it.
    pub fn complete(&self) {
        self.completed.fetch_add(1, Ordering::Relaxed);
    }

    /// A request was refused for overload (503: no thread could be had).
    pub fn reject(&self) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
    }

    /// `/work` requests answered so far.
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }

    /// Requests refused for overload so far.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// The Prometheus text of every metric.
    pub fn render(&self, backends: &Backends) -> String {
        let mut s = String::with_capacity(1024);
        let mut metric = |name: &str, kind: &str, help: &str, value: String| {
            let _ = write!(
                s,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            );
        };
        metric(
            "iolab_requests_in_flight",
            "gauge",
            "/work requests executing now.",
            self.in_flight().max(0).to_string(),
        );
        metric(
            "iolab_requests_queued",
            "gauge",
            "Requests (pool) or offload jobs (loop-offload) waiting for a thread.",
            self.queued.load(Ordering::Relaxed).max(0).to_string(),
        );
        metric(
            "iolab_requests_completed_total",
            "counter",
            "/work requests answered, whatever the status, except overload rejections.",
            self.completed().to_string(),
        );
        metric(
            "iolab_requests_rejected_total",
            "counter",
            "Requests refused with 503 because no thread could be had.",
            self.rejected().to_string(),
        );
        metric(
            "iolab_threads",
            "gauge",
            "Live OS threads of the process (/proc/self/task).",
            live_threads().to_string(),
        );
        let _ = write!(
            s,
            "# HELP iolab_backend_calls_total Backend calls made, by kind.\n\
             # TYPE iolab_backend_calls_total counter\n"
        );
        for (kind, n) in backends.calls() {
            let _ = writeln!(s, "iolab_backend_calls_total{{kind=\"{kind}\"}} {n}");
        }
        s
    }
}

/// Live OS threads of this process: the entries of `/proc/self/task`.
pub fn live_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}
