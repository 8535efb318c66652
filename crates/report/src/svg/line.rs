//! Line plots: series of points joined by lines, each point a marker with a
//! native `<title>` tooltip; predictions are drawn dashed with hollow markers.

use super::axis;
use super::legend::{self, Entry};
use super::palette::{colour, marker, marker_svg};
use super::scale::{Kind, Scale};
use super::{c, esc, Rect};

/// One data point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// X in data units.
    pub x: f64,
    /// Y in data units.
    pub y: f64,
    /// Tooltip text.
    pub tip: String,
}

/// One line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Palette index.
    pub colour: usize,
    /// Points (sorted by x when drawn).
    pub points: Vec<Point>,
    /// Dashed, hollow markers (a prediction).
    pub dashed: bool,
    /// Draw a marker on every point (off for dense time series).
    pub markers: bool,
}

/// An axis: scale kind, title with unit, optional fixed ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Mapping.
    pub kind: Kind,
    /// Title with unit, e.g. `offered rate (req/s)`.
    pub label: String,
    /// Fixed start (else from the data).
    pub min: Option<f64>,
    /// Fixed end (else from the data).
    pub max: Option<f64>,
}

impl Axis {
    /// An axis whose ends come from the data.
    pub fn new(kind: Kind, label: &str) -> Self {
        Axis {
            kind,
            label: label.to_string(),
            min: None,
            max: None,
        }
    }

    /// The same axis with fixed ends.
    pub fn fixed(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    /// Domain covering `values` (positive values only on log scales).
    pub fn domain(&self, values: impl Iterator<Item = f64>) -> (f64, f64) {
        let usable = |v: &f64| v.is_finite() && (self.kind != Kind::Log || *v > 0.0);
        let (lo, hi) = values
            .filter(usable)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let (lo, hi) = if lo.is_finite() {
            (lo, hi)
        } else {
            (1.0, 10.0)
        };
        let lo = if self.kind == Kind::Linear {
            lo.min(0.0)
        } else {
            lo
        };
        let (a, b) = Scale::nice(self.kind, lo, hi);
        (self.min.unwrap_or(a), self.max.unwrap_or(b))
    }
}

/// Draw series into a frame with both axes; returns the number of points drawn.
pub fn plot(
    out: &mut String,
    f: Rect,
    xa: &Axis,
    ya: &Axis,
    series: &[Series],
    font: f64,
) -> usize {
    let xd = xa.domain(series.iter().flat_map(|s| s.points.iter().map(|p| p.x)));
    let yd = ya.domain(series.iter().flat_map(|s| s.points.iter().map(|p| p.y)));
    let xs = Scale {
        kind: xa.kind,
        d0: xd.0,
        d1: xd.1,
        r0: f.x,
        r1: f.x + f.w,
    };
    let ys = Scale {
        kind: ya.kind,
        d0: yd.0,
        d1: yd.1,
        r0: f.y + f.h,
        r1: f.y,
    };
    plot_on(out, f, &xs, &ys, xa, ya, series, font)
}

/// Draw series on given scales (shared across small multiples).
#[allow(clippy::too_many_arguments)]
pub fn plot_on(
    out: &mut String,
    f: Rect,
    xs: &Scale,
    ys: &Scale,
    xa: &Axis,
    ya: &Axis,
    series: &[Series],
    font: f64,
) -> usize {
    axis::draw(out, f, xs, ys, &xa.label, &ya.label, font);
    let valid = |v: f64, k: Kind| v.is_finite() && (k != Kind::Log || v > 0.0);
    let mut n = 0;
    for s in series {
        let mut pts: Vec<&Point> = s
            .points
            .iter()
            .filter(|p| valid(p.x, xa.kind) && valid(p.y, ya.kind))
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        if pts.is_empty() {
            continue;
        }
        let col = colour(s.colour);
        let clamp = |v: f64, lo: f64, hi: f64| v.max(lo.min(hi)).min(hi.max(lo));
        let xy = |p: &Point| {
            (
                clamp(xs.map(p.x), f.x, f.x + f.w),
                clamp(ys.map(p.y), f.y, f.y + f.h),
            )
        };
        out.push_str(&format!(
            "<g class=\"series\" data-name=\"{}\">",
            esc(&s.name)
        ));
        if pts.len() > 1 {
            let line: Vec<String> = pts
                .iter()
                .map(|p| {
                    let (x, y) = xy(p);
                    format!("{},{}", c(x), c(y))
                })
                .collect();
            let dash = if s.dashed {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            };
            let width = if s.markers { 2.0 } else { 1.5 };
            out.push_str(&format!(
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{col}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"{dash}/>",
                line.join(" ")
            ));
        }
        for p in &pts {
            let (x, y) = xy(p);
            if s.markers || pts.len() == 1 {
                out.push_str(&marker_svg(marker(s.colour), x, y, col, s.dashed, &p.tip));
            } else {
                // Dense series: an invisible hit area still carries the value.
                out.push_str(&format!(
                    "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{col}\" fill-opacity=\"0\"><title>{}</title></circle>",
                    c(x),
                    c(y),
                    esc(&p.tip)
                ));
            }
            n += 1;
        }
        out.push_str("</g>");
    }
    n
}

/// For each solid line, the later-drawn solid line that covers it (the
/// same x values, every y within 1% of the axis' span), if any: a reader
/// seeing four lines for six models is told which lie under which.
pub fn hidden_under(series: &[Series], y: &Axis) -> Vec<Option<usize>> {
    let (d0, d1) = y.domain(series.iter().flat_map(|s| s.points.iter().map(|p| p.y)));
    let close = |a: f64, b: f64| match y.kind {
        Kind::Log if a > 0.0 && b > 0.0 => {
            (a.ln() - b.ln()).abs() <= 0.01 * (d1.ln() - d0.ln()).abs()
        }
        _ => (a - b).abs() <= 0.01 * (d1 - d0).abs(),
    };
    let sorted = |s: &Series| {
        let mut v: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let lines: Vec<Vec<(f64, f64)>> = series.iter().map(sorted).collect();
    let covers = |i: usize, j: usize| {
        !series[j].dashed
            && lines[i].len() == lines[j].len()
            && lines[i]
                .iter()
                .zip(&lines[j])
                .all(|(a, b)| a.0 == b.0 && close(a.1, b.1))
    };
    (0..series.len())
        .map(|i| {
            if series[i].dashed || lines[i].is_empty() {
                return None;
            }
            // The topmost cover: the last drawn.
            (i + 1..series.len()).rev().find(|&j| covers(i, j))
        })
        .collect()
}

/// A complete chart: title, one plot, legend under it.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title.
    pub title: String,
    /// X axis.
    pub x: Axis,
    /// Y axis.
    pub y: Axis,
    /// Lines.
    pub series: Vec<Series>,
    /// Width, px.
    pub width: f64,
    /// Height of the plot area, px.
    pub height: f64,
}

impl LineChart {
    /// The SVG and the number of points drawn.
    pub fn render(&self) -> (String, usize) {
        // Predictions share their model's colour: one legend entry says "dashed".
        let under = hidden_under(&self.series, &self.y);
        let mut entries: Vec<Entry> = self
            .series
            .iter()
            .zip(&under)
            .filter(|(s, _)| !s.points.is_empty() && !s.dashed)
            .map(|(s, top)| Entry {
                name: match top {
                    Some(j) => format!("{} (under {})", s.name, self.series[*j].name),
                    None => s.name.clone(),
                },
                colour: s.colour,
                dashed: false,
            })
            .collect();
        if self.series.iter().any(|s| s.dashed && !s.points.is_empty()) {
            entries.push(Entry {
                name: "predicted (dashed, hollow)".into(),
                colour: legend::GREY,
                dashed: true,
            });
        }
        let (left, right, top) = (70.0, 20.0, 34.0);
        let lw = self.width - left - right;
        let lh = legend::height(&entries, lw);
        let total = top + self.height + 48.0 + lh + 8.0;
        let mut out = super::open(self.width, total, &self.title);
        out.push_str(&format!(
            "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\" fill=\"#111111\">{}</text>",
            c(left - 40.0),
            esc(&self.title)
        ));
        let f = Rect {
            x: left,
            y: top,
            w: lw,
            h: self.height,
        };
        let n = plot(&mut out, f, &self.x, &self.y, &self.series, 11.0);
        legend::draw(&mut out, left, top + self.height + 48.0, lw, &entries);
        out.push_str(super::close());
        (out, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(name: &str, ys: &[f64]) -> Series {
        Series {
            name: name.into(),
            colour: 0,
            points: ys
                .iter()
                .enumerate()
                .map(|(i, &y)| Point {
                    x: i as f64,
                    y,
                    tip: String::new(),
                })
                .collect(),
            dashed: false,
            markers: true,
        }
    }

    /// Issue 35: six models drawn as four lines, nothing saying so. A line
    /// under another is named in the legend with the one on top.
    #[test]
    fn r35_a_line_under_another_says_so_in_the_legend() {
        let series = vec![
            line("pool", &[1.0, 0.9, 0.5]),
            line("loop-async", &[1.0, 0.8, 0.4]),
            line("loop-offload", &[1.0, 0.9, 0.502]),
        ];
        let y = Axis::new(Kind::Linear, "success").fixed(0.0, 1.0);
        assert_eq!(hidden_under(&series, &y), vec![Some(2), None, None]);
        let chart = LineChart {
            title: "t".into(),
            x: Axis::new(Kind::Linear, "x"),
            y,
            series,
            width: 600.0,
            height: 200.0,
        };
        let (svg, _) = chart.render();
        assert!(svg.contains("pool (under loop-offload)"), "{svg}");
        assert!(!svg.contains("loop-async (under"), "{svg}");
    }
}
