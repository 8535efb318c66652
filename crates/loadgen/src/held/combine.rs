//! `iolab merge` of held-connection documents: the shards of one held plan
//! (`iolab attack ws://... --shard i/n`, one process each, so that more
//! connections are held than one process's file limit allows), or several
//! generators (hosts, or runs) that each held their own connections to one
//! target, into the one document of all of them. Counts add; the
//! handshake, message and send-lag latencies are read from added
//! HdrHistograms, never averaged; each process's CPU and peak RSS are kept
//! (shards: in `merged.parts`) and summed; the identities are checked on
//! the result.

use hdrhistogram::Histogram;
use iolab_model::attack::{AttackResult, HeldPlan, Throughput};
use iolab_model::shard::{MergeRecord, ShardPart, ShardRecord};
use sha2::{Digest, Sha256};

use super::account::{merge, p99_ms, MergeError, HIGHEST_US};
use crate::merge::{add, latency_summary};
use crate::recorder::new_histogram;
use crate::shard::combine::check;
use crate::shard::record::encode;

/// Why held documents could not be merged, naming the document.
#[derive(Debug, thiserror::Error)]
pub enum CombineError {
    /// Nothing to merge.
    #[error("no documents to merge")]
    Empty,
    /// Held and request documents given together.
    #[error("{held} is a held-connection document and {request} a request document: merge documents of one kind")]
    Mixed {
        /// A held one.
        held: String,
        /// A request one.
        request: String,
    },
    /// Shards given with documents that are not shards.
    #[error("{shard} is shard {index} of a held plan and {other} is no shard: merge every shard of one plan, or unsharded runs")]
    Unsharded {
        /// A shard.
        shard: String,
        /// Its place, `i/n`.
        index: String,
        /// A document without a shard record.
        other: String,
    },
    /// The shards do not make one plan (different plans, cuts, a missing
    /// or repeated index).
    #[error(transparent)]
    Shards(crate::shard::combine::ShardMergeError),
    /// Two documents held connections to different targets.
    #[error("{name} held connections to {target}, {first} to {first_target}: merge runs against one target")]
    Targets {
        /// The odd one.
        name: String,
        /// Its target.
        target: String,
        /// The first document.
        first: String,
        /// The first document's target.
        first_target: String,
    },
    /// A document's sections or histograms would not merge.
    #[error("{name}: {why}")]
    Document {
        /// The document.
        name: String,
        /// Why.
        why: MergeError,
    },
    /// The merged counts do not balance: a document was edited or corrupt.
    #[error("the merged counts do not balance ({0}): a document was edited or is corrupt")]
    Unbalanced(iolab_model::attack::AccountingError),
}

/// Whether the documents are held-connection ones (`Ok(false)`: request
/// documents, for the request merge); held and request documents mixed
/// are refused.
impl iolab_model::HasExitKind for CombineError {
    /// The documents given do not merge: the user gives others.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

pub fn all_held(docs: &[(String, AttackResult)]) -> Result<bool, CombineError> {
    let held = docs.iter().find(|(_, d)| d.connections.is_some());
    let request = docs.iter().find(|(_, d)| d.connections.is_none());
    match (held, request) {
        (Some((h, _)), Some((r, _))) => Err(CombineError::Mixed {
            held: h.clone(),
            request: r.clone(),
        }),
        (held, _) => Ok(held.is_some()),
    }
}

/// Merge held documents `(name, document)` into one.
pub fn merge_documents(docs: &[(String, AttackResult)]) -> Result<AttackResult, CombineError> {
    let ((first, d0), _) = docs.split_first().ok_or(CombineError::Empty)?;
    if let Some((name, d)) = docs.iter().find(|(_, d)| d.target != d0.target) {
        return Err(CombineError::Targets {
            name: name.clone(),
            target: d.target.clone(),
            first: first.clone(),
            first_target: d0.target.clone(),
        });
    }
    let sharded = docs.iter().find(|(_, d)| d.shard.is_some());
    let plain = docs.iter().find(|(_, d)| d.shard.is_none());
    let merged = match (sharded, plain) {
        (Some((s, d)), Some((o, _))) => {
            return Err(CombineError::Unsharded {
                shard: s.clone(),
                index: d
                    .shard
                    .as_ref()
                    .map(|r| r.shard().to_string())
                    .unwrap_or_default(),
                other: o.clone(),
            })
        }
        (Some(_), None) => Some(merge_record(docs)?),
        (None, _) => None,
    };
    // Shards in index order, so the merge is the same whatever the order given.
    let mut order: Vec<&(String, AttackResult)> = docs.iter().collect();
    order.sort_by_key(|(_, d)| d.shard.as_ref().map_or(0, |r| r.index));
    let ((_, head), rest) = order.split_first().ok_or(CombineError::Empty)?;
    let mut out = head.clone();
    out.shard = None;
    let mut handshakes = new_histogram(HIGHEST_US);
    for (name, d) in &order {
        if let Some(b64) = &d.histogram {
            let h = decode(name, b64)?;
            add(&mut handshakes, &h);
        }
    }
    for (name, d) in rest {
        merge(&mut out, d).map_err(|why| CombineError::Document {
            name: name.clone(),
            why,
        })?;
        add_requests(&mut out, d);
    }
    out.latency_ms = latency_summary(&handshakes);
    out.histogram = encode(&handshakes);
    out.throughput_rps = Throughput::of(&out.driver, &out.requests, out.elapsed_s, out.interrupted);
    generator_lag(&mut out, &order)?;
    out.generator.peak_rss_kib = (order.iter())
        .map(|(_, d)| d.generator.peak_rss_kib)
        .sum::<Option<u64>>();
    out.merged = merged;
    out.check_accounting().map_err(CombineError::Unbalanced)?;
    Ok(out)
}

fn decode(name: &str, b64: &str) -> Result<Histogram<u64>, CombineError> {
    crate::shard::hist::decode_base64(b64).map_err(|e| CombineError::Document {
        name: name.into(),
        why: MergeError::Histogram(e.to_string()),
    })
}

/// The generators' send lag: from the shards' added lag histograms (exact);
/// without them (unsharded documents), the largest p99, which bounds the
/// p99 of all of them together (each has at most 1% of its sends above it).
fn generator_lag(
    out: &mut AttackResult,
    docs: &[&(String, AttackResult)],
) -> Result<(), CombineError> {
    let mut lag = new_histogram(HIGHEST_US);
    let mut exact = true;
    for (name, d) in docs {
        match d.shard.as_ref().and_then(|r| r.lag_histogram.as_deref()) {
            Some(b64) => add(&mut lag, &decode(name, b64)?),
            None => exact = false,
        }
    }
    let g = &mut out.generator;
    if exact && !lag.is_empty() {
        g.lag_p99_ms = p99_ms(&lag);
        g.lag_max_ms = lag.max() as f64 / 1e3;
    } else {
        let each = docs.iter().map(|(_, d)| &d.generator);
        g.lag_p99_ms = each.clone().map(|g| g.lag_p99_ms).fold(0.0, f64::max);
        g.lag_max_ms = each.map(|g| g.lag_max_ms).fold(0.0, f64::max);
    }
    g.saturated = docs.iter().any(|(_, d)| d.generator.saturated);
    Ok(())
}

/// The shards as the merged document lists them, once they are checked to
/// be every shard of one plan.
fn merge_record(docs: &[(String, AttackResult)]) -> Result<MergeRecord, CombineError> {
    let shards = check(docs, true).map_err(CombineError::Shards)?;
    let r0 = shards[0].2;
    let parts = (shards.iter())
        .map(|(_, d, r)| ShardPart {
            index: r.index,
            started_unix_ms: d.started_unix_ms,
            planned: d.requests.planned,
            sent: d.requests.sent,
            ok: d.requests.ok,
            cpu_s: d.generator.cpu_s,
            threads: d.generator.threads,
            saturated: d.generator.saturated,
            peak_rss_kib: d.generator.peak_rss_kib,
            send_lag_p99_ms: d.messages.as_ref().and_then(|m| m.send_lag_p99_ms),
            established: d.connections.as_ref().map(|c| c.established),
            ..ShardPart::default()
        })
        .collect();
    Ok(MergeRecord {
        shards: r0.count,
        plan_hash: r0.plan_hash.clone(),
        plan_requests: r0.plan_requests,
        start_at_unix_ms: r0.start_at_unix_ms,
        parts,
        ..MergeRecord::default()
    })
}

/// The handshakes' counts, classes and codes, the run's span and the
/// generators' cost, added.
fn add_requests(out: &mut AttackResult, d: &AttackResult) {
    let (q, r) = (&mut out.requests, &d.requests);
    q.planned += r.planned;
    q.sent += r.sent;
    q.not_sent += r.not_sent;
    q.ok += r.ok;
    q.non_2xx += r.non_2xx;
    out.errors.add(&d.errors);
    for (code, n) in &d.status_codes {
        *out.status_codes.entry(code.clone()).or_default() += n;
    }
    out.driver.max_connections += d.driver.max_connections;
    out.driver.rate = out.driver.rate.zip(d.driver.rate).map(|(a, b)| a + b);
    out.elapsed_s = out.elapsed_s.max(d.elapsed_s);
    out.started_unix_ms = out.started_unix_ms.min(d.started_unix_ms);
    out.generator.cpu_s += d.generator.cpu_s;
    out.generator.threads += d.generator.threads;
    out.interrupted |= d.interrupted;
}

/// The record a shard's document carries: its place, the plan's identity
/// and its generator's send-lag histogram (`None` when not sharded).
pub(crate) fn record(plan: &HeldPlan, lag: &Histogram<u64>) -> Option<ShardRecord> {
    let shard = plan.shard?;
    Some(ShardRecord {
        index: shard.index,
        count: shard.count,
        plan_hash: plan_hash(plan),
        interval_s: 0.0,
        plan_requests: Some(u64::from(plan.connections)),
        lag_histogram: encode(lag),
        ..ShardRecord::default()
    })
}

/// The identity of a held plan: `sha256:` and 16 hex digits of its JSON
/// without what is the process's own (its shard, the addresses it
/// connects from).
pub fn plan_hash(plan: &HeldPlan) -> String {
    let mut v = serde_json::to_value(plan).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        for k in ["shard", "source_addrs"] {
            map.remove(k);
        }
    }
    let digest = Sha256::digest(v.to_string().as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
