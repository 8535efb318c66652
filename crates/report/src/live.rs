//! The live page (`--live`): a [`LiveView`] as one self-contained HTML page
//! (inline CSS, one inline script, nothing fetched from anywhere) whose parts
//! the live server pushes again as they change. Every part is drawn by the
//! report's own renderers: the summary `iolab attack` prints, the time series
//! of the HTML report's "each run over time", and an experiment's glance,
//! predictions and comparison tables as the report will show them.

use iolab_model::attack::AttackResult;
use iolab_model::live::{LiveRun, LiveView};
use iolab_model::telemetry::TelemetryPoint;

use crate::numbers::{count, mib, ms, num, opt, percent, rate, secs};
use crate::runs::charts::series::{self, RunSeries};
use crate::runs::html::{sections, STYLE};
use crate::svg::esc;

/// The page's parts, by element id, in page order: what the server pushes.
pub const PARTS: [&str; 4] = ["status", "now", "series", "runs"];

/// Extra style of the live page (the report's is the base).
const LIVE_STYLE: &str = "#conn{font-size:12px;padding:2px 8px;border-radius:9px;background:#eee;color:#555}#conn.on{background:#d4ede2;color:#05613f}#conn.off{background:#f7d2c0;color:#8a2d00}table.now td.n{min-width:90px}.warn{color:#8a2d00;font-weight:600}";

/// Once the page has loaded (an event stream opened before would hold the
/// load back for good), subscribe to the server's events and put each part
/// in place; say when the connection is gone (the command ended: the page
/// keeps its last picture).
const SCRIPT: &str = "window.addEventListener('load',function(){var c=document.getElementById('conn');var es=new EventSource('events');es.addEventListener('parts',function(e){var d=JSON.parse(e.data);for(var k in d){var el=document.getElementById(k);if(el){el.innerHTML=d[k];}}});es.onopen=function(){c.textContent='live';c.className='on';};es.onerror=function(){c.textContent='not connected: the command has ended or the page lost its server; this is the last picture';c.className='off';};});";

/// The whole page, with the current parts in place.
pub fn page(v: &LiveView) -> String {
    let mut body = format!(
        "<header><h1>{} <span id=\"conn\">connecting</span></h1></header>",
        esc(&v.title)
    );
    for (id, html) in parts(v) {
        body.push_str(&format!("<div id=\"{id}\">{html}</div>"));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>iolab live · {}</title><style>\n{STYLE}{LIVE_STYLE}</style></head><body><main>{body}</main><script>{SCRIPT}</script></body></html>\n",
        esc(&v.title)
    )
}

/// Each part's inner HTML, in [`PARTS`] order.
pub fn parts(v: &LiveView) -> Vec<(&'static str, String)> {
    let current = v.current.as_ref();
    vec![
        ("status", status(v)),
        ("now", current.map(now).unwrap_or_default()),
        ("series", current.map(chart).unwrap_or_default()),
        ("runs", runs(v)),
    ]
}

/// What is happening, since when, until when, and where the page is served.
fn status(v: &LiveView) -> String {
    let mut facts = vec![
        format!("<b>{}</b>", esc(&v.stage)),
        format!("elapsed {}", secs(v.elapsed_s)),
    ];
    if let Some(eta) = v.eta_s {
        facts.push(format!("ETA {}", secs(eta)));
    }
    if v.dropped_frames > 0 {
        facts.push(format!(
            "{} frames dropped (a reader was slow; the load was not)",
            count(v.dropped_frames)
        ));
    }
    let mut s = format!("<p class=\"lead\">{}</p>", facts.join(" · "));
    let served = if v.loopback {
        format!("Served at {} (this machine only).", esc(&v.address))
    } else {
        format!(
            "<span class=\"warn\">Served at {} on an address other machines may reach, as asked (--live ADDR).</span>",
            esc(&v.address)
        )
    };
    s.push_str(&format!(
        "<p class=\"facts\">{served} Numbers are exact: counts, and percentiles read from HdrHistograms{}.</p>",
        if v.sources.is_empty() {
            ""
        } else {
            " added across the shards"
        }
    ));
    if !v.sources.is_empty() {
        s.push_str("<table><thead><tr><th>shard page</th><th>read</th></tr></thead><tbody>");
        for src in &v.sources {
            s.push_str(&format!(
                "<tr><td>{}</td><td{}>{}</td></tr>",
                esc(&src.url),
                if src.ok { "" } else { " class=\"warn\"" },
                esc(&src.status)
            ));
        }
        s.push_str("</tbody></table>");
    }
    s
}

/// A row of the "now" table: what, in the last interval, so far.
type Row = (String, String, String);

/// The last closed interval's figures beside the run's so far, the target
/// seen from outside, and the summary `iolab attack` prints.
fn now(r: &LiveRun) -> String {
    let mut rows = attack_rows(r);
    rows.extend(target_rows(&r.telemetry));
    let mut s = format!(
        "<section><h2>Now: {}</h2><table class=\"now\"><thead><tr><th></th><th class=\"n\">last interval ({})</th><th class=\"n\">so far</th></tr></thead><tbody>",
        esc(&r.name),
        secs(r.interval_s)
    );
    for (k, now, all) in rows {
        s.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&k),
            esc(&now),
            esc(&all)
        ));
    }
    s.push_str("</tbody></table>");
    s.push_str(&format!(
        "<pre>{}</pre></section>",
        esc(&crate::attack::text(&r.attack))
    ));
    s
}

/// The attack's rows: rates, success, p50 and p99, in flight.
fn attack_rows(r: &LiveRun) -> Vec<Row> {
    let a = &r.attack;
    let iv = r.interval_s.max(1e-6);
    let last = a.series.iter().rev().find(|p| p.sent + p.ok + p.errors > 0);
    let answered_last = last.filter(|p| p.ok + p.errors > 0);
    let ok_last = last.filter(|p| p.ok > 0);
    let per_s = |n: u64| rate(n as f64 / iv);
    let answered = a.requests.ok + a.requests.non_2xx + a.errors.total();
    let so_far = |v: f64| (answered > 0).then_some(v);
    vec![
        (
            "sent /s".into(),
            opt(last.map(|p| p.sent), per_s),
            format!("offered {}", rate(a.throughput_rps.offered)),
        ),
        (
            "2xx /s".into(),
            opt(last.map(|p| p.ok), per_s),
            format!("goodput {}", rate(a.throughput_rps.goodput)),
        ),
        (
            "errors /s".into(),
            opt(last.map(|p| p.errors), per_s),
            format!("{} in all", count(answered - a.requests.ok)),
        ),
        (
            "2xx of finished".into(),
            opt(
                answered_last.map(|p| p.ok as f64 / (p.ok + p.errors) as f64),
                percent,
            ),
            opt(
                so_far(a.requests.ok as f64 / answered.max(1) as f64),
                percent,
            ),
        ),
        (
            "p50".into(),
            opt(ok_last.map(|p| p.p50_ms), ms),
            opt(so_far(a.latency_ms.p50), ms),
        ),
        (
            "p99".into(),
            opt(ok_last.map(|p| p.p99_ms), ms),
            opt(so_far(a.latency_ms.p99), ms),
        ),
        (
            "in flight (generator)".into(),
            opt(r.in_flight, count),
            String::new(),
        ),
    ]
}

/// The target seen from outside: its latest telemetry sample, and its CPU
/// over the last two samples.
fn target_rows(t: &[TelemetryPoint]) -> Vec<Row> {
    let Some(p) = t.last() else {
        return Vec::new();
    };
    let cores = match t {
        [.., a, b] if b.t_s > a.t_s => Some((b.cpu_s - a.cpu_s).max(0.0) / (b.t_s - a.t_s)),
        _ => None,
    };
    let row = |k: &str, v: String| (k.to_string(), v, String::new());
    vec![
        row(
            "target: in flight (its /metrics)",
            opt(p.in_flight, |v| num(v, 0)),
        ),
        row("target: connections (kernel)", opt(p.connections, count)),
        row("target: accept queue (kernel)", opt(p.accept_queue, count)),
        row("target: threads", count(p.threads)),
        row("target: CPU (cores)", opt(cores, |c| num(c, 2))),
        row("target: RSS", mib(p.rss_mb)),
    ]
}

/// The run's time series, drawn by the report's own chart.
fn chart(r: &LiveRun) -> String {
    let view = RunSeries {
        title: format!("{} over time", r.name),
        id: "live".into(),
        series: &r.attack.series,
        interval_s: r.interval_s,
        telemetry: &r.telemetry,
    };
    let mut s = String::from("<section class=\"series\"><h2>Over time</h2><p class=\"note\">One point per closed interval (0 = first scheduled send; telemetry before 0 is warm-up); p50 and p99 from the interval's HdrHistogram.</p>");
    for c in series::draw(&[view]) {
        s.push_str(&c.svg);
    }
    s.push_str("</section>");
    s
}

/// An experiment's runs so far and to come, or a search's steps so far.
fn runs(v: &LiveView) -> String {
    let mut s = String::new();
    if let Some(file) = v.experiment.as_ref().filter(|f| !f.runs.is_empty()) {
        s.push_str(&sections::glance(file));
        s.push_str(&sections::predictions(file));
        s.push_str(&sections::tables(file));
    }
    if !v.pending.is_empty() {
        s.push_str("<section id=\"pending\"><h2>Still to run</h2><table><thead><tr><th>run</th><th class=\"n\">success predicted</th><th class=\"n\">p50 predicted</th><th class=\"n\">p99 predicted</th></tr></thead><tbody>");
        for p in &v.pending {
            let pr = p.prediction.as_ref();
            s.push_str(&format!(
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&p.name),
                opt(pr.map(|p| p.success_ratio), percent),
                opt(pr.map(|p| p.latency_ms.p50), ms),
                opt(pr.map(|p| p.latency_ms.p99), ms)
            ));
        }
        s.push_str("</tbody></table></section>");
    }
    if !v.history.is_empty() {
        s.push_str("<section id=\"history\"><h2>Finished so far</h2><table><thead><tr><th>attack</th><th class=\"n\">offered</th><th class=\"n\">goodput</th><th class=\"n\">success</th><th class=\"n\">p50</th><th class=\"n\">p99</th><th>generator</th></tr></thead><tbody>");
        for r in &v.history {
            s.push_str(&history_row(&r.name, &r.attack));
        }
        s.push_str("</tbody></table></section>");
    }
    s
}

fn history_row(name: &str, a: &AttackResult) -> String {
    let g = a.generator_verdict();
    format!(
        "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
        esc(name),
        rate(a.throughput_rps.offered),
        rate(a.throughput_rps.goodput),
        percent(a.success_ratio()),
        ms(a.latency_ms.p50),
        ms(a.latency_ms.p99),
        esc(&g.cause.unwrap_or_else(|| "ok".into()))
    )
}
