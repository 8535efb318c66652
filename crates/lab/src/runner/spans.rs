//! Spans of a served run (a run whose spec asks for `spans = N`): the
//! target's sample, opened just before the measured load (`GET /spans?open`,
//! so the warm-up is not in it) and read just after (`GET /spans`), joined
//! with the load generator's view of the same first N requests; and the
//! simulation's prediction of the same sample. The `/spans` endpoint is the
//! optional part of the target contract (runtimes/README.md); a target that
//! does not offer it leaves the run's spans missing, with the reason.

use std::time::Duration;

use iolab_loadgen::{ErrorClass, RequestRow};
use iolab_model::attack::AttackResult;
use iolab_model::experiment::RunSpec;
use iolab_model::spans::{ms, ClientOutcome, ClientRequest, ClientView, RunSpans, Timeline};

use crate::targets::Launch;

/// Longest wait for `/spans` (the sample is read once, after the load).
const SPANS_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a run's spans are missing (the run's `spans.missing` says it).
#[derive(Debug, thiserror::Error)]
pub(super) enum SpansError {
    /// A runtime folder's target.
    #[error("runtime {0} records no spans (only the built-in models do; runtimes/README.md)")]
    Runtime(String),
    /// A custom command's target.
    #[error("a custom target command records no spans iolab can read")]
    Custom,
    /// A batch runtime's.
    #[error("batch runtime {0} records no spans")]
    BatchRuntime(String),
    /// An in-process batch that recorded none.
    #[error("the batch recorded no spans")]
    BatchNone,
    /// No attack to join them with.
    #[error("nothing was measured")]
    NotMeasured,
    /// `/spans` answered another status.
    #[error("GET {url} answered {status}")]
    Status {
        /// The URL asked.
        url: String,
        /// Its status.
        status: u16,
    },
    /// `/spans` could not be asked.
    #[error("GET {url}: {why}")]
    Get {
        /// The URL asked.
        url: String,
        /// The client's word.
        why: String,
    },
    /// `/spans` answered something else.
    #[error("GET {url}: not an iolab.spans/1 document: {why}")]
    NotDocument {
        /// The URL asked.
        url: String,
        /// The parser's word.
        why: serde_json::Error,
    },
}

/// Does this launch's target record spans? `Err` says why not.
pub(super) fn offered(launch: &Launch) -> Result<(), SpansError> {
    match launch {
        Launch::BuiltIn => Ok(()),
        Launch::Runtime(m) => Err(SpansError::Runtime(m.name.clone())),
        Launch::Custom(_) => Err(SpansError::Custom),
    }
}

/// Start a new sample on the target whose `/metrics` (and `/spans`) is at `base`.
pub(super) fn open(base: &str) -> Result<(), SpansError> {
    let url = format!("{base}/spans?open");
    match crate::http::get(&url, SPANS_TIMEOUT) {
        Ok(r) if r.status == 200 => Ok(()),
        Ok(r) => Err(SpansError::Status {
            url,
            status: r.status,
        }),
        Err(e) => Err(SpansError::Get {
            url,
            why: e.to_string(),
        }),
    }
}

/// The target's sample, with the client's view of the first requests of
/// `attack` (`rows`: every request, by intended send time).
pub(super) fn read(
    base: &str,
    attack: &AttackResult,
    rows: &[RequestRow],
    timeout: Duration,
) -> Result<Timeline, SpansError> {
    let url = format!("{base}/spans");
    let r = crate::http::get(&url, SPANS_TIMEOUT).map_err(|e| SpansError::Get {
        url: url.clone(),
        why: e.to_string(),
    })?;
    if r.status != 200 {
        return Err(SpansError::Status {
            url,
            status: r.status,
        });
    }
    let mut t: Timeline =
        serde_json::from_str(&r.body).map_err(|why| SpansError::NotDocument { url, why })?;
    let origin = t.origin_unix_ms.unwrap_or(attack.started_unix_ms as f64);
    // The generator's clock starts at `started_unix_ms` (whole ms: the two
    // views line up to within a millisecond).
    let shift = attack.started_unix_ms as f64 - origin;
    t.client = Some(client_view(rows, t.sample.size as usize, shift, timeout));
    Ok(t)
}

/// The first `n` requests by intended send time, in ms from the sample's
/// origin (`shift`: the generator's start minus the origin, ms).
pub(super) fn client_view(
    rows: &[RequestRow],
    n: usize,
    shift: f64,
    timeout: Duration,
) -> ClientView {
    let at = |ns: u64| ((ms(ns) + shift) * 1e3).round() / 1e3;
    let requests = rows
        .iter()
        .take(n)
        .map(|r| ClientRequest {
            sent_ms: at(r.intended_ns),
            done_ms: r.done_ns.map(at),
            outcome: match (r.sent_ns, r.error) {
                (None, _) => ClientOutcome::NotSent,
                (_, Some(ErrorClass::Timeout)) => ClientOutcome::Timeout,
                (_, Some(_)) => ClientOutcome::Error,
                (_, None) if (200..300).contains(&r.status) => ClientOutcome::Ok,
                (_, None) => ClientOutcome::Error,
            },
        })
        .collect();
    ClientView {
        timeout_ms: timeout.as_secs_f64() * 1e3,
        requests,
    }
}

/// The run's spans: measured (or why not) and predicted.
pub(super) fn record(
    measured: Result<Timeline, SpansError>,
    spec: &RunSpec,
    cores: u32,
) -> RunSpans {
    let (measured, missing) = match measured {
        Ok(t) => (Some(t), None),
        Err(e) => (None, Some(e.to_string())),
    };
    RunSpans {
        measured,
        predicted: crate::targets::predict_spans(spec, cores),
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_view_keeps_the_first_requests_and_their_outcomes() {
        let row = |i: u64, done: Option<u64>, status: u16, error| RequestRow {
            intended_ns: i * 1_000_000,
            sent_ns: done.map(|_| i * 1_000_000 + 50_000),
            done_ns: done,
            status,
            error,
        };
        let rows = [
            row(0, Some(5_000_000), 200, None),
            row(1, Some(101_000_000), 0, Some(ErrorClass::Timeout)),
            row(2, Some(9_000_000), 503, None),
            row(3, None, 0, None),
            row(4, Some(20_000_000), 200, None),
        ];
        let v = client_view(&rows, 4, 10.0, Duration::from_millis(100));
        assert_eq!(v.timeout_ms, 100.0);
        let outcomes: Vec<_> = v.requests.iter().map(|r| r.outcome).collect();
        assert_eq!(
            outcomes,
            [
                ClientOutcome::Ok,
                ClientOutcome::Timeout,
                ClientOutcome::Error,
                ClientOutcome::NotSent
            ]
        );
        assert_eq!(v.requests[0].sent_ms, 10.0);
        assert_eq!(v.requests[0].done_ms, Some(15.0));
        assert_eq!(v.requests[3].done_ms, None);
    }
}
