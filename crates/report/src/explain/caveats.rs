//! What could make a run's numbers wrong, each in one short line, only when
//! it matters: a generator whose lateness could change the figures (with
//! its cause), a target that stopped answering its `/metrics` (and from
//! when), a backend that counted fewer calls than the answers claim, a
//! foreign target measured without the contract check.

use iolab_model::attack::AttackResult;
use iolab_model::experiment::Work;
use iolab_model::runs::{RunRecord, RunsFile};

use crate::numbers::{count, ms, percent, secs};

/// Share of a run's samples a target may miss before it is said.
const METRICS_MISSING: f64 = 0.05;

/// Why a load's figures may be the generator's rather than the target's
/// (its verdict, `None` when it kept up): one sentence for every document
/// that carries a load, its words scaled to the verdict's weight.
pub fn generator_doubt(a: &AttackResult) -> Option<String> {
    let v = a.generator_verdict();
    if !v.flagged {
        return None;
    }
    let lag = ms(a.generator.lag_p99_ms);
    let consequence = if v.saturated {
        "so the figures may be the generator's".to_string()
    } else {
        format!("so the latencies may include up to {lag} of the generator's own lateness")
    };
    Some(format!(
        "generator: {}; send lag p99 {lag} is {} of the median latency, {consequence}",
        v.cause.unwrap_or_default(),
        percent(v.lag_share)
    ))
}

/// The caveats of a run (empty when nothing casts doubt on it).
pub fn caveats(run: &RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    if let Work::Http(h) = &run.spec.work {
        if h.foreign.is_some() {
            out.push(iolab_model::request::CONTRACT_SKIPPED.to_string());
        }
    }
    out.extend(run.attack.as_ref().and_then(generator_doubt));
    out.extend(metrics(run));
    out.extend(
        run.backend_shortfall()
            .into_iter()
            .map(|s| format!("backend: {s}")),
    );
    out
}

/// The target's `/metrics` went unanswered in more than a few samples.
fn metrics(run: &RunRecord) -> Option<String> {
    let t = &run.telemetry;
    let answered = t.metrics_answered()?;
    if answered >= 1.0 - METRICS_MISSING {
        return None;
    }
    let n = t.measured().count() as u64;
    let missing = n - (answered * n as f64).round() as u64;
    let first = t.measured().next().map_or(0.0, |p| p.t_s);
    let when = match t.metrics_silent_from() {
        _ if answered == 0.0 => "never answered its /metrics while it was measured".to_string(),
        Some(s) if s > first => format!("stopped answering its /metrics at {}", secs(s)),
        _ => "did not always answer its /metrics".into(),
    };
    Some(format!(
        "the target {when} ({} of {} samples missing): what it counts itself is not stated",
        count(missing),
        count(n)
    ))
}

/// Run `i` of `file` against a service iolab did not start (a `url`), with
/// no `/metrics` to wait on, after a run against the same service that
/// abandoned requests (timeouts): the service may still have been serving
/// them when this run began (issue 35: a gunicorn run measured half its
/// capacity this way, with no word of it).
pub fn after_overload(file: &RunsFile, i: usize) -> Option<String> {
    let foreign = |r: &RunRecord| match &r.spec.work {
        Work::Http(h) => h.foreign.as_deref().cloned(),
        Work::Batch(_) => None,
    };
    let me = foreign(file.runs.get(i)?)?;
    let url = me.url.as_ref()?;
    if me.metrics.is_some() {
        return None;
    }
    let (prev, abandoned) = file.runs[..i].iter().rev().find_map(|r| {
        let f = foreign(r)?;
        (f.url.as_ref() == Some(url))
            .then(|| (r, r.attack.as_ref().map_or(0, |a| a.errors.timeout)))
    })?;
    (abandoned > 0).then(|| {
        format!(
            "the run before it against the same service ({}) ended with {} requests timed out, which the service may still have been serving when this run began (no `metrics` configured to wait until it settled)",
            prev.name,
            count(abandoned)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs of the saved showdown made into runs against one service
    /// iolab did not start (`url`), the first with `timeouts` abandoned.
    fn file(timeouts: u64, metrics: Option<&str>) -> RunsFile {
        let text = include_str!("../../tests/fixtures/showdown.json");
        let mut f: RunsFile = serde_json::from_str(text).unwrap();
        f.runs.truncate(2);
        let spec: iolab_model::request::ForeignSpec = serde_json::from_value(serde_json::json!({
            "url": "http://127.0.0.1:8080",
            "request": {"method": "GET", "url": "/api"},
            "metrics": metrics,
        }))
        .unwrap();
        for r in &mut f.runs {
            let Work::Http(h) = &mut r.spec.work else {
                panic!("an HTTP run")
            };
            h.foreign = Some(Box::new(spec.clone()));
        }
        f.runs[0].attack.as_mut().unwrap().errors.timeout = timeouts;
        f
    }

    /// Issue 35: after an overload, a run against a service still clearing
    /// the abandoned requests measured half its capacity with no warning.
    #[test]
    fn r35_a_run_after_abandoned_requests_at_the_same_service_is_warned() {
        let c = after_overload(&file(7, None), 1).expect("a caveat");
        assert!(c.contains("ended with 7 requests timed out"), "{c}");
        assert!(after_overload(&file(7, None), 0).is_none(), "no run before");
        assert!(
            after_overload(&file(0, None), 1).is_none(),
            "nothing abandoned"
        );
        assert!(
            after_overload(&file(7, Some("/metrics")), 1).is_none(),
            "it settled on /metrics"
        );
    }
}
