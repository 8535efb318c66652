//! A replayed mix's endpoints (`endpoints` in `iolab.attack/1`): one row
//! per endpoint, its recorded share beside what it got in this run. Shown
//! after the summary's facts, as text and as Markdown; absent when the run
//! replayed nothing.

use iolab_model::attack::AttackResult;
use iolab_model::attack::EndpointResult;

use crate::grid::Grid;
use crate::numbers::{count, ms, opt, percent};

fn grid(eps: &[EndpointResult]) -> Grid {
    let mut g = Grid::new(
        &[
            "endpoint",
            "recorded share",
            "sent",
            "ok",
            "non-2xx",
            "errors",
            "p50",
            "p99",
            "max",
            "recorded service",
        ],
        &[false, true, true, true, true, true, true, true, true, true],
    );
    for e in eps {
        let answered = e.ok + e.non_2xx > 0;
        let lat = |v: f64| if answered { ms(v) } else { "-".into() };
        g.rows.push(vec![
            format!("{} {}", e.method, e.template),
            percent(e.share),
            count(e.sent),
            count(e.ok),
            count(e.non_2xx),
            count(e.errors.total()),
            lat(e.latency_ms.p50),
            lat(e.latency_ms.p99),
            lat(e.latency_ms.max),
            opt(e.recorded_service_ms, ms),
        ]);
    }
    g
}

/// The text table under an `Endpoints` label; nothing without a replay.
pub fn text(r: &AttackResult) -> Vec<String> {
    if r.endpoints.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "{:<14}(latency from the intended send)",
        "Endpoints"
    )];
    lines.extend(grid(&r.endpoints).text());
    lines
}

/// The Markdown table under a heading; nothing without a replay.
pub fn markdown(r: &AttackResult) -> Vec<String> {
    if r.endpoints.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![String::new(), "### Endpoints".to_string(), String::new()];
    lines.extend(grid(&r.endpoints).markdown());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_endpoint_and_nothing_without_a_replay() {
        let mut r = AttackResult::default();
        assert!(text(&r).is_empty() && markdown(&r).is_empty());
        let mut orders = EndpointResult {
            method: "GET".into(),
            template: "/orders/{id}".into(),
            share: 0.75,
            sent: 30,
            ok: 29,
            recorded_service_ms: Some(2.0),
            ..EndpointResult::default()
        };
        orders.errors.timeout = 1;
        orders.latency_ms.p50 = 1.5;
        let health = EndpointResult {
            method: "GET".into(),
            template: "/health".into(),
            share: 0.25,
            sent: 10,
            ..EndpointResult::default()
        };
        r.endpoints = vec![orders, health];
        let t = text(&r).join("\n");
        assert!(t.starts_with("Endpoints"), "{t}");
        assert!(
            t.contains("GET /orders/{id}") && t.contains("75") && t.contains("1.5"),
            "{t}"
        );
        let row = t.lines().find(|l| l.contains("/health")).unwrap();
        assert!(row.contains(" - "), "no answers, no latency: {row}");
        assert!(markdown(&r).iter().any(|l| l.starts_with("| GET /health")));
    }
}
