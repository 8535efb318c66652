//! The target-contract gate run before any measurement (`iolab verify`), in
//! the spirit of TechEmpower's verify mode.
//!
//! [`verify`] sends the shared contract vectors ([`vectors`], embedded from
//! `vectors/contract.json`) one at a time to an idle target and judges status,
//! content type, body and timing of each answer; then it reads `/metrics`
//! ([`prometheus`]) and checks that its counters moved by exactly what was
//! sent. A target that cannot be reached at all is a [`VerifyError`]; every
//! other fault is a failed [`Check`] in the report.
//!
//! With backend addresses, [`verify_backends`] ([`backends`]) also checks that
//! the target really calls PostgreSQL, memcached and the delay service: the
//! backends' own counters must move with the requests sent.

pub mod backends;
pub mod client;
pub mod fault;
pub mod held;
pub mod prometheus;
pub mod vectors;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_model::verify::{Check, VerifyReport};
use serde_json::Value;

use crate::client::{Endpoint, HttpResponse, Limits};
use crate::fault::{GetFault, MetricsFault, NotRun};
use crate::prometheus::Samples;
use crate::vectors::{short_body, Case};

pub use crate::backends::{verify_backends, BACKEND_REQUESTS};
pub use crate::held::verify_held;

/// How to verify.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// The model the target must name in its answers; `None` learns it from
    /// the first `/work` answer.
    pub model: Option<String>,
    /// Longest wait for one answer.
    pub timeout: Duration,
    /// Longest time for the whole verify (every check, backends included):
    /// a target that never answers fails in this long, not in checks x
    /// timeout. Checks left when it passes fail as not run.
    pub deadline: Duration,
    /// Once set (Ctrl-C), the answer being read is dropped within 100 ms
    /// and the checks left fail as interrupted.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Ask over HTTP/2 with prior knowledge (h2c): the same checks, each a
    /// stream of its own connection.
    pub http2: bool,
}

/// Default of [`VerifyOptions::deadline`]: the contract's checks take well
/// under a second on a target that answers.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            model: None,
            timeout: Duration::from_secs(10),
            deadline: DEFAULT_DEADLINE,
            cancel: None,
            http2: false,
        }
    }
}

/// What is left of a verify's time: each GET gets the per-answer timeout,
/// or less near the overall deadline, or nothing once past it or cancelled.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    end: Instant,
    timeout: Duration,
    deadline: Duration,
    cancel: Option<Arc<AtomicBool>>,
}

impl Budget {
    pub(crate) fn start(opts: &VerifyOptions) -> Budget {
        Budget {
            end: Instant::now() + opts.deadline,
            timeout: opts.timeout,
            deadline: opts.deadline,
            cancel: opts.cancel.clone(),
        }
    }

    /// The limits of the next GET, or why there is no time for it.
    pub(crate) fn next(&self) -> Result<Limits, NotRun> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(NotRun::Interrupted);
        }
        let left = self.end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NotRun::Deadline(self.deadline));
        }
        Ok(Limits {
            cancel: self.cancel.clone(),
            ..Limits::within(self.timeout.min(left))
        })
    }

    /// `GET path` within the budget.
    pub(crate) fn get(&self, target: &Endpoint, path: &str) -> Result<HttpResponse, GetFault> {
        let limits = self.next()?;
        target
            .get_with(path, &limits)
            .map_err(|why| GetFault::NoAnswer {
                path: path.to_string(),
                why,
            })
    }
}

/// The target cannot be verified at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The URL is not one we can use.
    #[error("{0}")]
    BadUrl(String),
    /// Nothing answers there.
    #[error("cannot connect to {url}: {detail} (is the target running? start one with `iolab serve --model pool`)")]
    Unreachable {
        /// The URL given.
        url: String,
        /// The OS error.
        detail: String,
    },
}

impl iolab_model::HasExitKind for VerifyError {
    /// The URL, or a target that is not there: the user's to fix before
    /// anything is checked (a check that fails is a report, exit 1).
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

/// Series `/metrics` must have.
pub const REQUIRED_SERIES: [&str; 6] = [
    "iolab_requests_in_flight",
    "iolab_requests_queued",
    "iolab_requests_completed_total",
    "iolab_requests_rejected_total",
    "iolab_threads",
    "iolab_backend_calls_total{kind=\"sleep\"}",
];

/// Run every check against the target at `base_url` (blocking, one request
/// at a time; the target should be otherwise idle).
pub fn verify(base_url: &str, opts: &VerifyOptions) -> Result<VerifyReport, VerifyError> {
    let mut target = Endpoint::parse(base_url)?;
    target.http2 = opts.http2;
    std::net::TcpStream::connect_timeout(&target.addr, opts.timeout.min(Duration::from_secs(5)))
        .map_err(|e| VerifyError::Unreachable {
            url: base_url.to_string(),
            detail: e.to_string(),
        })?;
    let budget = Budget::start(opts);
    let mut checks = Vec::new();
    let before = metrics(&target, &budget);
    let mut model = opts.model.clone();
    let mut work_sent = 0u64;
    let mut sleep_calls = 0u64;
    for case in vectors::contract().cases {
        if case.path.starts_with("/work") {
            work_sent += 1;
            sleep_calls += sleep_leaves(&case.path);
        }
        let check = match budget.get(&target, &case.path) {
            Err(e) => fail(&case.name, e.to_string()),
            Ok(resp) => {
                if model.is_none() && case.path.starts_with("/work") && resp.status == 200 {
                    model = body_field(&resp, "model");
                }
                judge(&case, &resp, model.as_deref())
            }
        };
        checks.push(check);
    }
    let after = metrics(&target, &budget);
    checks.extend(metric_checks(&before, &after, work_sent, sleep_calls));
    Ok(VerifyReport {
        target: base_url.to_string(),
        protocol: opts.http2.then(|| "h2c".to_string()),
        checks,
    })
}

fn pass(name: &str, detail: String) -> Check {
    Check {
        name: name.to_string(),
        passed: true,
        detail,
    }
}

fn fail(name: &str, detail: String) -> Check {
    Check {
        name: name.to_string(),
        passed: false,
        detail,
    }
}

fn body_field(resp: &HttpResponse, field: &str) -> Option<String> {
    serde_json::from_str::<Value>(&resp.body)
        .ok()?
        .get(field)?
        .as_str()
        .map(str::to_string)
}

fn judge(case: &Case, resp: &HttpResponse, model: Option<&str>) -> Check {
    let name = case.name.as_str();
    let Some(needs) = &case.needs else {
        return match &case.expect {
            Some(e) => match e.judge(resp, model) {
                Ok(d) => pass(name, d),
                Err(r) => fail(name, r.to_string()),
            },
            None => fail(name, "vector has no expectation".into()),
        };
    };
    let unconfigured = case.unconfigured.as_ref().map(|u| u.judge(resp, model));
    if let Some(Ok(d)) = unconfigured {
        return pass(
            name,
            format!("{d} (backend '{needs}' not configured on the target)"),
        );
    }
    match &case.expect {
        Some(e) => match e.judge(resp, model) {
            Ok(d) => pass(name, d),
            Err(r) => fail(
                name,
                format!("{r} (nor is it the 'backend not configured' answer)"),
            ),
        },
        None => {
            // Configured but nothing fixed to expect (e.g. a memcached key
            // that may be absent): any answer in the contract's shape.
            let json: Option<Value> = serde_json::from_str(&resp.body).ok();
            let ok = json
                .as_ref()
                .and_then(|j| j.get("ok"))
                .and_then(Value::as_bool);
            match (resp.status, ok) {
                (200, Some(true)) => pass(name, format!("200 with backend '{needs}'")),
                (s, Some(false)) if s >= 400 => pass(
                    name,
                    format!("{s} from backend '{needs}': {}", short_body(&resp.body)),
                ),
                _ => fail(
                    name,
                    format!(
                        "not a contract answer: {} {}",
                        resp.status,
                        short_body(&resp.body)
                    ),
                ),
            }
        }
    }
}

fn metrics(target: &Endpoint, budget: &Budget) -> Result<Samples, MetricsFault> {
    let resp = budget.get(target, "/metrics")?;
    if resp.status != 200 {
        return Err(MetricsFault::Status(resp.status));
    }
    let samples = prometheus::parse(&resp.body)?;
    let missing: Vec<&str> = REQUIRED_SERIES
        .iter()
        .copied()
        .filter(|s| !samples.contains_key(*s))
        .collect();
    if !missing.is_empty() {
        return Err(MetricsFault::Missing(missing));
    }
    Ok(samples)
}

fn metric_checks(
    before: &Result<Samples, MetricsFault>,
    after: &Result<Samples, MetricsFault>,
    work: u64,
    sleeps: u64,
) -> Vec<Check> {
    let (before, after) = match (before, after) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => {
            return vec![
                fail("metrics-parse", e.to_string()),
                fail("metrics-count-work", "cannot read /metrics".into()),
            ]
        }
    };
    let delta = |series: &str| after[series] - before[series];
    let mut checks = vec![pass(
        "metrics-parse",
        format!("{} series, all required present", after.len()),
    )];
    let completed = delta("iolab_requests_completed_total");
    checks.push(if completed == work as f64 {
        pass(
            "metrics-count-work",
            format!("completed_total moved by {work}, the /work requests sent"),
        )
    } else {
        fail(
            "metrics-count-work",
            format!("completed_total moved by {completed}, but {work} /work requests were sent"),
        )
    });
    let calls = delta("iolab_backend_calls_total{kind=\"sleep\"}");
    checks.push(if calls == sleeps as f64 {
        pass("metrics-count-sleep-calls", format!("backend_calls_total{{kind=\"sleep\"}} moved by {sleeps}"))
    } else {
        fail("metrics-count-sleep-calls", format!("backend_calls_total{{kind=\"sleep\"}} moved by {calls}, but the workloads sent had {sleeps} sleep steps"))
    });
    let idle = after["iolab_requests_in_flight"];
    checks.push(if idle == 0.0 {
        pass(
            "metrics-idle-in-flight",
            "in_flight is 0 once every answer is in".into(),
        )
    } else {
        fail(
            "metrics-idle-in-flight",
            format!("in_flight is {idle} with no request outstanding"),
        )
    });
    checks
}

/// Sleep steps in a `/work?steps=...` path that parses (0 otherwise).
fn sleep_leaves(path: &str) -> u64 {
    let Some(raw) = path.split_once("steps=").map(|(_, s)| s) else {
        return 0;
    };
    let decoded = percent_decode(raw);
    iolab_model::steps::parse(&decoded).map_or(0, |s| {
        s.io_calls()
            .iter()
            .filter(|c| c.kind() == iolab_model::steps::BackendKind::Sleep)
            .count() as u64
    })
}

fn percent_decode(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = (b[i] == b'%')
            .then(|| b.get(i + 1..i + 3))
            .flatten()
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_sleep_leaves() {
        assert_eq!(
            super::sleep_leaves("/work?steps=par%28sleep%3A10%2Csleep%3A10%29"),
            2
        );
        assert_eq!(super::sleep_leaves("/work?steps=nap:3"), 0);
        assert_eq!(super::sleep_leaves("/health"), 0);
    }
}
