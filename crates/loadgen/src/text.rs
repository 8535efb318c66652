//! The human summary of an attack, in the spirit of `vegeta report`: one
//! labelled line per fact, bracketed column names, then a one-line verdict on
//! the generator itself.

use std::fmt::Write;

use iolab_model::attack::AttackResult;

use crate::Progress;

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2}s", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.1}ms")
    } else {
        format!("{v:.3}ms")
    }
}

/// The multi-line text summary (ends with a newline).
pub fn render(r: &AttackResult) -> String {
    let mut s = String::new();
    let d = &r.driver;
    let how = match d.kind.as_str() {
        "open" => format!(
            "open loop, {} at up to {} req/s",
            d.arrival.as_deref().unwrap_or("constant"),
            d.rate.map_or("?".into(), |x| format!("{x}"))
        ),
        _ => format!("closed loop, {} clients", d.concurrency.unwrap_or(0)),
    };
    let q = &r.requests;
    let l = &r.latency_ms;
    let t = &r.throughput_rps;
    let _ = writeln!(
        s,
        "Target        {} ({how}, {}, max {} connections)",
        r.target, d.connections, d.max_connections
    );
    let _ = writeln!(
        s,
        "Requests      [planned, sent, not_sent]        {}, {}, {}",
        q.planned, q.sent, q.not_sent
    );
    let _ = writeln!(
        s,
        "Answers       [ok, non_2xx, errors]            {}, {}, {}",
        q.ok,
        q.non_2xx,
        r.errors.total()
    );
    let _ = writeln!(
        s,
        "Rate          [offered, achieved, goodput]     {:.2}, {:.2}, {:.2} req/s",
        t.offered, t.achieved, t.goodput
    );
    let _ = writeln!(
        s,
        "Duration      [elapsed, timeout]               {:.3}s, {}s",
        r.elapsed_s, d.timeout_s
    );
    let _ = writeln!(
        s,
        "Latencies     [min, mean, 50, 90, 95, 99, 99.9, max]  {}, {}, {}, {}, {}, {}, {}, {}",
        ms(l.min),
        ms(l.mean),
        ms(l.p50),
        ms(l.p90),
        ms(l.p95),
        ms(l.p99),
        ms(l.p999),
        ms(l.max)
    );
    let _ = writeln!(
        s,
        "Service time  [50, 99, max]                    {}, {}, {}  (from actual send; latencies count from intended send)",
        ms(r.service_ms.p50), ms(r.service_ms.p99), ms(r.service_ms.max)
    );
    let _ = writeln!(
        s,
        "Success       [ratio]                          {:.2}%",
        r.success_ratio() * 100.0
    );
    let codes: Vec<String> = r
        .status_codes
        .iter()
        .map(|(c, n)| format!("{c}:{n}"))
        .collect();
    let _ = writeln!(
        s,
        "Status Codes  [code:count]                     {}",
        if codes.is_empty() {
            "-".into()
        } else {
            codes.join("  ")
        }
    );
    let errs: Vec<String> = r
        .errors
        .classes()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{c}:{n}"))
        .collect();
    let _ = writeln!(
        s,
        "Error Set     [class:count]                    {}",
        if errs.is_empty() {
            "-".into()
        } else {
            errs.join("  ")
        }
    );
    let g = &r.generator;
    let _ = writeln!(
        s,
        "Generator     [cpu, lag p99, lag max, threads]  {:.2}s, {}, {}, {}{}",
        g.cpu_s,
        ms(g.lag_p99_ms),
        ms(g.lag_max_ms),
        g.threads,
        if g.cpus.is_empty() {
            String::new()
        } else {
            format!(" (pinned to CPUs {:?})", g.cpus)
        }
    );
    if g.saturated {
        let _ = writeln!(
            s,
            "WARNING: generator saturated (lag p99 {} > 1ms or CPU > 90%): latencies may be the generator's, not the target's",
            ms(g.lag_p99_ms)
        );
    }
    if r.interrupted {
        let _ = writeln!(
            s,
            "INTERRUPTED after {:.1}s: partial result; requests scheduled later are counted as not_sent",
            r.elapsed_s
        );
    }
    s
}

/// The live progress line (no newline), e.g. for a `\r`-refreshed TTY line.
pub fn progress_line(p: &Progress) -> String {
    format!(
        "{:>6.1}s  sent {}  ok {}  errors {}  {:.0} req/s  p99 {}",
        p.elapsed.as_secs_f64(),
        p.sent,
        p.ok,
        p.errors,
        p.rps,
        if p.p99_ms > 0.0 {
            ms(p.p99_ms)
        } else {
            "-".into()
        }
    )
}
