//! A replayed mix in a capacity search: per endpoint, a table of what it
//! got at each step (its share of the step's requests, count, p50/p99,
//! errors, its own verdict when the objective is per endpoint), the
//! endpoint that failed first in one sentence from its figures, and where
//! each endpoint waited at the knee. Absent when the search replayed
//! nothing.

use iolab_model::attack::EndpointResult;
use iolab_model::capacity::{
    Clause, EndpointResource, EndpointSplit, EndpointWait, FirstFail, Miss, NamedBy, Resource,
    Search, StepRecord,
};

use crate::grid::Grid;
use crate::numbers::{count, ms, num, percent, rate};

/// `GET /search fails first: p99 412ms > 200ms at 180/s (its share 20%)`.
pub fn first_line(f: &FirstFail) -> String {
    format!(
        "{} {} fails first: {} at {}/s (its share {})",
        f.method,
        f.template,
        missed(&f.miss),
        rate(f.rate_rps),
        percent(f.share)
    )
}

/// Where the endpoints waited at the knee, and what it says of the
/// binding resource the fit named for the whole mix (`binding`).
pub fn split_line(x: &EndpointSplit, binding: Option<&str>) -> String {
    let waits: Vec<String> = (x.endpoints.iter())
        .map(|w| format!("{} {} +{}", w.method, w.template, ms(w.queued_ms)))
        .collect();
    let head = format!(
        "per endpoint: from {}/s to {}/s the median queued {}",
        rate(x.low_rps),
        rate(x.failed_rps),
        waits.join(", ")
    );
    match (x.shared, binding) {
        (true, Some(b)) => {
            format!("{head}: one queue, so the binding resource ({b}) binds each of them")
        }
        (true, None) => format!("{head}: one queue binds each of them"),
        (false, _) => format!("{head}: not one queue; {}", alone(x, binding)),
    }
}

/// What the endpoints that queued alone wait on, from what they held.
fn alone(x: &EndpointSplit, binding: Option<&str>) -> String {
    let queued: Vec<&EndpointWait> = x.endpoints.iter().filter(|w| x.queued(w)).collect();
    let names: Vec<String> = (queued.iter())
        .map(|w| format!("{} {}", w.method, w.template))
        .collect();
    let held: Option<f64> = queued.iter().map(|w| w.held).sum();
    let them = if queued.len() == 1 { "it" } else { "them" };
    // The CPU named from the probe is said with the mix's limits.
    let on = (queued.iter())
        .find_map(|w| w.waits_on.as_ref())
        .filter(|r| r.by != NamedBy::Cpu);
    match (held, on) {
        (Some(h), Some(r)) => format!(
            "{} queued: at the capacity {} held {} at once ({}), as many as {}, which binds {them}; the others did not queue",
            names.join(" and "),
            if queued.len() == 1 { "it" } else { "they" },
            num(h, 2),
            held_how(&queued),
            resource(r)
        ),
        (Some(h), None) => format!(
            "{} queued, holding {} at once at the capacity ({}): no resource in sight has that size{}",
            names.join(" and "),
            num(h, 2),
            held_how(&queued),
            binding.map_or(String::new(), |b| format!(" (the fit named {b} for the whole mix)"))
        ),
        (None, _) => format!(
            "{} queued longest and wait on a resource of their own{}",
            names.join(" and "),
            binding.map_or(String::new(), |b| format!(", which the one named for the whole mix ({b}) may not be"))
        ),
    }
}

/// `share 30% x 51.2ms each` per endpoint, joined.
fn held_how(queued: &[&EndpointWait]) -> String {
    let each: Vec<String> = (queued.iter())
        .map(|w| format!("its share {} x {} each", percent(w.share), ms(w.service_ms)))
        .collect();
    each.join("; ")
}

/// `the 10 connections to 127.0.0.1:5432`, `threads (10)`.
fn resource(r: &EndpointResource) -> String {
    match (r.resource, r.size, &r.name) {
        (Resource::Pool, Some(n), Some(name)) => format!("the {} connections to {name}", num(n, 3)),
        (kind, Some(n), _) => format!("{kind} ({})", num(n, 3)),
        (kind, None, _) => kind.to_string(),
    }
}

/// A miss from its figures: `p99 412ms > 200ms`, `success 97.2% < 99.9%`.
fn missed(m: &Miss) -> String {
    match (m.clause, m.observed) {
        (
            Clause::Latency {
                percentile,
                below_ms,
            },
            Some(v),
        ) => format!("p{} {} > {}", num(percentile, 3), ms(v), ms(below_ms)),
        (
            Clause::Latency {
                percentile,
                below_ms,
            },
            None,
        ) => format!(
            "fewer than {}% of its requests answered (p{} < {})",
            num(percentile, 3),
            num(percentile, 3),
            ms(below_ms)
        ),
        (Clause::Success { at_least }, Some(v)) => {
            format!("success {} < {}", percent(v), percent(at_least))
        }
        (Clause::Success { .. }, None) => m.text.clone(),
    }
}

/// The endpoints of a search, in the first step's order.
fn names(s: &Search) -> Vec<(String, String, f64)> {
    (s.steps.iter().find(|st| !st.attack.endpoints.is_empty()))
        .map(|st| {
            (st.attack.endpoints.iter())
                .map(|e| (e.method.clone(), e.template.clone(), e.share))
                .collect()
        })
        .unwrap_or_default()
}

fn of<'a>(st: &'a StepRecord, method: &str, template: &str) -> Option<&'a EndpointResult> {
    (st.attack.endpoints.iter()).find(|e| e.method == method && e.template == template)
}

/// One endpoint's table: a row per step.
fn grid(s: &Search, method: &str, template: &str) -> Grid {
    let mut g = Grid::new(
        &[
            "#", "rate/s", "share", "sent", "ok", "errors", "p50", "p99", "verdict",
        ],
        &[true, true, true, true, true, true, true, true, false],
    );
    for (i, st) in s.steps.iter().enumerate() {
        let Some(e) = of(st, method, template) else {
            continue;
        };
        let all: u64 = st.attack.endpoints.iter().map(|x| x.sent).sum();
        let answered = e.ok + e.non_2xx > 0;
        let lat = |v: f64| if answered { ms(v) } else { "-".into() };
        let verdict = (st.endpoints.iter())
            .find(|v| v.method == method && v.template == template)
            .map_or("-".to_string(), |v| match &v.miss {
                None => "met".into(),
                Some(m) => format!("missed: {}", missed(m)),
            });
        g.rows.push(vec![
            (i + 1).to_string(),
            rate(st.rate_rps),
            if all == 0 {
                "-".into()
            } else {
                percent(e.sent as f64 / all as f64)
            },
            count(e.sent),
            count(e.ok),
            count(e.non_2xx + e.errors.total()),
            lat(e.latency_ms.p50),
            lat(e.latency_ms.p99),
            verdict,
        ]);
    }
    g
}

/// Each endpoint's label and table (none without a replay).
pub fn tables(s: &Search) -> Vec<(String, Grid)> {
    names(s)
        .into_iter()
        .map(|(m, t, share)| {
            (
                format!("{m} {t} (recorded share {})", percent(share)),
                grid(s, &m, &t),
            )
        })
        .collect()
}

/// The text: one table per endpoint under a label.
pub fn text(s: &Search) -> Vec<String> {
    let t = tables(s);
    if t.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        String::new(),
        "per endpoint (latency from the intended send; errors: non-2xx and failures):".into(),
    ];
    for (label, g) in t {
        out.push(String::new());
        out.push(label);
        out.extend(g.text());
    }
    out
}

/// Markdown: one table per endpoint under a heading.
pub fn markdown(s: &Search) -> Vec<String> {
    let mut out = Vec::new();
    for (label, g) in tables(s) {
        out.push(String::new());
        out.push(format!("### {}", crate::grid::cell(&label)));
        out.push(String::new());
        out.extend(g.markdown());
    }
    out
}

#[cfg(test)]
mod tests;
