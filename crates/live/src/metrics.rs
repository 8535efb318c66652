//! `/metrics`: the attack under way in the OpenMetrics text format, written
//! by `prometheus-client` from the attack's document and its latency
//! HdrHistogram at each scrape (nothing is counted twice, and a scrape costs
//! the generator nothing).
//!
//! Latency is a histogram on fixed buckets, the same on every host (the
//! Renard R10 series, ten a decade from 100 us to 100 s), so a team's
//! Prometheus can add the shards' buckets (`sum by (le)`) and read a
//! quantile of the whole; iolab's own merge reads the exact one from the
//! added HdrHistograms, which the bench sets beside it.

use std::fmt::Write;

use hdrhistogram::Histogram;
use iolab_model::attack::AttackResult;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// What `/metrics` answers with.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One decade of the R10 series.
const R10: [f64; 10] = [1.0, 1.25, 1.6, 2.0, 2.5, 3.15, 4.0, 5.0, 6.3, 8.0];

/// The latency buckets' upper bounds, seconds: 100 us .. 100 s.
pub fn buckets() -> Vec<f64> {
    let mut out: Vec<f64> = (-4..2)
        .flat_map(|e| R10.iter().map(move |m| m * 10f64.powi(e)))
        .collect();
    out.push(100.0);
    // Round away the float noise of m x 10^e (0.00063 not 0.0006300000000000001).
    out.iter_mut().for_each(|b| *b = (*b * 1e6).round() / 1e6);
    out
}

/// What one scrape reports.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The attack's document as it stands.
    pub result: AttackResult,
    /// Its latency histogram, microseconds (answered requests, any status).
    pub latency: Option<Histogram<u64>>,
    /// Requests sent without an answer yet.
    pub in_flight: Option<u64>,
    /// Frames the generator dropped for a full live buffer.
    pub dropped_frames: u64,
}

/// The OpenMetrics text for `snap` (only the page's own counters before an
/// attack starts); `page_dropped` counts the frames the page's readers missed.
pub fn encode(snap: Option<&Snapshot>, page_dropped: u64) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape {
        snap: snap.cloned(),
        page_dropped,
    }));
    let mut out = String::new();
    if prometheus_client::encoding::text::encode(&mut out, &registry).is_err() {
        out.clear();
        let _ = writeln!(out, "# EOF");
    }
    out
}

#[derive(Debug)]
struct Scrape {
    snap: Option<Snapshot>,
    page_dropped: u64,
}

fn counter(enc: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> std::fmt::Result {
    let c = ConstCounter::new(v);
    c.encode(enc.encode_descriptor(name, help, None, c.metric_type())?)
}

fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, v: f64) -> std::fmt::Result {
    let g = ConstGauge::new(v);
    g.encode(enc.encode_descriptor(name, help, None, g.metric_type())?)
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        let Some(s) = &self.snap else {
            return counter(
                &mut enc,
                "iolab_live_dropped_frames",
                "Frames a slow reader of the live page missed.",
                self.page_dropped,
            );
        };
        let (r, q) = (&s.result, &s.result.requests);
        counter(
            &mut enc,
            "iolab_requests_planned",
            "Requests the schedule asked for so far.",
            q.planned,
        )?;
        counter(
            &mut enc,
            "iolab_requests_sent",
            "Requests put on the wire.",
            q.sent,
        )?;
        let mut fam = enc.encode_descriptor(
            "iolab_requests_finished",
            "Requests that ended, by outcome: ok (2xx in time), non_2xx, each error class, not_sent.",
            None,
            MetricType::Counter,
        )?;
        let outcomes = [("ok", q.ok), ("non_2xx", q.non_2xx)]
            .into_iter()
            .chain(r.errors.classes())
            .chain([("not_sent", q.not_sent)]);
        for (outcome, n) in outcomes {
            ConstCounter::new(n).encode(fam.encode_family(&[("outcome", outcome)])?)?;
        }
        gauge(
            &mut enc,
            "iolab_requests_in_flight",
            "Requests sent and not answered yet (the generator's view from outside).",
            s.in_flight.unwrap_or(0) as f64,
        )?;
        if let Some(h) = &s.latency {
            let (sum, count, buckets) = histogram(h);
            let m = enc.encode_descriptor(
                "iolab_request_latency_seconds",
                "Latency from the intended send time of answered requests; fixed R10 buckets, the same on every shard.",
                None,
                MetricType::Histogram,
            )?;
            let mut m = m;
            m.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
        let g = &r.generator;
        gauge(
            &mut enc,
            "iolab_schedule_lag_p99_seconds",
            "How late sends left against their schedule, 99th percentile.",
            g.lag_p99_ms / 1e3,
        )?;
        gauge(
            &mut enc,
            "iolab_schedule_lag_max_seconds",
            "How late sends left against their schedule, worst.",
            g.lag_max_ms / 1e3,
        )?;
        gauge(
            &mut enc,
            "iolab_generator_cpu_seconds",
            "CPU seconds the generator's threads used in this attack.",
            g.cpu_s,
        )?;
        counter(
            &mut enc,
            "iolab_live_dropped_frames",
            "Frames dropped for a full buffer: by the generator's feed and by slow readers of the live page.",
            s.dropped_frames + self.page_dropped,
        )
    }
}

/// Sum (s), count and per-bucket counts (the last one +Inf) of `h`.
fn histogram(h: &Histogram<u64>) -> (f64, u64, Vec<(f64, u64)>) {
    let bounds = buckets();
    let mut counts = vec![0u64; bounds.len() + 1];
    let mut sum = 0.0;
    for v in h.iter_recorded() {
        let n = v.count_at_value();
        // The bucket of every value HDR holds as this one.
        let us = h.highest_equivalent(v.value_iterated_to());
        let secs = us as f64 / 1e6;
        sum += h.median_equivalent(v.value_iterated_to()) as f64 / 1e6 * n as f64;
        let i = bounds.partition_point(|b| *b < secs);
        counts[i] += n;
    }
    let mut out: Vec<(f64, u64)> = bounds.into_iter().zip(counts.iter().copied()).collect();
    out.push((f64::INFINITY, counts[counts.len() - 1]));
    (sum, h.len(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buckets_are_r10_from_100us_to_100s() {
        let b = buckets();
        assert_eq!(b.len(), 61);
        assert_eq!(b[0], 0.0001);
        assert_eq!(b[1], 0.000125);
        assert_eq!(b[60], 100.0);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn every_recorded_value_lands_in_one_bucket() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for us in [50, 99, 100, 101, 1_000, 20_000, 20_000, 60_000_000] {
            h.record(us).unwrap();
        }
        let (sum, count, b) = histogram(&h);
        assert_eq!(count, 8);
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 8);
        // 50, 99 and 100 us are within 100 us; 101 us is not.
        assert_eq!(b[0], (0.0001, 3));
        assert!(sum > 60.0 && sum < 60.2, "{sum}");
        let text = encode(
            Some(&Snapshot {
                result: AttackResult::default(),
                latency: Some(h),
                in_flight: Some(3),
                dropped_frames: 0,
            }),
            0,
        );
        assert!(
            text.contains("iolab_request_latency_seconds_bucket{le=\"+Inf\"} 8"),
            "{text}"
        );
        assert!(
            text.contains("iolab_requests_finished_total{outcome=\"timeout\"} 0"),
            "{text}"
        );
        assert!(text.contains("iolab_requests_in_flight 3"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }
}
