//! Per-run small multiples on one clock: requests per second (sent, ok,
//! errors), p50 and p99, target threads, RSS and requests in flight, each
//! column on one y scale for every run so rows compare at a glance. Drawn
//! from [`RunSeries`], so a results folder and a live page (a run still
//! under way) share one chart.

use iolab_model::attack::SeriesPoint;
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::telemetry::TelemetryPoint;

use super::{slug, Chart, Section};
use crate::numbers::{ms, num};
use crate::svg::line::{plot_on, Axis, Point, Series};
use crate::svg::scale::{Kind, Scale};
use crate::svg::{self, c, esc, Rect};

/// Lines of one panel for one run: (name, palette slot, (x, y) points).
type Lines = Vec<(&'static str, usize, Vec<(f64, f64)>)>;

/// What one run's chart is drawn from.
#[derive(Debug, Clone)]
pub struct RunSeries<'a> {
    /// The chart's title.
    pub title: String,
    /// File-name-safe id (`series-<id>`).
    pub id: String,
    /// The attack's series (empty when there is none).
    pub series: &'a [SeriesPoint],
    /// Width of one series interval, s.
    pub interval_s: f64,
    /// The target's telemetry on the attack's clock.
    pub telemetry: &'a [TelemetryPoint],
}

impl<'a> RunSeries<'a> {
    fn of(r: &'a RunRecord) -> RunSeries<'a> {
        RunSeries {
            title: format!("{} · {}", crate::runs::summary::label(r), r.name),
            id: slug(&r.name),
            series: r
                .attack
                .as_ref()
                .map(|a| a.series.as_slice())
                .unwrap_or(&[]),
            interval_s: interval(r),
            telemetry: &r.telemetry.series,
        }
    }
}

struct Panel {
    title: &'static str,
    axis: Axis,
    /// Series of one run: (name, palette slot, points).
    lines: Box<dyn Fn(&RunSeries) -> Lines>,
    unit: fn(f64) -> String,
}

fn interval(r: &RunRecord) -> f64 {
    match &r.spec.work {
        iolab_model::experiment::Work::Http(h) => h.interval.as_secs_f64().max(1e-6),
        _ => 1.0,
    }
}

/// Sent, ok and errors per second, at the middle of each interval.
fn rates_panel() -> Panel {
    Panel {
        title: "requests per second",
        axis: Axis::new(Kind::Linear, "req/s"),
        lines: Box::new(|r| {
            let iv = r.interval_s.max(1e-6);
            let per_s = |f: fn(&SeriesPoint) -> u64| {
                r.series
                    .iter()
                    .map(|p| (p.t_s + iv / 2.0, f(p) as f64 / iv))
                    .collect()
            };
            vec![
                ("sent", 0, per_s(|p| p.sent)),
                ("ok", 2, per_s(|p| p.ok)),
                ("errors", 3, per_s(|p| p.errors)),
            ]
        }),
        unit: |v| format!("{}/s", num(v, 1)),
    }
}

/// p50 and p99 of the intervals that had a success.
fn latency_panel() -> Panel {
    Panel {
        title: "p50 and p99 latency",
        axis: Axis::new(Kind::Log, "ms, log"),
        lines: Box::new(|r| {
            let iv = r.interval_s.max(1e-6);
            let at = |f: fn(&SeriesPoint) -> f64| {
                r.series
                    .iter()
                    .filter(|p| p.ok > 0)
                    .map(|p| (p.t_s + iv / 2.0, f(p)))
                    .collect()
            };
            vec![("p50", 5, at(|p| p.p50_ms)), ("p99", 1, at(|p| p.p99_ms))]
        }),
        unit: ms,
    }
}

/// One line of the target's telemetry (points without a value are skipped).
fn telemetry_panel(
    title: &'static str,
    axis: Axis,
    line: (&'static str, usize),
    get: fn(&TelemetryPoint) -> Option<f64>,
    unit: fn(f64) -> String,
) -> Panel {
    Panel {
        title,
        axis,
        lines: Box::new(move |r| {
            let points = r
                .telemetry
                .iter()
                .filter_map(|p| Some((p.t_s, get(p)?)))
                .collect();
            vec![(line.0, line.1, points)]
        }),
        unit,
    }
}

fn panels() -> Vec<Panel> {
    vec![
        rates_panel(),
        latency_panel(),
        telemetry_panel(
            "target threads",
            Axis::new(Kind::Linear, "threads"),
            ("threads", 4),
            |p| Some(p.threads as f64),
            |v| num(v, 0),
        ),
        telemetry_panel(
            "RSS",
            Axis::new(Kind::Linear, "MiB"),
            ("RSS", 5),
            |p| Some(p.rss_mb),
            |v| format!("{} MiB", num(v, 1)),
        ),
        telemetry_panel(
            "in flight at the target",
            Axis::new(Kind::Linear, "requests"),
            ("in flight", 6),
            |p| p.in_flight,
            |v| num(v, 0),
        ),
    ]
}

/// What every run's chart shares: one clock, and one y scale per column.
struct Layout {
    panels: Vec<Panel>,
    x: (f64, f64),
    y: Vec<(f64, f64)>,
}

const PW: f64 = 196.0;
const PH: f64 = 96.0;
const GAP: f64 = 36.0;
const LEFT: f64 = 56.0;
const TOP: f64 = 40.0;

fn layout(runs: &[RunSeries]) -> Layout {
    let panels = panels();
    let all_x = runs.iter().flat_map(|r| {
        panels.iter().flat_map(move |p| {
            (p.lines)(r)
                .into_iter()
                .flat_map(|l| l.2.into_iter().map(|v| v.0))
        })
    });
    let (x0, x1) = all_x.fold((0.0f64, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let x = Scale::nice(Kind::Linear, x0, x1.max(x0 + 1e-3));
    let y = panels
        .iter()
        .map(|p| {
            p.axis.domain(runs.iter().flat_map(|r| {
                (p.lines)(r)
                    .into_iter()
                    .flat_map(|l| l.2.into_iter().map(|v| v.1))
            }))
        })
        .collect();
    Layout { panels, x, y }
}

/// Panel `i` of run `r` into `s`; returns the points drawn.
fn panel(s: &mut String, lay: &Layout, i: usize, r: &RunSeries) -> usize {
    let p = &lay.panels[i];
    let f = Rect {
        x: LEFT + i as f64 * (PW + GAP),
        y: TOP,
        w: PW,
        h: PH,
    };
    s.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#333333\">{}</text>",
        c(f.x),
        c(TOP - 8.0),
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
    let scale = |kind, (d0, d1): (f64, f64), r0, r1| Scale {
        kind,
        d0,
        d1,
        r0,
        r1,
    };
    let xs = scale(Kind::Linear, lay.x, f.x, f.x + f.w);
    let ys = scale(p.axis.kind, lay.y[i], f.y + f.h, f.y);
    let xlabel = if i == 2 {
        "time since start (s, as run)"
    } else {
        ""
    };
    let xa = Axis::new(Kind::Linear, xlabel);
    let points = plot_on(s, f, &xs, &ys, &xa, &p.axis, &series, 9.0);
    if series.iter().all(|s| s.points.is_empty()) {
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#777777\">not recorded</text>",
            c(f.x + f.w / 2.0),
            c(f.y + f.h / 2.0)
        ));
    }
    points
}

/// Where the title's bold 13 px text ends, px (DejaVu Sans Bold averages
/// about 0.6 em a character): the key starts after it.
fn title_end(title: &str) -> f64 {
    8.0 + title.chars().count() as f64 * 7.8
}

/// x of the key's first entry: at 440 px, or after a longer title, so
/// the two never overlap (issue 35: a run's title ran under its key).
fn key_x(title: &str) -> f64 {
    KEY_X.max(title_end(title) + 16.0)
}

/// The key's default x, and the width its three entries take.
const KEY_X: f64 = 440.0;
const KEY_W: f64 = 180.0;

/// A small key for the first panel's three lines, from `x0`.
fn key(s: &mut String, x0: f64) {
    let mut kx = x0;
    for (name, slot) in [("sent", 0usize), ("ok", 2), ("errors", 3)] {
        s.push_str(&format!(
            "<line x1=\"{}\" y1=\"14\" x2=\"{}\" y2=\"14\" stroke=\"{}\" stroke-width=\"2\"/><text x=\"{}\" y=\"18\" font-size=\"11\" fill=\"#333333\">{name}</text>",
            c(kx),
            c(kx + 16.0),
            crate::svg::palette::colour(slot),
            c(kx + 20.0)
        ));
        kx += 60.0;
    }
}

/// One chart per run that has a series or telemetry.
pub fn charts(file: &RunsFile) -> Vec<Chart> {
    let runs: Vec<RunSeries> = file
        .runs
        .iter()
        .filter(|r| {
            r.attack.as_ref().is_some_and(|a| !a.series.is_empty())
                || !r.telemetry.series.is_empty()
        })
        .map(RunSeries::of)
        .collect();
    draw(&runs)
}

/// One chart per run, on one clock and one y scale per column.
pub fn draw(runs: &[RunSeries]) -> Vec<Chart> {
    if runs.is_empty() {
        return vec![];
    }
    let lay = layout(runs);
    let panels_width = LEFT + lay.panels.len() as f64 * (PW + GAP) + 4.0;
    let height = TOP + PH + 46.0;
    let mut out = Vec::new();
    for r in runs {
        let kx = key_x(&r.title);
        let width = panels_width.max(kx + KEY_W);
        let mut s = svg::open(width, height, &format!("Time series of {}", r.title));
        s.push_str(&format!(
            "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\" fill=\"#111111\">{}</text>",
            esc(&r.title)
        ));
        let points = (0..lay.panels.len())
            .map(|i| panel(&mut s, &lay, i, r))
            .sum();
        key(&mut s, kx);
        s.push_str(svg::close());
        out.push(Chart {
            id: format!("series-{}", r.id),
            section: Section::Series,
            svg: s,
            points,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: a per-run chart's title overlapped its key. The key now
    /// starts after the title, however long, and the chart is wide enough.
    #[test]
    fn r35_the_key_starts_after_a_long_title() {
        assert_eq!(key_x("pool"), KEY_X);
        let long = "python-showdown loop-offload rate=200 processes=4 rep 2";
        assert!(
            title_end(long) + 16.0 > KEY_X,
            "the case must be a long title"
        );
        assert!(key_x(long) >= title_end(long) + 16.0);
    }
}
