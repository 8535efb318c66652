//! The non-chart parts of the page: header, the at-a-glance grid, the
//! comparison tables with their explanations, predictions, published numbers
//! and the environment with the exact rerun command.

use iolab_model::runs::RunsFile;

use crate::numbers::{ms, num, percent, secs};
use crate::runs::groups;
use crate::runs::published;
use crate::runs::summary::{self, label};
use crate::runs::table;
use crate::svg::esc;

pub fn header(file: &RunsFile) -> String {
    let pre = table::preamble(file);
    format!(
        "<header><h1>{}</h1><p class=\"lead\">{}</p><p class=\"facts\">{}</p></header>",
        esc(&file.plan.name),
        esc(&file.plan.description),
        esc(&pre[1])
    )
}

/// Models down, loads across: success (HTTP) or total time (batch) per cell.
pub fn glance(file: &RunsFile) -> String {
    let gs = groups::groups(file);
    if gs.is_empty() {
        return String::new();
    }
    let runs: Vec<_> = file.runs.iter().collect();
    let labels = crate::runs::charts::slots(&runs);
    let mut s = String::from("<section id=\"glance\"><h2>At a glance</h2><p class=\"note\">");
    s.push_str(if gs.iter().all(|g| g.batch) {
        "Total time of each batch (as run); ★ = fastest for that work beyond one task's time, = tied."
    } else {
        "Share of requests answered 2xx within the timeout: ✓ at least 99.9%, ~ at least 90%, ✗ below; ★ = best of that load (highest goodput, then lowest p99, beyond the noise), = tied for best."
    });
    s.push_str("</p><table class=\"glance\"><thead><tr><th></th>");
    for g in &gs {
        s.push_str(&format!(
            "<th><span title=\"{}\">{}</span></th>",
            esc(&g.title),
            esc(&g.short)
        ));
    }
    s.push_str("</tr></thead><tbody>");
    for l in &labels {
        s.push_str(&format!("<tr><th class=\"row\">{}</th>", esc(l)));
        for g in &gs {
            let hit = g.runs.iter().copied().find(|&i| label(&file.runs[i]) == *l);
            let cell = match hit.map(|i| (i, &file.runs[i])) {
                None => "<td class=\"none\">·</td>".to_string(),
                Some((i, r)) => {
                    let star = match g.mark(i) {
                        "" => String::new(),
                        m => format!(" {m}"),
                    };
                    if let Some(a) = r.attack.as_ref().filter(|_| r.outcome.is_completed()) {
                        let ok = a.success_ratio();
                        let (class, sym) = if ok >= 0.999 {
                            ("good", "✓")
                        } else if ok >= 0.9 {
                            ("mid", "~")
                        } else {
                            ("bad", "✗")
                        };
                        format!(
                            "<td class=\"{class}\"><span title=\"{}\">{sym} {}{star}</span></td>",
                            esc(&r.name),
                            percent(ok)
                        )
                    } else if let Some(b) = r.batch.as_ref().filter(|_| r.outcome.is_completed()) {
                        format!("<td>{}{star}</td>", secs(b.total_s))
                    } else {
                        format!("<td class=\"none\">{}</td>", esc(r.outcome.label()))
                    }
                }
            };
            s.push_str(&cell);
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></section>");
    s
}

pub fn tables(file: &RunsFile) -> String {
    let rows = summary::rows(file);
    let mut s = String::from("<section id=\"table\"><h2>Runs, and why they came out so</h2>");
    for g in groups::groups(file) {
        let grid = table::grid(file, &rows, &g);
        s.push_str(&format!("<h3>{}</h3><table><thead><tr>", esc(&g.title)));
        for (h, n) in grid.header.iter().zip(&grid.numeric) {
            s.push_str(&format!(
                "<th{}>{}</th>",
                if *n { " class=\"n\"" } else { "" },
                esc(h)
            ));
        }
        s.push_str("</tr></thead><tbody>");
        for (row, &i) in grid.rows.iter().zip(&g.runs) {
            let best = if g.best == Some(i) {
                " class=\"best\""
            } else {
                ""
            };
            s.push_str(&format!("<tr{best}>"));
            for (v, n) in row.iter().zip(&grid.numeric) {
                s.push_str(&format!(
                    "<td{}>{}</td>",
                    if *n { " class=\"n\"" } else { "" },
                    esc(v)
                ));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table><ul class=\"why\">");
        for &i in &g.runs {
            s.push_str(&format!("<li>{}", esc(&rows[i].explanation)));
            for c in &rows[i].caveats {
                s.push_str(&format!(
                    "<br/><small class=\"caveat\">caveat: {}</small>",
                    esc(c)
                ));
            }
            s.push_str("</li>");
        }
        for line in super::super::compare::lines(file, &g) {
            s.push_str(&format!(
                "<li class=\"compare\">runtime vs stand-in: {}</li>",
                esc(&line)
            ));
        }
        s.push_str("</ul>");
    }
    s.push_str("</section>");
    s
}

/// A share's error in percentage points, from the unrounded ratios: a
/// relative error of two small shares (0.6% against 0.6%, "+11%") says
/// nothing a reader can see in the cells beside it.
fn err_points(pred: f64, measured: f64) -> String {
    let d = (pred - measured) * 100.0;
    if d.abs() < 0.05 {
        "0 pt".into()
    } else {
        format!("{d:+.1} pt")
    }
}

fn err_pct(pred: f64, measured: f64) -> String {
    if measured == 0.0 {
        if pred == 0.0 {
            "0%".into()
        } else {
            "-".into()
        }
    } else {
        format!("{:+.0}%", (pred - measured) / measured * 100.0)
    }
}

pub fn predictions(file: &RunsFile) -> String {
    let with: Vec<_> = file
        .runs
        .iter()
        .filter(|r| r.prediction.is_some() && r.attack.is_some())
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section id=\"predictions\"><h2>Predicted vs measured</h2><p class=\"note\">Error of success = predicted − measured, in percentage points; of latency = (predicted − measured) / measured. Both from the unrounded figures. Predictions come from <code>iolab predict</code> (queueing formulas), made without running anything.</p><table><thead><tr><th>run</th><th class=\"n\">success predicted</th><th class=\"n\">measured</th><th class=\"n\">error</th><th class=\"n\">p50 predicted</th><th class=\"n\">measured</th><th class=\"n\">error</th><th class=\"n\">p99 predicted</th><th class=\"n\">measured</th><th class=\"n\">error</th></tr></thead><tbody>");
    for r in with {
        let (p, a) = (
            r.prediction.as_ref().expect("filtered"),
            r.attack.as_ref().expect("filtered"),
        );
        s.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.name),
            percent(p.success_ratio),
            percent(a.success_ratio()),
            err_points(p.success_ratio, a.success_ratio()),
            ms(p.latency_ms.p50),
            ms(a.latency_ms.p50),
            err_pct(p.latency_ms.p50, a.latency_ms.p50),
            ms(p.latency_ms.p99),
            ms(a.latency_ms.p99),
            err_pct(p.latency_ms.p99, a.latency_ms.p99),
        ));
    }
    s.push_str("</tbody></table></section>");
    s
}

pub fn published(file: &RunsFile) -> String {
    let Some((source, rows)) = published::rows(file) else {
        return String::new();
    };
    let mut s = format!(
        "<section id=\"published\"><h2>Published numbers beside ours</h2><p class=\"note\">Source: {}. Ours are unscaled (times / {}, rates x {}).</p><table><thead><tr><th>run</th><th>metric</th><th class=\"n\">published</th><th class=\"n\">ours</th><th class=\"n\">ours / published</th><th>note</th></tr></thead><tbody>",
        esc(&source),
        num(file.plan.scale, 4),
        num(file.plan.scale, 4)
    );
    for r in rows {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&r.run),
            esc(&r.metric),
            esc(&r.published),
            esc(&r.ours),
            r.ratio.map_or("-".into(), |x| format!("{}x", num(x, 2))),
            esc(&r.note)
        ));
    }
    s.push_str("</tbody></table></section>");
    s
}

pub fn environment(file: &RunsFile) -> String {
    let e = &file.environment;
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut facts: Vec<(String, String)> = vec![
        ("cores".into(), e.cores.to_string()),
        ("CPU".into(), e.cpu_model.clone()),
        ("kernel".into(), e.kernel.clone()),
        ("memory".into(), format!("{} MiB", e.memory_mb)),
        (
            "open files (soft, hard)".into(),
            format!("{}, {}", e.nofile.0, e.nofile.1),
        ),
        (
            "ephemeral ports".into(),
            format!("{}-{}", e.port_range.0, e.port_range.1),
        ),
        (
            "tcp_tw_reuse".into(),
            e.tcp_tw_reuse.map_or("-".into(), |v| v.to_string()),
        ),
        ("threads-max".into(), opt(e.threads_max)),
        ("pid_max".into(), opt(e.pid_max)),
        ("somaxconn".into(), opt(e.somaxconn)),
        (
            "git commit".into(),
            e.git_commit.clone().unwrap_or_else(|| "-".into()),
        ),
        (
            "started / finished (UTC)".into(),
            format!(
                "{} / {}",
                file.started_utc,
                file.finished_utc.as_deref().unwrap_or("-")
            ),
        ),
        ("time-scale".into(), num(file.plan.scale, 4)),
        ("repetitions".into(), file.plan.reps.to_string()),
        ("warm-up".into(), secs(file.plan.warmup.as_secs_f64())),
    ];
    for (k, v) in &e.versions {
        facts.push((format!("{k} version"), v.clone()));
    }
    for (k, v) in &e.pinning {
        let cpus: Vec<String> = v.iter().map(|c| c.to_string()).collect();
        facts.push((format!("{k} pinned to CPUs"), cpus.join(",")));
    }
    let mut s =
        String::from("<section id=\"environment\"><h2>Environment and rerun</h2><table><tbody>");
    for (k, v) in facts {
        s.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(&k),
            esc(&v)
        ));
    }
    s.push_str("</tbody></table>");
    let cmd = if e.command.is_empty() {
        format!("iolab run {}", file.plan.name)
    } else {
        e.command.clone()
    };
    s.push_str(&format!(
        "<h3>Rerun</h3><pre>{}</pre><h3>Re-render this report from the saved results</h3><pre>iolab report RESULTS_DIR --format html -o report.html</pre>",
        esc(&cmd)
    ));
    if let Some(src) = &file.plan.source {
        s.push_str(&format!("<p class=\"note\">Preset file: {}</p>", esc(src)));
    }
    s.push_str("</section>");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn success_0_6_vs_0_6_is_not_plus_11_percent() {
        // Issue 35: "0.6% 0.6% +11%"; in points, from the unrounded shares.
        assert_eq!(super::err_points(0.0066, 0.0059), "+0.1 pt");
        assert_eq!(super::err_points(0.5, 0.5), "0 pt");
        assert_eq!(super::err_points(0.37, 0.28), "+9.0 pt");
        assert_eq!(super::err_pct(110.0, 100.0), "+10%");
    }
}
