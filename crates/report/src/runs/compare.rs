//! The same model on another runtime beside its stand-in: within one group
//! (the same load), each run of a runtime folder (`play`, `scala`, `node`,
//! ...) set against the built-in (Rust) run of the same model, in one line
//! from the two runs' own numbers, so a reader sees where the real runtime
//! differs from the stand-in and what came with it (threads, memory, CPU).

use iolab_model::runs::{RunRecord, RunsFile};

use super::groups::Group;
use crate::numbers::{count, mib, ms, percent, rate, secs};
use crate::summary::label;

/// One line per (runtime run, stand-in) pair of the group.
pub fn lines(file: &RunsFile, g: &Group) -> Vec<String> {
    let runs: Vec<&RunRecord> = g.runs.iter().map(|&i| &file.runs[i]).collect();
    let mut out = Vec::new();
    for r in runs.iter().filter(|r| !r.spec.runtime.is_rust()) {
        // The built-in run of the same model, with the same knobs where there is one.
        let candidates = runs
            .iter()
            .filter(|s| s.spec.runtime.is_rust() && s.model == r.model && s.outcome.is_completed());
        let same_knobs = |s: &&&RunRecord| {
            s.spec
                .params
                .set_knobs()
                .filter(|(k, _)| k.name.ends_with("_pool"))
                .collect::<Vec<_>>()
                == r.spec
                    .params
                    .set_knobs()
                    .filter(|(k, _)| k.name.ends_with("_pool"))
                    .collect::<Vec<_>>()
        };
        let stand_in = candidates
            .clone()
            .find(same_knobs)
            .or(candidates.clone().next());
        if let (Some(s), true) = (stand_in, r.outcome.is_completed()) {
            if let Some(line) = line(r, s) {
                out.push(line);
            }
        }
    }
    out
}

fn line(r: &RunRecord, s: &RunRecord) -> Option<String> {
    let head = format!(
        "{} on {} vs the built-in {} ({})",
        label(r),
        r.spec.runtime,
        label(s),
        r.model
    );
    let figures = match (&r.attack, &s.attack, &r.batch, &s.batch) {
        (Some(a), Some(b), _, _) => format!(
            "{} vs {} ok, goodput {} vs {} req/s, p50 {} vs {}",
            percent(a.success_ratio()),
            percent(b.success_ratio()),
            rate(a.throughput_rps.goodput),
            rate(b.throughput_rps.goodput),
            ms(a.latency_ms.p50),
            ms(b.latency_ms.p50)
        ),
        (_, _, Some(a), Some(b)) => format!(
            "total {} vs {} ({:.2}x), peak threads {} vs {}",
            secs(a.total_s),
            secs(b.total_s),
            a.total_s / b.total_s.max(1e-9),
            count(a.peak_threads),
            count(b.peak_threads)
        ),
        _ => return None,
    };
    let mut costs = Vec::new();
    let (tr, ts) = (&r.telemetry, &s.telemetry);
    if let (Some(a), Some(b)) = (tr.peak_threads(), ts.peak_threads()) {
        costs.push(format!("threads {} vs {}", count(a), count(b)));
    }
    if let (Some(a), Some(b)) = (tr.peak_rss_mb(), ts.peak_rss_mb()) {
        costs.push(format!("RSS {} vs {}", mib(a), mib(b)));
    }
    if let (Some(a), Some(b)) = (tr.cpu_s(), ts.cpu_s()) {
        costs.push(format!("CPU {} vs {}", secs(a), secs(b)));
    }
    let costs = if costs.is_empty() {
        String::new()
    } else {
        format!("; {}", costs.join(", "))
    };
    Some(format!("{head}: {figures}{costs}"))
}
