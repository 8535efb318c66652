//! `iolab merge` of held-connection documents: several generators (hosts,
//! or runs) that each held their own connections to one target, into the
//! one document of all of them. Counts add; the handshake and message
//! latencies are read from added HdrHistograms, never averaged; the
//! identities are checked on the result.

use iolab_model::attack::{AttackResult, Throughput};

use super::account::{merge, MergeError, HIGHEST_US};
use crate::merge::{add, latency_summary};
use crate::recorder::new_histogram;
use crate::shard::record::encode;

/// Why held documents could not be merged, naming the document.
#[derive(Debug, thiserror::Error)]
pub enum CombineError {
    /// Nothing to merge.
    #[error("no documents to merge")]
    Empty,
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
    Unbalanced(String),
}

/// Whether every document is a held-connection one (and there is one).
pub fn all_held(docs: &[(String, AttackResult)]) -> bool {
    !docs.is_empty() && docs.iter().all(|(_, d)| d.connections.is_some())
}

/// Merge held documents `(name, document)` into one.
pub fn merge_documents(docs: &[(String, AttackResult)]) -> Result<AttackResult, CombineError> {
    let ((first, d0), rest) = docs.split_first().ok_or(CombineError::Empty)?;
    let mut out = d0.clone();
    let mut handshakes = new_histogram(HIGHEST_US);
    for (name, d) in docs {
        if d.target != d0.target {
            return Err(CombineError::Targets {
                name: name.clone(),
                target: d.target.clone(),
                first: first.clone(),
                first_target: d0.target.clone(),
            });
        }
        let bad = |why: MergeError| CombineError::Document {
            name: name.clone(),
            why,
        };
        if let Some(b64) = &d.histogram {
            let h = crate::shard::hist::decode_base64(b64)
                .map_err(|e| bad(MergeError::Histogram(e.to_string())))?;
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
    out.check_accounting().map_err(CombineError::Unbalanced)?;
    Ok(out)
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
