//! What could make a run's numbers wrong, each in one short line, only when
//! it matters: a generator whose lateness could change the figures (with
//! its cause), a target that stopped answering its `/metrics` (and from
//! when), a backend that counted fewer calls than the answers claim, a
//! foreign target measured without the contract check.

use iolab_model::attack::AttackResult;
use iolab_model::experiment::Work;
use iolab_model::runs::RunRecord;

use crate::numbers::{count, ms, percent, secs};

/// Share of a run's samples a target may miss before it is said.
const METRICS_MISSING: f64 = 0.05;

/// Why a load's figures may be the generator's rather than the target's
/// (its verdict, `None` when it kept up): one sentence for every document
/// that carries a load.
pub fn generator_doubt(a: &AttackResult) -> Option<String> {
    let v = a.generator_verdict();
    v.flagged.then(|| {
        format!(
            "generator: {}; send lag p99 {} is {} of the median latency, so the figures may be the generator's",
            v.cause.unwrap_or_default(),
            ms(a.generator.lag_p99_ms),
            percent(v.lag_share)
        )
    })
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
