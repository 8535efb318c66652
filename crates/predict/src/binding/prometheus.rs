//! Rule 1 of the naming: what the service says of itself in its Prometheus
//! series, every gauge of the one table (`iolab_model::capacity::gauges`)
//! read at every step around the knee and weighed together: a gauge at its
//! max (or with requests waiting for it) binds; of two, the pool with
//! requests waiting binds (its threads are busy waiting for it); a gauge
//! below its max is a resource beside the binding one, with the rate at
//! which it would bind. Node's event-loop lag grown tenfold names the loop.

use iolab_model::capacity::gauges::{Gauge, GAUGES, LAG};
use iolab_model::capacity::{Binding, Confidence, Evidence, Limit, Resource, Source};

use super::{advice, binding, ms, n, Knee};

/// One gauge of the table read over the steps around the knee.
#[derive(Debug, Clone)]
pub(super) struct Reading {
    pub gauge: &'static Gauge,
    /// Its configured size (`_max`), when exported.
    pub max: Option<f64>,
    /// The highest in use around the knee.
    pub peak: f64,
    /// The highest in use at the knee's own step.
    pub at: Option<f64>,
    /// The most requests waiting for it around the knee.
    pub waiting: f64,
    /// Its waiting series was exported at a step around the knee.
    pub waiting_read: bool,
    /// The lowest rate of a step that found it full: at its max, or with
    /// requests waiting for it.
    pub full_at: Option<f64>,
}

impl Reading {
    /// Full at the knee's own rate, or above it with Little's count at
    /// least three quarters of its size: under overload a queue moves into
    /// whatever holds the requests, so a CPU-bound Tomcat of 200 fills its
    /// threads one step up while it holds 5 requests at the knee.
    fn saturated(&self, k: &Knee) -> bool {
        self.full_at
            .is_some_and(|rate| rate <= k.at.rate_rps || k.concurrency >= 0.75 * self.size())
    }

    /// At its max while its own waiting series read nobody waiting at
    /// every step around the knee: it ran out of units at moments, but no
    /// request was held back by it. Beside a full gauge with no waiting
    /// series (Tomcat's threads), that one binds: Tomcat 40 and HikariCP
    /// 40 both read 40 of 40, the pool with nobody pending.
    fn unwaited(&self) -> bool {
        self.waiting_read && self.waiting <= 0.0
    }

    /// Its units: as configured, else the most seen in use.
    pub fn size(&self) -> f64 {
        self.max.unwrap_or(self.peak)
    }

    /// How long a request holds one unit, ms: Little's law at the knee on
    /// its units in use (a peak, so at most), never more than S; a full
    /// one's units are all in use at the capacity.
    fn hold_ms(&self, k: &Knee) -> f64 {
        let used = if self.saturated(k) {
            self.size()
        } else {
            self.at.unwrap_or(self.peak)
        };
        if k.capacity <= 0.0 {
            return k.service_ms;
        }
        (used / k.capacity * 1000.0).min(k.service_ms)
    }

    /// The rate at which it would bind, req/s: its size over its hold.
    fn binds_at(&self, k: &Knee) -> f64 {
        let hold = self.hold_ms(k);
        if hold <= 0.0 {
            return f64::INFINITY;
        }
        self.size() / hold * 1000.0
    }

    /// `Tomcat's 40 threads`.
    pub fn what(&self) -> String {
        format!(
            "{}'s {} {}",
            self.gauge.label,
            n(self.size()),
            self.gauge.unit
        )
    }

    /// It as a resource beside the binding one.
    pub fn limit(&self, k: &Knee) -> Limit {
        Limit {
            resource: self.gauge.resource,
            size: self.size(),
            name: Some(self.gauge.name.to_string()),
            hold_ms: self.hold_ms(k),
            binds_at_rps: self.binds_at(k),
            configured: self.max.is_some(),
        }
    }

    /// What it read, as evidence.
    pub fn evidence(&self) -> Evidence {
        let g = self.gauge;
        let max = self
            .max
            .map_or(String::new(), |m| format!(" of {} {}", g.max, n(m)));
        let waiting = match g.waiting {
            Some(w) if self.waiting > 0.0 => format!(", {} {w}", n(self.waiting)),
            _ => String::new(),
        };
        Evidence {
            source: Source::Prometheus,
            text: format!(
                "{} {}{max}{waiting} at its highest around the knee",
                g.in_use,
                n(self.peak)
            ),
        }
    }
}

/// Every gauge of the table the steps around the knee exported.
pub(super) fn readings(k: &Knee) -> Vec<Reading> {
    GAUGES.iter().filter_map(|g| read(k, g)).collect()
}

fn read(k: &Knee, g: &'static Gauge) -> Option<Reading> {
    let mut r = Reading {
        gauge: g,
        max: None,
        peak: f64::NEG_INFINITY,
        at: k.at.metrics.get(g.in_use).copied(),
        waiting: 0.0,
        waiting_read: false,
        full_at: None,
    };
    for s in k.steps() {
        let Some(used) = s.metrics.get(g.in_use).copied() else {
            continue;
        };
        let max = s
            .metrics
            .get(g.max)
            .copied()
            .filter(|m| *m > 0.0 && *m < UNBOUNDED);
        let waiting = g.waiting.and_then(|w| s.metrics.get(w)).copied();
        r.peak = r.peak.max(used);
        r.max = r.max.or(max);
        r.waiting = r.waiting.max(waiting.unwrap_or(0.0));
        r.waiting_read |= waiting.is_some();
        let full = max.is_some_and(|m| used >= m - 0.5) || waiting.is_some_and(|w| w > 0.0);
        if full && r.full_at.is_none_or(|f| s.rate_rps < f) {
            r.full_at = Some(s.rate_rps);
        }
    }
    // A gauge no request used around the knee is no resource of theirs.
    (r.peak.is_finite() && (r.peak > 0.0 || r.waiting > 0.0)).then_some(r)
}

/// A `_max` this high is no limit: Java's `Integer.MAX_VALUE`, the max
/// of Spring's own task executor (`applicationTaskExecutor`), which a real
/// Spring service exports idle beside Tomcat and HikariCP: it was kept
/// "beside" the threads as a pool of 2147483647 (issue 50, on Spring 3.5).
const UNBOUNDED: f64 = 2_147_483_647.0;

/// Rule 1: the gauges weighed together, or a lag series grown tenfold.
pub(super) fn prometheus(k: &Knee) -> Option<Binding> {
    gauges(k).or_else(|| lag(k))
}

fn gauges(k: &Knee) -> Option<Binding> {
    let rs = readings(k);
    // A full pool with requests waiting first (its threads wait for it),
    // then a full one not read with nobody waiting for it, then the full
    // one that binds at the lowest rate.
    let first = rs.iter().filter(|r| r.saturated(k)).min_by(|a, b| {
        let queued = |r: &Reading| r.gauge.resource == Resource::Pool && r.waiting > 0.0;
        queued(b)
            .cmp(&queued(a))
            .then(a.unwaited().cmp(&b.unwaited()))
            .then(a.binds_at(k).total_cmp(&b.binds_at(k)))
    })?;
    let m = first.size();
    let mut b = binding(
        k,
        first.gauge.resource,
        Some(m),
        format!(
            "is limited by {} (Little's count {}): {} reached {} at {}/s{}; {}",
            first.what(),
            n(k.concurrency),
            first.gauge.in_use,
            match first.max {
                Some(max) => format!("its max of {}", n(max)),
                None => format!("{} with requests waiting", n(first.peak)),
            },
            n(first.full_at.unwrap_or(k.capacity)),
            match first.gauge.waiting {
                Some(w) if first.waiting > 0.0 =>
                    format!(" with {} waiting ({w})", n(first.waiting)),
                _ => String::new(),
            },
            advice(first.gauge.resource),
        ),
    );
    b.name = Some(first.gauge.name.to_string());
    b.configured = first.max.is_some();
    b.hold_ms = first.hold_ms(k);
    let two_signals = first.waiting > 0.0 && first.max.is_some();
    // At its max at the highest rate that passed, with Little's count at
    // least nine in ten of it: requests held beyond it wait outside it (a
    // cold JIT's first steps set S: Tomcat 20 read Little's count 25).
    let at_max = first
        .max
        .is_some_and(|max| first.at.is_some_and(|a| a >= max - 0.5));
    let at_max_held = k.at.passed && at_max && k.concurrency >= 0.9 * m;
    b.confidence = if two_signals || at_max_held || (k.concurrency - m).abs() <= 0.25 * m {
        Confidence::High
    } else {
        b.settle = Some(format!(
            "Little's law gives {} held at once, not {}: the gauge at the failing rate would settle it",
            n(k.concurrency),
            n(m)
        ));
        Confidence::Medium
    };
    b.evidence.extend(rs.iter().map(Reading::evidence));
    b.also = rs
        .iter()
        .filter(|r| r.gauge.name != first.gauge.name)
        .map(|r| r.limit(k))
        .collect();
    Some(b)
}

fn lag(k: &Knee) -> Option<Binding> {
    for lag in LAG {
        let (Some(low), Some(high)) = (
            k.at.metrics.get(lag),
            k.over.and_then(|o| o.metrics.get(lag)),
        ) else {
            continue;
        };
        if *high >= 0.05 && *high >= 10.0 * low.max(0.001) {
            let mut b = binding(
                k,
                Resource::EventLoop,
                Some(1.0),
                format!(
                    "is limited by its event loop, blocked by its own handlers: {lag} grew from {} at {}/s to {} above it",
                    ms(low * 1000.0),
                    n(k.capacity),
                    ms(high * 1000.0)
                ),
            );
            b.confidence = Confidence::High;
            return Some(b);
        }
    }
    None
}
