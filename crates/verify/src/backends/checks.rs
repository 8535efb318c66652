//! One backend's three numbers, judged: [`BACKEND_REQUESTS`] requests of
//! one step each must all be answered ok, move the target's own
//! `iolab_backend_calls_total` by exactly that many, and move the backend's
//! counter by as many answers (exactly, or at least on a shared backend).

use std::time::Duration;

use iolab_model::steps::BackendKind;
use iolab_model::verify::Check;
use serde_json::Value;

use super::{check_name, Counted, BACKEND_REQUESTS};
use crate::client::Endpoint;
use crate::fault::{CounterFault, MetricsFault};
use crate::vectors::short_body;
use crate::{fail, pass, Budget};

/// Send the requests for one backend and judge the three numbers: the
/// answers, the target's own call counter and the backend's counter, each
/// read before and after.
pub(super) fn one(target: &Endpoint, budget: &Budget, b: &dyn Counted) -> Vec<Check> {
    let kind = b.kind();
    let series = format!("iolab_backend_calls_total{{kind=\"{kind}\"}}");
    let calls = |t: &Endpoint| -> Result<f64, MetricsFault> {
        let m = crate::metrics(t, budget)?;
        m.get(&series)
            .copied()
            .ok_or_else(|| MetricsFault::NoSeries(series.clone()))
    };
    let backend_before = b.count();
    let target_before = calls(target);
    let sent = send(target, budget, &format!("/work?steps={}", b.steps()));
    // A backend may book a call a moment after its answer left.
    std::thread::sleep(Duration::from_millis(100));
    let backend_after = b.count();
    let target_after = calls(target);
    vec![
        answers_check(kind, &sent),
        metrics_check(
            kind,
            &series,
            moved(target_before, target_after, |a, z| z - a),
        ),
        counted_check(
            b,
            moved(backend_before, backend_after, |a, z| z.saturating_sub(a)),
            sent.answered,
        ),
    ]
}

/// How far a counter moved between two reads, or the first read's error.
fn moved<T, E>(before: Result<T, E>, after: Result<T, E>, by: fn(T, T) -> T) -> Result<T, E> {
    Ok(by(before?, after?))
}

/// What [`BACKEND_REQUESTS`] GETs of one path got.
struct Sent {
    path: String,
    /// Answers 200 with `"ok": true`.
    answered: u64,
    /// The first other answer (status and body) or failure.
    first_bad: Option<String>,
}

/// Send [`BACKEND_REQUESTS`] GETs of `path`, one after another.
fn send(target: &Endpoint, budget: &Budget, path: &str) -> Sent {
    let mut sent = Sent {
        path: path.to_string(),
        answered: 0,
        first_bad: None,
    };
    for _ in 0..BACKEND_REQUESTS {
        match budget.get(target, path) {
            Ok(r) => {
                let ok = serde_json::from_str::<Value>(&r.body)
                    .ok()
                    .and_then(|j| j.get("ok").and_then(Value::as_bool));
                if r.status == 200 && ok == Some(true) {
                    sent.answered += 1;
                } else if sent.first_bad.is_none() {
                    sent.first_bad = Some(format!("{} {}", r.status, short_body(&r.body)));
                }
            }
            Err(e) => {
                sent.first_bad.get_or_insert(e.to_string());
            }
        }
    }
    sent
}

/// Every request answered 200 with `ok:true`.
fn answers_check(kind: BackendKind, sent: &Sent) -> Check {
    let (n, path, name) = (BACKEND_REQUESTS, &sent.path, check_name(kind, "answers"));
    match &sent.first_bad {
        None => pass(&name, format!("{n} x GET {path}: all 200 with ok:true")),
        Some(bad) => fail(
            &name,
            format!(
                "{} of {n} x GET {path} answered 200 ok; first other answer: {bad}",
                sent.answered
            ),
        ),
    }
}

/// The target's own call counter moved by exactly one a request (its
/// `moved` over the requests, or why it could not be read).
fn metrics_check(kind: BackendKind, series: &str, moved: Result<f64, MetricsFault>) -> Check {
    let (n, name) = (BACKEND_REQUESTS, check_name(kind, "metrics"));
    match moved {
        Ok(d) if d == n as f64 => pass(&name, format!("the target's {series} moved by {n}")),
        Ok(d) => fail(
            &name,
            format!("the target's {series} moved by {d}, but {n} requests with one {kind} step were sent"),
        ),
        Err(e) => fail(&name, e.to_string()),
    }
}

/// The backend's own counter moved by the answered requests: exactly, or at
/// least where other traffic may move it too.
fn counted_check(b: &dyn Counted, moved: Result<u64, CounterFault>, answered: u64) -> Check {
    let name = check_name(b.kind(), "counted");
    let moved = match moved {
        Ok(m) => m,
        Err(e) => return fail(&name, format!("cannot read the backend's counter: {e}")),
    };
    let want = answered;
    let (good, rule, more) = if b.exact() {
        (moved == want, "exactly", "")
    } else {
        (
            moved >= want,
            "at least",
            "; more means other traffic on a shared backend",
        )
    };
    let detail = format!(
        "{} moved by {moved} for {want} answers ok (needs {rule} {want}{more})",
        b.what()
    );
    if good && want > 0 {
        pass(&name, detail)
    } else if want == 0 {
        fail(
            &name,
            format!("no request answered ok, nothing to count ({detail})"),
        )
    } else {
        fail(
            &name,
            format!("the backend did less work than the target claims: {detail}"),
        )
    }
}
