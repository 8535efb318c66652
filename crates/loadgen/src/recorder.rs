//! Per-thread recording: counters, HdrHistograms (microseconds) and series
//! intervals, owned by one event loop and merged after the run. Nothing here
//! allocates per request except optional `--csv` rows (amortized).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use hdrhistogram::Histogram;
use iolab_model::attack::{ErrorCounts, RequestCounts};

/// The class a failed request lands in (exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// No complete answer by the deadline (intended send time + timeout).
    Timeout,
    /// ECONNREFUSED.
    Refused,
    /// ECONNRESET, EPIPE, or the peer closed before a complete answer.
    Reset,
    /// EADDRNOTAVAIL: out of ephemeral ports.
    AddrUnavailable,
    /// Any other connect failure.
    ConnectOther,
    /// A malformed answer or another read/write failure.
    Read,
}

impl ErrorClass {
    /// The name used in results and CSV rows.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Timeout => "timeout",
            ErrorClass::Refused => "refused",
            ErrorClass::Reset => "reset",
            ErrorClass::AddrUnavailable => "addr_unavailable",
            ErrorClass::ConnectOther => "connect_other",
            ErrorClass::Read => "read",
        }
    }
}

/// One request, for `--csv`. Times are nanoseconds from the run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRow {
    /// When the schedule wanted it sent.
    pub intended_ns: u64,
    /// When it was sent; `None` = never sent (`not_sent`).
    pub sent_ns: Option<u64>,
    /// When it completed (answer, error or timeout); `None` if not sent.
    pub done_ns: Option<u64>,
    /// HTTP status, 0 when there was no answer.
    pub status: u16,
    /// Failure class, if any.
    pub error: Option<ErrorClass>,
}

/// Counters a progress reader may look at while the run goes on.
#[derive(Debug, Default)]
pub struct Live {
    pub sent: AtomicU64,
    pub ok: AtomicU64,
    pub errors: AtomicU64,
    /// p99 of the last completed interval, microseconds.
    pub p99_us: AtomicU64,
}

/// One series interval of one thread.
#[derive(Debug, Clone)]
pub struct Interval {
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    pub latency: Histogram<u64>,
}

/// Everything one generator thread measured.
#[derive(Debug)]
pub struct Recorder {
    start_ns: u64,
    interval_ns: u64,
    highest_us: u64,
    pub counts: RequestCounts,
    pub errors: ErrorCounts,
    /// Count per status code 0..=999.
    pub status: Vec<u64>,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub lag: Histogram<u64>,
    pub intervals: Vec<Interval>,
    pub rows: Option<Vec<RequestRow>>,
    pub live: Arc<Live>,
    /// Latest completion, run-clock ns (for elapsed time).
    pub last_done_ns: u64,
    /// Wall time the open-loop dispatcher spent busy-waiting (`spin`).
    pub spin_ns: u64,
    /// The earliest send, `(intended, sent)` on the run clock: where a
    /// shard really started (the start skew of a merge).
    pub first_send: Option<(u64, u64)>,
}

/// A histogram able to hold every value up to `highest_us` at 3 significant digits.
pub fn new_histogram(highest_us: u64) -> Histogram<u64> {
    Histogram::new_with_bounds(1, highest_us.max(1_000), 3).expect("valid histogram bounds")
}

impl Recorder {
    pub fn new(
        start_ns: u64,
        interval_ns: u64,
        highest_us: u64,
        rows: bool,
        live: Arc<Live>,
    ) -> Self {
        Recorder {
            start_ns,
            interval_ns: interval_ns.max(1),
            highest_us,
            counts: RequestCounts::default(),
            errors: ErrorCounts::default(),
            status: vec![0; 1000],
            latency: new_histogram(highest_us),
            service: new_histogram(highest_us),
            lag: new_histogram(highest_us),
            intervals: Vec::new(),
            rows: rows.then(Vec::new),
            live,
            last_done_ns: start_ns,
            spin_ns: 0,
            first_send: None,
        }
    }

    fn interval(&mut self, at_ns: u64) -> &mut Interval {
        let idx = (at_ns.saturating_sub(self.start_ns) / self.interval_ns) as usize;
        while self.intervals.len() <= idx {
            if let Some(prev) = self.intervals.last() {
                let p99 = prev.latency.value_at_quantile(0.99);
                self.live.p99_us.store(p99, Relaxed);
            }
            self.intervals.push(Interval {
                sent: 0,
                ok: 0,
                errors: 0,
                latency: new_histogram(self.highest_us),
            });
        }
        &mut self.intervals[idx]
    }

    fn us(ns: u64) -> u64 {
        (ns / 1_000).max(1)
    }

    /// A request entered the schedule (open loop) or was started (closed loop).
    pub fn planned(&mut self) {
        self.counts.planned += 1;
    }

    /// A scheduled request never got a connection in time.
    pub fn not_sent(&mut self, intended_ns: u64) {
        self.counts.not_sent += 1;
        if let Some(rows) = &mut self.rows {
            rows.push(RequestRow {
                intended_ns: intended_ns - self.start_ns.min(intended_ns),
                sent_ns: None,
                done_ns: None,
                status: 0,
                error: None,
            });
        }
    }

    /// A request went out (or its connect began) at `sent_ns`.
    pub fn sent(&mut self, intended_ns: u64, sent_ns: u64, track_lag: bool) {
        self.counts.sent += 1;
        self.live.sent.fetch_add(1, Relaxed);
        if track_lag {
            let lag = sent_ns.saturating_sub(intended_ns) / 1_000;
            self.lag.saturating_record(lag);
        }
        self.interval(sent_ns).sent += 1;
        if self.first_send.is_none_or(|(_, s)| sent_ns < s) {
            self.first_send = Some((intended_ns, sent_ns));
        }
    }

    /// A request finished: an HTTP status or an error class.
    pub fn done(
        &mut self,
        intended_ns: u64,
        sent_ns: u64,
        done_ns: u64,
        outcome: Result<u16, ErrorClass>,
    ) {
        self.last_done_ns = self.last_done_ns.max(done_ns);
        let latency = Self::us(done_ns.saturating_sub(intended_ns));
        let service = Self::us(done_ns.saturating_sub(sent_ns));
        match outcome {
            Ok(code) => {
                self.status[code.min(999) as usize] += 1;
                self.latency.saturating_record(latency);
                self.service.saturating_record(service);
                let ok = (200..300).contains(&code);
                if ok {
                    self.counts.ok += 1;
                    self.live.ok.fetch_add(1, Relaxed);
                } else {
                    self.counts.non_2xx += 1;
                    self.live.errors.fetch_add(1, Relaxed);
                }
                let iv = self.interval(done_ns);
                iv.latency.saturating_record(latency);
                if ok {
                    iv.ok += 1;
                } else {
                    iv.errors += 1;
                }
            }
            Err(class) => {
                let e = &mut self.errors;
                *match class {
                    ErrorClass::Timeout => &mut e.timeout,
                    ErrorClass::Refused => &mut e.refused,
                    ErrorClass::Reset => &mut e.reset,
                    ErrorClass::AddrUnavailable => &mut e.addr_unavailable,
                    ErrorClass::ConnectOther => &mut e.connect_other,
                    ErrorClass::Read => &mut e.read,
                } += 1;
                self.live.errors.fetch_add(1, Relaxed);
                self.interval(done_ns).errors += 1;
            }
        }
        if let Some(rows) = &mut self.rows {
            let base = self.start_ns;
            rows.push(RequestRow {
                intended_ns: intended_ns.saturating_sub(base),
                sent_ns: Some(sent_ns.saturating_sub(base)),
                done_ns: Some(done_ns.saturating_sub(base)),
                status: outcome.unwrap_or(0),
                error: outcome.err(),
            });
        }
    }
}
