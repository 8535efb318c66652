//! `iolab merge`: shard documents of one plan into the one document a single
//! host would have written. Counters add; every percentile is read from an
//! added HdrHistogram (latency, service time, send lag, and each series
//! interval), never averaged; series line up on absolute time.
//!
//! Refused, with one line naming the fault: a document that is not a shard,
//! shards of different plans (hash), of different cuts (n) or starts, a
//! missing or duplicate index, a histogram that does not decode.

use std::collections::BTreeMap;
use std::time::Duration;

use check::decode;

use hdrhistogram::Histogram;
use iolab_model::attack::{
    AttackResult, ErrorCounts, GeneratorStats, RequestCounts, Throughput, ATTACK_SCHEMA,
};
use iolab_model::protocol::ProtocolSummary;
use iolab_model::shard::{MergeRecord, ShardPart, ShardRecord};

mod check;
mod records;

pub(crate) use check::check;
pub use check::{ShardFault, ShardMergeError};

use super::record::encode;
use crate::merge::{
    add, add_counts, add_protocol, interval_histograms, latency_summary, series, service_summary,
    spectrum,
};
use crate::recorder::Interval;
use crate::report::IntervalHistogram;

/// A merged document and its interval histograms (for `--hdr`).
#[derive(Debug, Clone)]
pub struct Merged {
    /// The merged `iolab.attack/1` document.
    pub result: AttackResult,
    /// Per-interval latency histograms, on the merged clock.
    pub intervals: Vec<IntervalHistogram>,
}

/// One input: a name for messages (its file) and its document.
pub type Source = (String, AttackResult);

/// Merge the shards of one plan sent to one target; the error is one line
/// naming the fault.
pub fn merge(docs: &[Source]) -> Result<Merged, ShardMergeError> {
    one_target(docs, false)?;
    merge_hosts(docs)
}

/// Every document attacked the first one's target.
fn one_target(docs: &[Source], live: bool) -> Result<(), ShardMergeError> {
    let Some((name0, d0)) = docs.first() else {
        return Ok(());
    };
    match docs.iter().find(|(_, d)| d.target != d0.target) {
        Some((name, d)) => Err(ShardMergeError::Targets {
            name: name.clone(),
            target: d.target.clone(),
            name0: name0.clone(),
            target0: d0.target.clone(),
            live,
        }),
        None => Ok(()),
    }
}

/// Merge the shards of one plan, each host having sent its shard to a
/// target of its own (a sharded `iolab run`); the merged document names the
/// first one's.
pub fn merge_hosts(docs: &[Source]) -> Result<Merged, ShardMergeError> {
    combine(docs, false)
}

/// Merge shards read while they run (`iolab merge --live`): the shards
/// there are so far (none is required yet), whose counts need not balance
/// (answers are in flight); otherwise as [`merge`] does.
pub fn merge_live(docs: &[Source]) -> Result<Merged, ShardMergeError> {
    one_target(docs, true)?;
    combine(docs, true)
}

fn combine(docs: &[Source], live: bool) -> Result<Merged, ShardMergeError> {
    let shards = check(docs, !live)?;
    let interval = Duration::from_secs_f64(shards[0].2.interval_s.max(1e-3));
    let base = shards
        .iter()
        .map(|(_, d, _)| d.started_unix_ms)
        .min()
        .unwrap_or(0);
    let mut acc = Acc::default();
    for (name, doc, rec) in &shards {
        let fault = |why: ShardFault| ShardMergeError::Shard {
            name: name.to_string(),
            why,
        };
        if !live {
            super::hist::holds_answers(doc).map_err(|e| fault(e.into()))?;
        }
        acc.add(doc, rec, base, interval).map_err(fault)?;
    }
    let shards: Vec<(&AttackResult, &ShardRecord)> =
        shards.iter().map(|(_, d, r)| (*d, *r)).collect();
    let mut result = acc.result(&shards, base, interval);
    let names: Vec<String> = shards
        .iter()
        .map(|(_, r)| format!("shard {}", r.index))
        .collect();
    let sections: Vec<(&str, &[iolab_model::attack::EndpointResult])> = (names.iter().zip(&shards))
        .map(|(n, (d, _))| (n.as_str(), d.endpoints.as_slice()))
        .collect();
    result.endpoints = crate::endpoints::combine(&sections)?;
    if live {
        let intervals = interval_histograms(acc.intervals, interval);
        return Ok(Merged { result, intervals });
    }
    result
        .check_accounting()
        .map_err(ShardMergeError::Unbalanced)?;
    let intervals = interval_histograms(acc.intervals, interval);
    Ok(Merged { result, intervals })
}

/// The sums so far.
#[derive(Default)]
struct Acc {
    requests: RequestCounts,
    errors: ErrorCounts,
    status: BTreeMap<String, u64>,
    latency: Option<Histogram<u64>>,
    service: Option<Histogram<u64>>,
    lag: Option<Histogram<u64>>,
    intervals: Vec<Interval>,
    elapsed_s: f64,
    cpu_s: f64,
    spin_s: f64,
    threads: usize,
    saturated: bool,
    /// Each shard's CPU wait (`None` where a shard's host could not tell).
    waits: Vec<Option<f64>>,
    /// The flagged shards' causes, each naming its shard.
    causes: Vec<String>,
    interrupted: bool,
    protocol: Option<ProtocolSummary>,
}

/// Add `from` into `into`, starting `into` at the first histogram seen.
fn add_opt(into: &mut Option<Histogram<u64>>, from: Option<Histogram<u64>>) {
    match (into.as_mut(), from) {
        (Some(i), Some(f)) => add(i, &f),
        (None, Some(f)) => {
            let mut h = auto_histogram();
            add(&mut h, &f);
            *into = Some(h);
        }
        (_, None) => {}
    }
}

impl Acc {
    fn add(
        &mut self,
        doc: &AttackResult,
        rec: &ShardRecord,
        base: u64,
        interval: Duration,
    ) -> Result<(), ShardFault> {
        add_counts(&mut self.requests, &doc.requests);
        self.errors.add(&doc.errors);
        add_protocol(&mut self.protocol, doc.protocol.as_ref());
        for (code, n) in &doc.status_codes {
            *self.status.entry(code.clone()).or_default() += n;
        }
        add_opt(
            &mut self.latency,
            decode("latency", doc.histogram.as_deref())?,
        );
        add_opt(
            &mut self.service,
            decode("service", rec.service_histogram.as_deref())?,
        );
        add_opt(&mut self.lag, decode("lag", rec.lag_histogram.as_deref())?);
        if rec.interval_histograms.len() != doc.series.len() {
            return Err(ShardFault::Intervals {
                histograms: rec.interval_histograms.len(),
                points: doc.series.len(),
            });
        }
        let late_ms = doc.started_unix_ms - base;
        let shift = (late_ms as f64 / (interval.as_secs_f64() * 1e3)).round() as usize;
        for (i, (p, h)) in doc.series.iter().zip(&rec.interval_histograms).enumerate() {
            while self.intervals.len() <= shift + i {
                self.intervals.push(Interval {
                    sent: 0,
                    ok: 0,
                    errors: 0,
                    latency: auto_histogram(),
                });
            }
            let m = &mut self.intervals[shift + i];
            (m.sent, m.ok, m.errors) = (m.sent + p.sent, m.ok + p.ok, m.errors + p.errors);
            if let Some(h) = decode("interval", Some(h))? {
                add(&mut m.latency, &h);
            }
        }
        self.elapsed_s = self.elapsed_s.max(late_ms as f64 / 1e3 + doc.elapsed_s);
        let g = &doc.generator;
        self.cpu_s += g.cpu_s;
        self.spin_s += g.spin_s;
        self.threads += g.threads;
        self.saturated |= g.saturated;
        self.waits.push(g.wait_s);
        if let Some(c) = &g.cause {
            self.causes.push(format!("shard {}: {c}", rec.index));
        }
        self.interrupted |= doc.interrupted;
        Ok(())
    }

    fn result(
        &self,
        shards: &[(&AttackResult, &ShardRecord)],
        base: u64,
        interval: Duration,
    ) -> AttackResult {
        let first = shards[0].0;
        let empty = auto_histogram();
        let latency = self.latency.as_ref().unwrap_or(&empty);
        let service = self.service.as_ref().unwrap_or(&empty);
        let lag = self.lag.as_ref().unwrap_or(&empty);
        let ms = |us: u64| us as f64 / 1e3;
        AttackResult {
            schema: ATTACK_SCHEMA.to_string(),
            target: first.target.clone(),
            driver: first.driver.clone(),
            requests: self.requests.clone(),
            errors: self.errors.clone(),
            status_codes: self.status.clone(),
            latency_ms: latency_summary(latency),
            service_ms: service_summary(service),
            throughput_rps: Throughput::of(
                &first.driver,
                &self.requests,
                self.elapsed_s,
                self.interrupted,
            ),
            series: series(&self.intervals, interval),
            generator: GeneratorStats {
                cpu_s: self.cpu_s,
                lag_p99_ms: ms(lag.value_at_quantile(0.99)),
                lag_max_ms: ms(lag.max()),
                saturated: self.saturated,
                threads: self.threads,
                spin_s: self.spin_s,
                cpus: Vec::new(),
                wait_s: self.waits.iter().copied().sum(),
                cause: (!self.causes.is_empty()).then(|| self.causes.join("; ")),
                engine: engines(shards),
                peak_rss_kib: None,
            },
            elapsed_s: self.elapsed_s,
            started_unix_ms: base,
            spectrum: spectrum(latency),
            histogram: self.latency.as_ref().and_then(encode),
            interrupted: self.interrupted,
            protocol: self.protocol.clone(),
            shard: None,
            merged: Some(merge_record(shards, base)),
            slo: None,
            endpoints: Vec::new(),
            connections: None,
            messages: None,
        }
    }
}

/// An empty histogram that grows to what is added (same lowest value and
/// precision as the shards', so adding keeps every count in its bucket).
fn auto_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits")
}

/// The shards' engines, each named once in the order first met (`epoll`,
/// or `io_uring+epoll` when hosts differed).
fn engines(shards: &[(&AttackResult, &ShardRecord)]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for (r, _) in shards {
        for e in r.generator.engine.split('+').filter(|e| !e.is_empty()) {
            if !names.contains(&e) {
                names.push(e);
            }
        }
    }
    names.join("+")
}

/// The shards as the merged document lists them, and their start skew.
fn merge_record(shards: &[(&AttackResult, &ShardRecord)], base: u64) -> MergeRecord {
    let r0 = shards[0].1;
    let parts: Vec<ShardPart> = shards
        .iter()
        .map(|(d, r)| ShardPart {
            index: r.index,
            started_unix_ms: d.started_unix_ms,
            first_send_late_ms: r
                .first_send_ms
                .zip(r.first_due_ms)
                .map(|(sent, due)| (d.started_unix_ms - base) as f64 + sent - due),
            planned: d.requests.planned,
            sent: d.requests.sent,
            ok: d.requests.ok,
            cpu_s: d.generator.cpu_s,
            threads: d.generator.threads,
            saturated: d.generator.saturated,
            ..ShardPart::default()
        })
        .collect();
    let late: Vec<f64> = parts.iter().filter_map(|p| p.first_send_late_ms).collect();
    let start_skew_ms = (!late.is_empty()).then(|| {
        late.iter().copied().fold(f64::MIN, f64::max)
            - late.iter().copied().fold(f64::MAX, f64::min)
    });
    MergeRecord {
        shards: r0.count,
        plan_hash: r0.plan_hash.clone(),
        plan_requests: r0.plan_requests,
        start_at_unix_ms: r0.start_at_unix_ms.filter(|_| {
            shards
                .iter()
                .all(|(_, r)| r.start_at_unix_ms == r0.start_at_unix_ms)
        }),
        start_skew_ms,
        series_shifted: parts.iter().any(|p| p.started_unix_ms != base),
        parts,
    }
}

#[cfg(test)]
mod tests;
