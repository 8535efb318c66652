//! Per-thread recording: counters, HdrHistograms (microseconds) and series
//! intervals, owned by one event loop and merged after the run. Nothing here
//! allocates per request except optional `--csv` rows (amortized, bounded by
//! `limits::MAX_CSV_ROWS` at validation); the series holds at most
//! `limits::MAX_SERIES_POINTS` intervals, each histogram growing only to the
//! latencies it holds.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use hdrhistogram::Histogram;
use iolab_model::attack::{ErrorCounts, RequestCounts};
use iolab_model::limits::MAX_SERIES_POINTS;
use iolab_model::protocol::ProtocolSummary;

/// The class a failed request lands in: one table, in `iolab_model::error_class`.
pub use iolab_model::attack::ErrorClass;

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

impl Interval {
    /// An empty interval. Its histogram starts small and grows to the
    /// largest latency it holds, at 2 significant digits (1% is plenty for
    /// a series point): an interval with no answer costs 2 KiB, not the
    /// 130 KiB of a histogram sized for the timeout up front.
    pub(crate) fn empty() -> Interval {
        Interval {
            sent: 0,
            ok: 0,
            errors: 0,
            latency: Histogram::new(2).expect("2 significant digits are valid"),
        }
    }

    /// Record one latency. `record` grows the histogram to hold it;
    /// `saturating_record` would clamp it to the bounds the empty histogram
    /// started with (2 us), which is what series points showed from
    /// 2026-11-23 02:36 until this fix.
    fn record(&mut self, latency_us: u64) {
        if self.latency.record(latency_us).is_err() {
            self.latency.saturating_record(latency_us);
        }
    }

    /// Add `other`'s counts and latencies into this one.
    pub fn absorb(&mut self, other: &Interval) {
        self.sent += other.sent;
        self.ok += other.ok;
        self.errors += other.errors;
        // Both auto-resize, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
    }
}

/// Everything one generator thread measured.
#[derive(Debug, Clone)]
pub struct Recorder {
    start_ns: u64,
    interval_ns: u64,
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
    /// HTTP/2: this thread's connections and the servers' stream limits.
    pub protocol: Option<ProtocolSummary>,
    /// `--live`: where the books go each time an interval closes.
    pub(crate) feed: Option<Arc<dyn Publish>>,
    /// gRPC: only HTTP 200 carries a call's answer, so any other status,
    /// a 204 or 206 too, is `non_2xx` (issue 49, finding 5).
    pub(crate) only_200: bool,
    /// A replayed mix: each endpoint's books (empty without one).
    pub endpoints: Vec<crate::endpoints::Book>,
}

/// Where a recorder hands its books as each interval closes (`--live`: the
/// live feed's tap). A trait, so the recorder knows no reader of it.
pub(crate) trait Publish: std::fmt::Debug + Send + Sync {
    /// Take `rec`'s books now that its interval `closed` is complete.
    fn publish(&self, rec: &mut Recorder, closed: usize);
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
            protocol: None,
            feed: None,
            only_200: false,
            endpoints: Vec::new(),
        }
    }

    fn interval(&mut self, at_ns: u64) -> &mut Interval {
        let at = at_ns.saturating_sub(self.start_ns);
        // Never more than MAX_SERIES_POINTS intervals, whatever the run's
        // length or `--interval`: past it, every interval doubles in width.
        while at / self.interval_ns >= MAX_SERIES_POINTS as u64 {
            self.coarsen();
        }
        let idx = (at / self.interval_ns) as usize;
        if idx >= self.intervals.len() && !self.intervals.is_empty() {
            if let Some(tap) = self.feed.take() {
                tap.publish(self, self.intervals.len() - 1);
                self.feed = Some(tap);
            }
        }
        while self.intervals.len() <= idx {
            if let Some(prev) = self.intervals.last() {
                let p99 = prev.latency.value_at_quantile(0.99);
                self.live.p99_us.store(p99, Relaxed);
            }
            self.intervals.push(Interval::empty());
        }
        &mut self.intervals[idx]
    }

    /// The width of one series interval now, ns.
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// Double the interval width, adding neighbours (2i and 2i + 1 become
    /// i): intervals stay aligned on the run clock every thread shares.
    pub fn coarsen(&mut self) {
        let old = std::mem::take(&mut self.intervals);
        let mut it = old.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                a.absorb(&b);
            }
            self.intervals.push(a);
        }
        self.interval_ns = self.interval_ns.saturating_mul(2);
    }

    /// Coarsen until the interval is `width_ns` wide (a multiple of this
    /// one by a power of two, as another thread's coarsened width is).
    pub fn coarsen_to(&mut self, width_ns: u64) {
        while self.interval_ns < width_ns {
            self.coarsen();
        }
    }

    fn us(ns: u64) -> u64 {
        (ns / 1_000).max(1)
    }

    /// A request entered the schedule (open loop) or was started (closed loop).
    pub fn planned(&mut self) {
        self.counts.planned += 1;
    }

    /// A request sent again on a new connection ([`crate::retry`]): still
    /// one request, counted once in `sent` and once in its outcome.
    pub fn retried(&mut self) {
        self.counts.retried += 1;
    }

    /// An answer over TLS ended by a close without `close_notify`
    /// (see [`RequestCounts::unclean_tls_close`]).
    pub fn unclean_tls_close(&mut self) {
        self.counts.unclean_tls_close += 1;
    }

    /// `n` scheduled requests that will never be due (the run was cut):
    /// planned and not sent, without a `--csv` row (the caller writes rows
    /// one by one when it keeps them).
    pub fn planned_not_sent(&mut self, n: u64) {
        self.counts.planned += n;
        self.counts.not_sent += n;
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

    /// A request of endpoint `ep` of a replayed mix finished (after
    /// [`Recorder::done`]); nothing without a mix.
    pub fn endpoint_done(
        &mut self,
        ep: Option<usize>,
        intended_ns: u64,
        done_ns: u64,
        outcome: Result<u16, ErrorClass>,
    ) {
        if let Some(ep) = ep {
            let latency = Self::us(done_ns.saturating_sub(intended_ns));
            crate::endpoints::record(&mut self.endpoints, ep, latency, outcome, self.only_200);
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
                let ok = match self.only_200 {
                    true => code == 200,
                    false => (200..300).contains(&code),
                };
                if ok {
                    self.counts.ok += 1;
                    self.live.ok.fetch_add(1, Relaxed);
                } else {
                    self.counts.non_2xx += 1;
                    self.live.errors.fetch_add(1, Relaxed);
                }
                let iv = self.interval(done_ns);
                iv.record(latency);
                if ok {
                    iv.ok += 1;
                } else {
                    iv.errors += 1;
                }
            }
            Err(class) => {
                self.errors.record(class);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16, finding 2: `--interval 1ms` kept one full histogram per
    /// interval (2.6 GB over a long run). Now at most MAX_SERIES_POINTS
    /// small ones, whatever the run's length, with every answer kept.
    #[test]
    fn r16_02_the_series_stays_bounded_over_a_long_run() {
        let ms = 1_000_000;
        let mut rec = Recorder::new(0, ms, 20_000_000, false, Arc::default());
        let answers = 200_000u64;
        for i in 0..answers {
            let at = i * 5 * ms; // one answer every 5 ms for 1,000 s
            rec.done(at, at, at + 3 * ms, Ok(200));
        }
        assert!(
            rec.intervals.len() <= MAX_SERIES_POINTS,
            "{}",
            rec.intervals.len()
        );
        assert!(rec.interval_ns() > ms);
        assert_eq!(rec.intervals.iter().map(|i| i.ok).sum::<u64>(), answers);
        let widest = rec.interval_ns();
        let mut other = Recorder::new(0, ms, 20_000_000, false, Arc::default());
        other.done(0, 0, ms, Err(ErrorClass::Refused));
        other.coarsen_to(widest);
        assert_eq!(other.interval_ns(), widest);
        assert_eq!(other.intervals[0].errors, 1);
    }
}
