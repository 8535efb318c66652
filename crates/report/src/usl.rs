//! A capacity search's closed-loop sweep (`iolab capacity --sweep N`): one
//! row per level (the throughput measured, the USL's and the queueing fit's
//! for it), the fitted σ, κ, λ with their intervals, the peak, and which
//! fit predicted the check at twice N better; and a chart of throughput
//! against clients. Every sentence is made from the numbers of the
//! [`Sweep`] it sits beside.

use iolab_model::capacity::usl::{Closer, Estimate, Sweep, SweepLevel, TwiceCheck, UslFit};
use iolab_model::capacity::Search;

use crate::grid::Grid;
use crate::numbers::{ms, num, opt, percent, rate, secs};
use crate::svg::line::{Axis, LineChart, Point, Series};
use crate::svg::scale::Kind;

/// One line per level, for progress: `sweep   12 clients for 1.00s: 150/s (...)`.
pub fn level_line(l: &SweepLevel) -> String {
    format!(
        "sweep   {:>5} clients for {}: {}/s (p99 {}, success {})",
        l.concurrency,
        secs(l.duration_s),
        rate(l.throughput_rps),
        ms(l.p99_ms),
        percent(l.success_ratio)
    )
}

/// The sweep as text: its table, then its lines.
pub fn section(s: &Sweep) -> Vec<String> {
    let mut out = levels(s).text();
    out.extend(lines(s));
    out
}

/// One row per level, the check at 2N last.
pub fn levels(s: &Sweep) -> Grid {
    let mut g = Grid::new(
        &[
            "clients",
            "for",
            "X(n)/s",
            "USL/s",
            "queueing/s",
            "success",
            "p50",
            "p99",
        ],
        &[true, true, true, true, true, true, true, true],
    );
    let twice = s.twice.as_ref().map(|t| &t.measured);
    for l in s.levels.iter().chain(twice) {
        g.rows.push(vec![
            l.concurrency.to_string(),
            secs(l.duration_s),
            rate(l.throughput_rps),
            opt(l.usl_rps, rate),
            opt(l.queueing_rps, rate),
            percent(l.success_ratio),
            ms(l.p50_ms),
            ms(l.p99_ms),
        ]);
    }
    g
}

/// A coefficient to three significant digits: `0.0523`, `0.000312`, `0`.
pub fn coefficient(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    num(v, digits)
}

/// `22.4/s (8.9 to 35.8)`: the value, its unit, its interval.
fn interval(e: &Estimate, f: fn(f64) -> String, unit: &str) -> String {
    format!("{}{unit} ({} to {})", f(e.value), f(e.low), f(e.high))
}

/// The sweep's lines: what was swept, the law fitted, its peak, the check.
pub fn lines(s: &Sweep) -> Vec<String> {
    let mut out = vec![format!(
        "sweep: {} levels of closed-loop clients, 1 to {}, {} each{} (in {})",
        s.levels.len(),
        s.levels.last().map_or(0, |l| l.concurrency),
        secs(s.step_s),
        s.twice.as_ref().map_or(String::new(), |t| format!(
            ", then {} clients",
            t.concurrency
        )),
        secs(s.elapsed_s)
    )];
    if let Some(why) = &s.stopped {
        out.push(format!("sweep stopped: {why}"));
    }
    match &s.fit {
        Some(f) => {
            out.push(fit_line(f));
            out.push(peak_line(f));
        }
        None => out.push(format!(
            "USL: not fitted ({} levels answered; it takes {})",
            s.levels.iter().filter(|l| l.throughput_rps > 0.0).count(),
            iolab_model::limits::MIN_SWEEP
        )),
    }
    if let Some(t) = &s.twice {
        out.push(check_line(t));
    }
    out
}

fn fit_line(f: &UslFit) -> String {
    format!(
        "USL: X(n) = λn / (1 + σ(n-1) + κn(n-1)), λ = {}, σ = {}, κ = {} (95% intervals from the Jacobian's covariance; R² = {}, {} levels)",
        interval(&f.lambda, rate, "/s"),
        interval(&f.sigma, coefficient, ""),
        interval(&f.kappa, coefficient, ""),
        num(f.r_squared, 4),
        f.levels
    )
}

fn peak_line(f: &UslFit) -> String {
    match (f.peak_concurrency, f.peak_rps) {
        (Some(n), Some(x)) => format!(
            "USL peak: N* = sqrt((1 - σ) / κ) = {} clients, at {}/s; past it throughput falls",
            num(n, 1),
            rate(x)
        ),
        _ if f.sigma.value >= 1.0 => format!(
            "USL peak: none: σ = {}, so one client is the most that helps",
            coefficient(f.sigma.value)
        ),
        _ => format!(
            "USL peak: none: κ cannot be told from 0 over the sweep ({} to {}), so the law predicts no fall{}",
            coefficient(f.kappa.low),
            coefficient(f.kappa.high),
            if f.sigma.value > 0.0 {
                format!(
                    "; throughput nears λ / σ = {}/s",
                    rate(f.lambda.value / f.sigma.value)
                )
            } else {
                String::new()
            }
        ),
    }
}

/// An error, signed, one decimal: `+4.2%`.
pub fn error(pct: f64) -> String {
    format!("{pct:+.1}%")
}

/// Which fit predicted 2N better, and by how much.
pub fn check_line(t: &TwiceCheck) -> String {
    let head = format!(
        "at twice N, {} clients: measured {}/s; the USL predicted {}/s ({})",
        t.concurrency,
        rate(t.measured.throughput_rps),
        rate(t.usl_rps),
        error(t.usl_error_pct)
    );
    match (
        t.queueing_rps,
        t.queueing_error_pct,
        t.closer,
        t.margin_points,
    ) {
        (Some(q), Some(e), Some(c), Some(m)) => {
            let verdict = match c {
                Closer::Usl => format!("the USL was closer, by {} points", num(m, 1)),
                Closer::Queueing => format!("the queueing fit was closer, by {} points", num(m, 1)),
                Closer::Tie => match t.noise_pct {
                    Some(n) => format!(
                        "a tie: either could be closer within the measurement's noise (±{}%)",
                        num(n, 1)
                    ),
                    None => "a tie".into(),
                },
            };
            format!(
                "{head}, the queueing fit {}/s ({}): {verdict}",
                rate(q),
                error(e)
            )
        }
        _ => format!("{head}; the queueing fit predicted nothing (the search fitted no model)"),
    }
}

/// Several services' sweeps side by side, as docs/capacity.md shows them
/// (its saved documents under `docs/results/capacity/`): per service (its name,
/// its search) σ and κ with their 95% intervals, the peak N*, the check at
/// twice N (measured, each law's error, which was closer and the
/// measurement's noise), and how long the search and the sweep took.
pub fn services(rows: &[(String, &Search)]) -> Grid {
    let mut g = Grid::new(
        &[
            "service",
            "σ (95%)",
            "κ (95%)",
            "N*",
            "measured X(2N)",
            "USL error",
            "queueing error",
            "closer (noise)",
            "search took",
            "sweep took",
        ],
        &[false, true, true, true, true, true, true, false, true, true],
    );
    for (name, s) in rows {
        let sweep = s.sweep.as_ref();
        let fit = sweep.and_then(|w| w.fit.as_ref());
        let twice = sweep.and_then(|w| w.twice.as_ref());
        let closer = twice.and_then(|t| {
            let c = match t.closer? {
                Closer::Usl => "USL",
                Closer::Queueing => "queueing",
                Closer::Tie => "tie",
            };
            Some(match t.noise_pct {
                Some(n) => format!("{c} (±{}%)", num(n, 1)),
                None => c.to_string(),
            })
        });
        let est = |e: &Estimate| {
            format!(
                "{} ({} to {})",
                coefficient(e.value),
                coefficient(e.low),
                coefficient(e.high)
            )
        };
        g.rows.push(vec![
            name.clone(),
            opt(fit.map(|f| f.sigma), |e| est(&e)),
            opt(fit.map(|f| f.kappa), |e| est(&e)),
            match fit {
                Some(f) => f.peak_concurrency.map_or("none".into(), |n| num(n, 1)),
                None => "-".into(),
            },
            opt(twice, |t| {
                format!(
                    "{}/s at {} clients",
                    rate(t.measured.throughput_rps),
                    t.concurrency
                )
            }),
            opt(twice.map(|t| t.usl_error_pct), error),
            opt(twice.and_then(|t| t.queueing_error_pct), error),
            closer.unwrap_or_else(|| sweep.and_then(|w| w.stopped.clone()).unwrap_or("-".into())),
            secs(s.elapsed_s),
            opt(sweep.map(|w| w.elapsed_s), secs),
        ]);
    }
    g
}

/// Throughput against clients: measured (solid), the USL's curve and the
/// queueing fit's levels (dashed); `None` without a sweep.
pub fn chart(name: &str, s: &Sweep) -> Option<String> {
    let measured: Vec<&SweepLevel> = s
        .levels
        .iter()
        .chain(s.twice.as_ref().map(|t| &t.measured))
        .collect();
    if measured.is_empty() {
        return None;
    }
    let top = measured.iter().map(|l| l.concurrency).max().unwrap_or(1);
    let point = |n: f64, x: f64, tip: String| Point { x: n, y: x, tip };
    let mut series = vec![Series {
        name: format!("{name} (measured)"),
        colour: 0,
        points: measured
            .iter()
            .map(|l| {
                let tip = format!("{} clients: {}/s", l.concurrency, rate(l.throughput_rps));
                point(f64::from(l.concurrency), l.throughput_rps, tip)
            })
            .collect(),
        dashed: false,
        markers: true,
    }];
    if let Some(f) = &s.fit {
        let steps = 60;
        series.push(Series {
            name: "USL".into(),
            colour: 1,
            points: (0..=steps)
                .map(|i| {
                    let n = 1.0 + f64::from(top - 1) * f64::from(i) / f64::from(steps);
                    point(
                        n,
                        f.throughput(n),
                        format!("USL at {}: {}/s", num(n, 1), rate(f.throughput(n))),
                    )
                })
                .collect(),
            dashed: true,
            markers: false,
        });
    }
    let queueing: Vec<Point> = measured
        .iter()
        .filter_map(|l| {
            let q = l.queueing_rps?;
            Some(point(
                f64::from(l.concurrency),
                q,
                format!("queueing fit at {}: {}/s", l.concurrency, rate(q)),
            ))
        })
        .collect();
    if !queueing.is_empty() {
        series.push(Series {
            name: "queueing fit".into(),
            colour: 2,
            points: queueing,
            dashed: true,
            markers: true,
        });
    }
    let chart = LineChart {
        title: "throughput vs closed-loop clients".into(),
        x: Axis::new(Kind::Linear, "clients"),
        y: Axis::new(Kind::Linear, "throughput (req/s)"),
        series,
        width: 560.0,
        height: 260.0,
    };
    Some(chart.render().0)
}

#[cfg(test)]
mod tests;
