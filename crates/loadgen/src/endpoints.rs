//! Per-endpoint books of a replayed mix (`--replay`): each generator
//! thread counts every request's outcome and latency under its endpoint
//! ([`Book`]), the threads' books add after the run, and shards' documents
//! add again in `iolab merge` ([`combine`]): counts and HdrHistograms, so
//! a merge is exact, as for the whole run. A plan without a mix keeps no
//! books and writes no `endpoints` section.

use hdrhistogram::Histogram;
use iolab_model::attack::EndpointResult;
use iolab_model::attack::{ErrorClass, ErrorCounts};
use iolab_model::replay::ReplayMix;

use crate::merge::{add, latency_summary};
use crate::recorder::new_histogram;
use crate::shard::record::encode;

/// One endpoint's books on one thread.
#[derive(Debug, Clone)]
pub struct Book {
    sent: u64,
    ok: u64,
    non_2xx: u64,
    errors: ErrorCounts,
    latency: Histogram<u64>,
}

impl Book {
    fn new(highest_us: u64) -> Book {
        Book {
            sent: 0,
            ok: 0,
            non_2xx: 0,
            errors: ErrorCounts::default(),
            latency: new_histogram(highest_us),
        }
    }
}

/// The books of a plan's endpoints (none without a mix).
pub fn books(mix: Option<&ReplayMix>, highest_us: u64) -> Vec<Book> {
    let n = mix.map_or(0, |m| m.endpoints.len());
    (0..n).map(|_| Book::new(highest_us)).collect()
}

/// Count a finished request of endpoint `ep`: `latency_us` from its
/// intended send, `only_200` as the recorder reads a gRPC answer.
pub fn record(
    books: &mut [Book],
    ep: usize,
    latency_us: u64,
    outcome: Result<u16, ErrorClass>,
    only_200: bool,
) {
    let Some(b) = books.get_mut(ep) else { return };
    b.sent += 1;
    match outcome {
        Ok(code) => {
            b.latency.saturating_record(latency_us.max(1));
            let ok = match only_200 {
                true => code == 200,
                false => (200..300).contains(&code),
            };
            match ok {
                true => b.ok += 1,
                false => b.non_2xx += 1,
            }
        }
        Err(class) => b.errors.record(class),
    }
}

/// Add a thread's books into the run's.
pub fn absorb(into: &mut Vec<Book>, from: Vec<Book>) {
    if into.is_empty() {
        *into = from;
        return;
    }
    for (a, b) in into.iter_mut().zip(&from) {
        a.sent += b.sent;
        a.ok += b.ok;
        a.non_2xx += b.non_2xx;
        a.errors.add(&b.errors);
        add(&mut a.latency, &b.latency);
    }
}

/// The `endpoints` section of a run's document.
pub fn results(mix: Option<&ReplayMix>, books: &[Book]) -> Vec<EndpointResult> {
    let Some(mix) = mix else { return Vec::new() };
    (mix.endpoints.iter().zip(books))
        .map(|(k, b)| EndpointResult {
            method: k.method.clone(),
            template: k.template.clone(),
            share: k.share,
            sent: b.sent,
            ok: b.ok,
            non_2xx: b.non_2xx,
            errors: b.errors.clone(),
            latency_ms: latency_summary(&b.latency),
            histogram: encode(&b.latency),
            recorded_service_ms: k.recorded_service_ms,
        })
        .collect()
}

/// Shards' `endpoints` sections that do not add.
#[derive(Debug, thiserror::Error)]
pub enum EndpointsError {
    /// Different endpoints (not one replay).
    #[error(
        "{name} has other endpoints than {name0}: shards of one replay have the same endpoints"
    )]
    Other {
        /// A shard.
        name: String,
        /// The first shard.
        name0: String,
    },
    /// An endpoint's histogram does not decode.
    #[error("{name}: endpoint {method} {template}: histogram {why}")]
    Histogram {
        /// The shard.
        name: String,
        /// The endpoint's method.
        method: String,
        /// Its template.
        template: String,
        /// Why.
        why: crate::shard::hist::HistError,
    },
    /// An endpoint's sums do not balance (its own accounting says how).
    #[error(transparent)]
    Accounting(iolab_model::attack::AccountingError),
}

/// Shards' `endpoints` sections added into one: the same endpoints in the
/// same order (one plan), counts added, histograms added and read again.
pub fn combine(docs: &[(&str, &[EndpointResult])]) -> Result<Vec<EndpointResult>, EndpointsError> {
    let Some((name0, first)) = docs.first() else {
        return Ok(Vec::new());
    };
    let mut out: Vec<EndpointResult> = first.to_vec();
    let mut hists = Vec::with_capacity(out.len());
    for e in first.iter() {
        hists.push(decode(name0, e)?);
    }
    for (name, eps) in &docs[1..] {
        let same = eps.len() == out.len()
            && eps
                .iter()
                .zip(&out)
                .all(|(a, b)| a.method == b.method && a.template == b.template);
        if !same {
            return Err(EndpointsError::Other {
                name: name.to_string(),
                name0: name0.to_string(),
            });
        }
        for ((into, h), e) in out.iter_mut().zip(&mut hists).zip(eps.iter()) {
            into.sent += e.sent;
            into.ok += e.ok;
            into.non_2xx += e.non_2xx;
            into.errors.add(&e.errors);
            add(h, &decode(name, e)?);
        }
    }
    for (e, h) in out.iter_mut().zip(&hists) {
        e.latency_ms = latency_summary(h);
        e.histogram = encode(h);
        e.check_accounting().map_err(EndpointsError::Accounting)?;
    }
    Ok(out)
}

fn decode(name: &str, e: &EndpointResult) -> Result<Histogram<u64>, EndpointsError> {
    match &e.histogram {
        Some(b64) => {
            crate::shard::hist::decode_base64(b64).map_err(|why| EndpointsError::Histogram {
                name: name.to_string(),
                method: e.method.clone(),
                template: e.template.clone(),
                why,
            })
        }
        None => Ok(Histogram::new(3).expect("3 significant digits")),
    }
}
