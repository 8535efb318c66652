//! Published numbers of a classic experiment beside ours.
//!
//! Shape of `plan.published` (documented in docs/report.md):
//! `{"source": "...", "rows": [{"run": "<run name>" | {<coordinates>},
//!   "metric": "success_ratio", "value": 0.126, "note": "..."}]}`.
//! Ours is compared unscaled: times divided by the time-scale, rates multiplied.

use iolab_model::runs::{RunRecord, RunsFile};
use serde_json::Value;

use crate::numbers::{count, ms, num, percent, rate, secs};

/// One published figure and ours.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The run as the source names it.
    pub run: String,
    /// The name of our run it matched (`None`: no run matched).
    pub measured: Option<String>,
    /// Metric name.
    pub metric: String,
    /// Published value, formatted.
    pub published: String,
    /// Ours (unscaled), formatted; `-` when not measured or unknown.
    pub ours: String,
    /// Ours / published.
    pub ratio: Option<f64>,
    /// The source's note.
    pub note: String,
}

/// The published block, if the plan has one in the documented shape.
pub fn rows(file: &RunsFile) -> Option<(String, Vec<Row>)> {
    let p = file.plan.published.as_ref()?;
    let source = p
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let rows = p
        .get("rows")?
        .as_array()?
        .iter()
        .filter_map(|r| {
            let metric = r.get("metric")?.as_str()?.to_string();
            let value = r.get("value")?.as_f64()?;
            let sel = r.get("run")?;
            let run = file.runs.iter().find(|x| matches(x, sel));
            let ours = run
                .and_then(|x| ours(x, &metric).or_else(|| super::waiting::ours(file, x, &metric)));
            Some(Row {
                measured: run.map(|x| x.name.clone()),
                run: match sel {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                published: fmt(&metric, value),
                ours: ours.map_or("-".into(), |v| fmt(&metric, v)),
                ratio: ours.filter(|_| value != 0.0).map(|o| o / value),
                metric,
                note: r
                    .get("note")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            })
        })
        .collect();
    Some((source, rows))
}

fn matches(run: &RunRecord, sel: &Value) -> bool {
    match sel {
        Value::String(s) => run.name == *s,
        Value::Object(m) => m.iter().all(|(k, v)| {
            run.coordinates
                .get(k)
                .is_some_and(|c| match (c.as_f64(), v.as_f64()) {
                    (Some(a), Some(b)) => a == b,
                    _ => c == v,
                })
        }),
        _ => false,
    }
}

/// Our figure for a metric, unscaled.
fn ours(run: &RunRecord, metric: &str) -> Option<f64> {
    let s = run.spec.scale;
    if let Some(b) = &run.batch {
        return match metric {
            "total_s" => Some(b.total_s / s),
            _ => None,
        };
    }
    let a = run.attack.as_ref()?;
    let e = &a.errors;
    Some(match metric {
        "success_ratio" => a.success_ratio(),
        "ok" => a.requests.ok as f64,
        "goodput_rps" => a.throughput_rps.goodput * s,
        "p50_ms" => a.latency_ms.p50 / s,
        "p99_ms" => a.latency_ms.p99 / s,
        "mean_ms" => a.latency_ms.mean / s,
        "max_ms" => a.latency_ms.max / s,
        "timeout" => e.timeout as f64,
        "refused" => e.refused as f64,
        "reset" => e.reset as f64,
        "addr_unavailable" => e.addr_unavailable as f64,
        _ => return None,
    })
}

fn fmt(metric: &str, v: f64) -> String {
    match metric {
        "success_ratio" => percent(v),
        "goodput_rps" => format!("{} req/s", rate(v)),
        m if m.ends_with("_ms") => ms(v),
        m if m.ends_with("_s") => secs(v),
        "ok" | "timeout" | "refused" | "reset" | "addr_unavailable" => count(v.round() as u64),
        _ => num(v, 3),
    }
}
