//! An attack (`iolab.attack/1`, what `iolab attack` measured): the summary in
//! the spirit of `vegeta report` (one labelled line per fact, bracketed
//! column names, then a verdict on the generator itself), the same facts as a
//! Markdown table, the document as JSON, one flat CSV record, and the live
//! progress line; a replay's endpoints as a table ([`endpoints`]).

mod endpoints;

use iolab_model::attack::{AttackResult, Progress, ATTACK_SCHEMA};
use serde_json::json;

use crate::explain::generator_doubt;
use crate::grid::{self, Grid};
use crate::numbers::{clock, count, ms, percent, rate, secs};
use crate::{csv, Format, RenderError, Renderers};

mod held;

/// Render an attack in `format` (one of [`Format::plain`]).
pub fn render(doc: &AttackResult, format: Format) -> Result<Vec<u8>, RenderError> {
    Renderers {
        schema: ATTACK_SCHEMA,
        text,
        markdown,
        csv,
    }
    .render(doc, format)
}

/// One labelled line of the summary: `Label [names] values note`.
struct Fact {
    label: &'static str,
    names: &'static str,
    values: String,
    note: String,
}

fn fact(label: &'static str, names: &'static str, values: Vec<String>) -> Fact {
    Fact {
        label,
        names,
        values: values.join(", "),
        note: String::new(),
    }
}

/// How the load was driven, e.g. `open loop, constant at up to 450 req/s,
/// keep-alive, max 10,000 connections`.
fn how(r: &AttackResult) -> String {
    if let Some(held) = held::how(r) {
        return held;
    }
    let d = &r.driver;
    let loop_ = match d.kind.as_str() {
        "open" => format!(
            "open loop, {} at up to {} req/s",
            d.arrival.as_deref().unwrap_or("constant"),
            d.rate.map_or("?".into(), rate)
        ),
        _ => format!(
            "closed loop, {} clients",
            count(d.concurrency.unwrap_or(0).into())
        ),
    };
    format!(
        "{loop_}, {}, max {} connections",
        d.connections,
        count(d.max_connections.into())
    )
}

/// `class:count` pairs, or `-` when there are none.
fn pairs<'a>(items: impl Iterator<Item = (&'a str, u64)>) -> String {
    let v: Vec<String> = items.map(|(c, n)| format!("{c}:{}", count(n))).collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join("  ")
    }
}

/// The facts, in summary order, from requests to the generator.
fn facts(r: &AttackResult) -> Vec<Fact> {
    if let Some(held) = held::facts(r) {
        return held;
    }
    let (q, l, t, s) = (&r.requests, &r.latency_ms, &r.throughput_rps, &r.service_ms);
    let mut rates = fact(
        "Rate",
        "offered, achieved, goodput",
        [t.offered, t.achieved, t.goodput].map(rate).to_vec(),
    );
    rates.note = " req/s".into();
    // Latencies are of answers: with none, there is no latency to print,
    // and `0s` would read as an instant answer.
    let answered = q.answered() > 0;
    let lat = |v: f64| if answered { ms(v) } else { "-".to_string() };
    let mut service = fact(
        "Service time",
        "50, 99, max",
        [s.p50, s.p99, s.max].map(lat).to_vec(),
    );
    service.note = "  (from actual send; latencies count from intended send)".into();
    let codes = r.status_codes.iter().map(|(c, n)| (c.as_str(), *n));
    let errors = r.errors.classes().into_iter().filter(|(_, n)| *n > 0);
    let mut facts: Vec<Fact> = shards(r).into_iter().collect();
    facts.extend([
        requests(q),
        fact(
            "Answers",
            "ok, non_2xx, errors",
            [q.ok, q.non_2xx, r.errors.total()].map(count).to_vec(),
        ),
        rates,
        fact(
            "Duration",
            "elapsed, timeout",
            vec![secs(r.elapsed_s), secs(r.driver.timeout_s)],
        ),
        fact(
            "Latencies",
            "min, mean, 50, 90, 95, 99, 99.9, max",
            [l.min, l.mean, l.p50, l.p90, l.p95, l.p99, l.p999, l.max]
                .map(lat)
                .to_vec(),
        ),
        service,
        fact("Success", "ratio", vec![percent(r.success_ratio())]),
        fact("Status Codes", "code:count", vec![pairs(codes)]),
        fact("Error Set", "class:count", vec![pairs(errors)]),
    ]);
    facts.extend(codes_by_class(r));
    facts.push(generator(&r.generator));
    facts
}

/// Planned, sent and not sent, with a note of the retries and unclean TLS
/// closes when there were any.
fn requests(q: &iolab_model::attack::RequestCounts) -> Fact {
    let mut requests = fact(
        "Requests",
        "planned, sent, not_sent",
        [q.planned, q.sent, q.not_sent].map(count).to_vec(),
    );
    let mut notes = Vec::new();
    if q.retried > 0 {
        // docs/reliability.md: the one retry, after a kept-alive connection's idle close.
        notes.push(format!(
            "{} of sent retried once on a new connection: the kept-alive one closed before any byte",
            count(q.retried)
        ));
    }
    if q.unclean_tls_close > 0 {
        // docs/reliability.md: a close-delimited body ended by a TLS close without close_notify.
        notes.push(format!(
            "{} answers ended at a TLS close without close_notify: taken as whole, a cut body looks the same",
            count(q.unclean_tls_close)
        ));
    }
    if !notes.is_empty() {
        requests.note = format!(" ({})", notes.join("; "));
    }
    requests
}

/// The generator's own cost and lateness, and the CPUs it was pinned to.
fn generator(g: &iolab_model::generator::GeneratorStats) -> Fact {
    let mut generator = fact(
        "Generator",
        "cpu, lag p99, lag max, threads",
        vec![
            secs(g.cpu_s),
            ms(g.lag_p99_ms),
            ms(g.lag_max_ms),
            count(g.threads as u64),
        ],
    );
    if !g.cpus.is_empty() {
        generator.note = format!(" (pinned to CPUs {:?})", g.cpus);
    }
    generator
}

/// The coded classes again by code (`grpc_status:UNAVAILABLE:12`,
/// `stream_reset:CANCEL:3`), when a run has any: the class alone does not
/// say which gRPC status or reset code the server sent.
fn codes_by_class(r: &AttackResult) -> Option<Fact> {
    let named: Vec<(String, u64)> = r
        .errors
        .by_code
        .iter()
        .flat_map(|(class, codes)| codes.iter().map(move |(c, n)| (format!("{class}:{c}"), *n)))
        .collect();
    if named.is_empty() {
        return None;
    }
    let items = named.iter().map(|(k, n)| (k.as_str(), *n));
    Some(fact("Error Codes", "class:code:count", vec![pairs(items)]))
}

/// Where a sharded run sits in its plan, or what a merge came from.
fn shards(r: &AttackResult) -> Option<Fact> {
    let late = |sent: Option<f64>, due: Option<f64>| {
        sent.zip(due)
            .map_or("-".into(), |(s, d)| ms((s - d).max(0.0)))
    };
    if let Some(s) = &r.shard {
        let mut f = fact(
            "Shard",
            "i/n, plan, first send late",
            vec![
                format!("{}/{}", s.index, s.count),
                s.plan_hash.clone(),
                late(s.first_send_ms, s.first_due_ms),
            ],
        );
        f.note =
            "  (requests, rates and latencies are this shard's; the driver line is the plan's)"
                .into();
        return Some(f);
    }
    let m = r.merged.as_ref()?;
    Some(fact(
        "Shards",
        "merged, plan, start skew",
        vec![
            count(m.shards.into()),
            m.plan_hash.clone(),
            m.start_skew_ms.map_or("-".into(), ms),
        ],
    ))
}

/// The objective's verdict (`--slo`), when one was asked for.
fn objective(r: &AttackResult) -> Option<String> {
    let v = r.slo.as_ref()?;
    Some(if v.met {
        format!("{:<14}{}: met", "Objective", v.slo)
    } else {
        format!("{:<14}{}: FAILED ({})", "Objective", v.slo, v.verdict)
    })
}

/// The verdicts under the facts: a saturated generator, an interrupted run.
fn warnings(r: &AttackResult) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(generator_doubt(r).map(|d| format!("WARNING: {d}")));
    if let Some(m) = &r.merged {
        if m.plan_requests.is_some_and(|p| p != r.requests.planned) && !r.interrupted {
            out.push(format!(
                "WARNING: the shards planned {} requests, the plan {}: a shard was cut short",
                count(r.requests.planned),
                count(m.plan_requests.unwrap_or(0))
            ));
        }
        if m.series_shifted {
            out.push("NOTE: the shards did not share a start (--start-at): their series were lined up to the nearest interval".into());
        }
    }
    if r.interrupted {
        out.push(format!(
            "INTERRUPTED after {}: partial result; requests scheduled later are counted as not_sent",
            secs(r.elapsed_s)
        ));
    }
    out
}

/// The multi-line text summary (ends with a newline).
pub fn text(r: &AttackResult) -> String {
    let mut lines = vec![format!("{:<14}{} ({})", "Target", r.target, how(r))];
    for f in facts(r) {
        let names = format!("[{}]", f.names);
        lines.push(format!(
            "{:<14}{names:<31}  {}{}",
            f.label, f.values, f.note
        ));
    }
    lines.extend(endpoints::text(r));
    lines.extend(objective(r));
    lines.extend(warnings(r));
    grid::join(&lines)
}

/// The same facts as a Markdown table under a heading.
pub fn markdown(r: &AttackResult) -> String {
    let mut g = Grid::new(&["fact", "of", "values"], &[false, false, false]);
    for f in facts(r) {
        let note = f.note.trim_start();
        let values = if note.is_empty() {
            f.values
        } else {
            format!("{} {note}", f.values)
        };
        g.rows.push(vec![f.label.into(), f.names.into(), values]);
    }
    let mut lines = vec![
        format!("## Attack on {}", r.target),
        String::new(),
        format!("{}.", how(r)),
        String::new(),
    ];
    lines.extend(g.markdown());
    lines.extend(endpoints::markdown(r));
    if let Some(o) = objective(r) {
        lines.push(String::new());
        lines.push(format!(
            "**{}**",
            o.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    let warnings = warnings(r);
    if !warnings.is_empty() {
        lines.push(String::new());
        lines.extend(warnings.iter().map(|w| format!("- **{w}**")));
    }
    grid::join(&lines)
}

/// CSV: a header and one record with the attack's raw figures.
pub fn csv(r: &AttackResult) -> String {
    csv::records(std::slice::from_ref(r), r, fields)
}

fn fields(r: &AttackResult) -> csv::Fields {
    let (q, l, t) = (&r.requests, &r.latency_ms, &r.throughput_rps);
    vec![
        ("target", json!(r.target)),
        ("driver", json!(r.driver.kind)),
        ("rate", json!(r.driver.rate)),
        ("concurrency", json!(r.driver.concurrency)),
        ("timeout_s", json!(r.driver.timeout_s)),
        ("elapsed_s", json!(r.elapsed_s)),
        ("planned", json!(q.planned)),
        ("sent", json!(q.sent)),
        ("not_sent", json!(q.not_sent)),
        ("ok", json!(q.ok)),
        ("non_2xx", json!(q.non_2xx)),
        ("errors", json!(r.errors.total())),
        ("offered_rps", json!(t.offered)),
        ("achieved_rps", json!(t.achieved)),
        ("goodput_rps", json!(t.goodput)),
        ("success_ratio", json!(r.success_ratio())),
        ("p50_ms", json!(l.p50)),
        ("p90_ms", json!(l.p90)),
        ("p99_ms", json!(l.p99)),
        ("p999_ms", json!(l.p999)),
        ("max_ms", json!(l.max)),
        ("service_p99_ms", json!(r.service_ms.p99)),
        ("generator_cpu_s", json!(r.generator.cpu_s)),
        ("generator_saturated", json!(r.generator.saturated)),
        ("interrupted", json!(r.interrupted)),
    ]
}

/// The live progress line (no newline), e.g. for a `\r`-refreshed TTY line.
pub fn progress_line(p: &Progress) -> String {
    format!(
        "{}  sent {}  ok {}  errors {}  {} req/s  p99 {}",
        clock(p.elapsed.as_secs_f64()),
        count(p.sent),
        count(p.ok),
        count(p.errors),
        rate(p.rps),
        if p.p99_ms > 0.0 {
            ms(p.p99_ms)
        } else {
            "-".into()
        }
    )
}
