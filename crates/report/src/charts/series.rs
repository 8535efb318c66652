//! Per-run small multiples on one clock: requests per second (sent, ok,
//! errors), p99, target threads, RSS and requests in flight, each column on
//! one y scale for every run so rows compare at a glance.

use iolab_model::runs::{RunRecord, RunsFile};

use super::{slug, Chart, Section};
use crate::numbers::{ms, num};
use crate::svg::line::{plot_on, Axis, Point, Series};
use crate::svg::scale::{Kind, Scale};
use crate::svg::{self, c, esc, Rect};

/// Lines of one panel for one run: (name, palette slot, (x, y) points).
type Lines = Vec<(&'static str, usize, Vec<(f64, f64)>)>;

struct Panel {
    title: &'static str,
    axis: Axis,
    /// Series of one run: (name, palette slot, points).
    lines: fn(&RunRecord) -> Lines,
    unit: fn(f64) -> String,
}

fn interval(r: &RunRecord) -> f64 {
    match &r.spec.work {
        iolab_model::experiment::Work::Http(h) => h.interval.as_secs_f64().max(1e-6),
        _ => 1.0,
    }
}

fn panels() -> Vec<Panel> {
    vec![
        Panel {
            title: "requests per second",
            axis: Axis::new(Kind::Linear, "req/s"),
            lines: |r| {
                let a = r
                    .attack
                    .as_ref()
                    .map(|a| a.series.as_slice())
                    .unwrap_or(&[]);
                let iv = interval(r);
                let mid = |t: f64| t + iv / 2.0;
                vec![
                    (
                        "sent",
                        0,
                        a.iter().map(|p| (mid(p.t_s), p.sent as f64 / iv)).collect(),
                    ),
                    (
                        "ok",
                        2,
                        a.iter().map(|p| (mid(p.t_s), p.ok as f64 / iv)).collect(),
                    ),
                    (
                        "errors",
                        3,
                        a.iter()
                            .map(|p| (mid(p.t_s), p.errors as f64 / iv))
                            .collect(),
                    ),
                ]
            },
            unit: |v| format!("{}/s", num(v, 1)),
        },
        Panel {
            title: "p99 latency",
            axis: Axis::new(Kind::Log, "ms, log"),
            lines: |r| {
                let a = r
                    .attack
                    .as_ref()
                    .map(|a| a.series.as_slice())
                    .unwrap_or(&[]);
                let iv = interval(r);
                vec![(
                    "p99",
                    1,
                    a.iter()
                        .filter(|p| p.ok > 0)
                        .map(|p| (p.t_s + iv / 2.0, p.p99_ms))
                        .collect(),
                )]
            },
            unit: ms,
        },
        Panel {
            title: "target threads",
            axis: Axis::new(Kind::Linear, "threads"),
            lines: |r| {
                vec![(
                    "threads",
                    4,
                    r.telemetry
                        .series
                        .iter()
                        .map(|p| (p.t_s, p.threads as f64))
                        .collect(),
                )]
            },
            unit: |v| num(v, 0),
        },
        Panel {
            title: "RSS",
            axis: Axis::new(Kind::Linear, "MiB"),
            lines: |r| {
                vec![(
                    "RSS",
                    5,
                    r.telemetry
                        .series
                        .iter()
                        .map(|p| (p.t_s, p.rss_mb))
                        .collect(),
                )]
            },
            unit: |v| format!("{} MiB", num(v, 1)),
        },
        Panel {
            title: "in flight at the target",
            axis: Axis::new(Kind::Linear, "requests"),
            lines: |r| {
                vec![(
                    "in flight",
                    6,
                    r.telemetry
                        .series
                        .iter()
                        .filter_map(|p| Some((p.t_s, p.in_flight?)))
                        .collect(),
                )]
            },
            unit: |v| num(v, 0),
        },
    ]
}

pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let runs: Vec<&RunRecord> = file
        .runs
        .iter()
        .filter(|r| {
            r.attack.as_ref().is_some_and(|a| !a.series.is_empty())
                || !r.telemetry.series.is_empty()
        })
        .collect();
    if runs.is_empty() {
        return vec![];
    }
    let panels = panels();
    // One clock and one y scale per column for every run.
    let all_x = runs.iter().flat_map(|r| {
        panels.iter().flat_map(move |p| {
            (p.lines)(r)
                .into_iter()
                .flat_map(|l| l.2.into_iter().map(|v| v.0))
        })
    });
    let (x0, x1) = all_x.fold((0.0f64, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let xaxis = Axis::new(Kind::Linear, "time since start (s, as run)");
    let (xd0, xd1) = Scale::nice(Kind::Linear, x0, x1.max(x0 + 1e-3));
    let ydomains: Vec<(f64, f64)> = panels
        .iter()
        .map(|p| {
            p.axis.domain(runs.iter().flat_map(|r| {
                (p.lines)(r)
                    .into_iter()
                    .flat_map(|l| l.2.into_iter().map(|v| v.1))
            }))
        })
        .collect();

    let (pw, ph, gap, left, top) = (196.0, 96.0, 36.0, 56.0, 40.0);
    let width = left + panels.len() as f64 * (pw + gap) + 4.0;
    let height = top + ph + 46.0;
    let mut out = Vec::new();
    for r in runs {
        let title = format!("{} · {}", crate::summary::label(r), r.name);
        let mut s = svg::open(width, height, &format!("Time series of {title}"));
        s.push_str(&format!(
            "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\" fill=\"#111111\">{}</text>",
            esc(&title)
        ));
        let mut points = 0;
        for (i, p) in panels.iter().enumerate() {
            let f = Rect {
                x: left + i as f64 * (pw + gap),
                y: top,
                w: pw,
                h: ph,
            };
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#333333\">{}</text>",
                c(f.x),
                c(top - 8.0),
                esc(p.title)
            ));
            let series: Vec<Series> = (p.lines)(r)
                .into_iter()
                .map(|(name, slot, pts)| Series {
                    name: name.to_string(),
                    colour: slot,
                    points: pts
                        .into_iter()
                        .map(|(x, y)| Point {
                            x,
                            y,
                            tip: format!("{name} at {} s: {}", num(x, 2), (p.unit)(y)),
                        })
                        .collect(),
                    dashed: false,
                    markers: false,
                })
                .collect();
            let xs = Scale {
                kind: Kind::Linear,
                d0: xd0,
                d1: xd1,
                r0: f.x,
                r1: f.x + f.w,
            };
            let yd = ydomains[i];
            let ys = Scale {
                kind: p.axis.kind,
                d0: yd.0,
                d1: yd.1,
                r0: f.y + f.h,
                r1: f.y,
            };
            let xa = Axis {
                label: if i == 2 {
                    xaxis.label.clone()
                } else {
                    String::new()
                },
                ..xaxis.clone()
            };
            let ya = Axis {
                label: p.axis.label.clone(),
                ..p.axis.clone()
            };
            points += plot_on(&mut s, f, &xs, &ys, &xa, &ya, &series, 9.0);
            if series.iter().all(|s| s.points.is_empty()) {
                s.push_str(&format!(
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#777777\">not recorded</text>",
                    c(f.x + f.w / 2.0),
                    c(f.y + f.h / 2.0)
                ));
            }
        }
        // A small key for the first panel's three lines.
        let key = [("sent", 0usize), ("ok", 2), ("errors", 3)];
        let mut kx = 200.0;
        for (name, slot) in key {
            s.push_str(&format!(
                "<line x1=\"{}\" y1=\"14\" x2=\"{}\" y2=\"14\" stroke=\"{}\" stroke-width=\"2\"/><text x=\"{}\" y=\"18\" font-size=\"11\" fill=\"#333333\">{name}</text>",
                c(kx + 240.0),
                c(kx + 256.0),
                crate::svg::palette::colour(slot),
                c(kx + 260.0)
            ));
            kx += 60.0;
        }
        s.push_str(svg::close());
        out.push(Chart {
            id: format!("series-{}", slug(&r.name)),
            section: Section::Series,
            svg: s,
            points,
        });
    }
    out
}
