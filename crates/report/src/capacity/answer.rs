//! The answer of a search in words: the capacity with the digits its
//! interval gives it, each rate's decision by its windows, and what
//! "held" meant.

use iolab_model::capacity::{CapacityFile, Interval, Machine, Search, Windows};

use crate::numbers::{ms, num, rate};

/// A rate's decision in a cell: `3/4 met: held`, `0/2 met: failed` (windows that met
/// the objective, of those held).
pub fn windows(w: &Windows) -> String {
    format!(
        "{}/{} met: {}",
        w.passed,
        w.passed + w.failed,
        if w.held { "held" } else { "failed" }
    )
}

/// What "held" meant in a search, from its deciding steps' windows.
pub(super) fn budget_line(s: &Search) -> Option<String> {
    let w = s.steps.iter().find_map(|st| st.windows)?;
    (w.most > 1).then(|| {
        format!(
            "held: a rate is held in up to {} windows (steps) and holds when at most {} of them missed the objective, or their requests together met it",
            w.most, w.allowed
        )
    })
}

/// The capacity `c` with the digits its interval gives it, and the
/// interval: `3,050/s (2,900-3,200)`. Both are rounded to the largest unit
/// (1, 2 or 5 times a power of ten) within a fifth of the interval's width,
/// the ends outward: a figure finer than that was not measured.
/// An interval wider than the capacity itself (a machine too noisy to
/// say) keeps a unit of at most a fifth of the capacity: 23.5/s in
/// 18.7-550 read "0/s (0-600)" (r51_12).
pub fn estimate(c: f64, i: &Interval) -> String {
    let fifth = ((i.high_rps - i.low_rps) / 5.0).min(c / 5.0).max(1e-3);
    let power = 10f64.powf(fifth.log10().floor());
    let unit = [5.0, 2.0, 1.0]
        .into_iter()
        .map(|k| k * power)
        .find(|u| *u <= fifth)
        .unwrap_or(power);
    let shown = |v: f64| {
        if unit < 1.0 {
            num(v, (-unit.log10()).ceil() as usize)
        } else {
            rate(v)
        }
    };
    format!(
        "{}/s ({}-{})",
        shown((c / unit).round() * unit),
        shown((i.low_rps / unit).floor() * unit),
        shown((i.high_rps / unit).ceil() * unit)
    )
}

/// The answer in one line: the estimate and its interval when the search
/// has one, then the rates that bracket it.
pub fn answer(s: &Search) -> String {
    let width = num(s.bracket_width_pct.unwrap_or(0.0), 1);
    match (s.capacity_rps, s.failed_rps, &s.interval) {
        (Some(c), Some(f), Some(i)) => format!(
            "capacity {}: {}/s held, {}/s failed (the bracket is {width}% wide)",
            estimate(c, i),
            rate(c),
            rate(f)
        ),
        (Some(c), Some(f), None) => format!(
            "capacity {}/s (passed; {}/s failed: the bracket is {width}% wide)",
            rate(c),
            rate(f)
        ),
        (Some(c), None, _) => format!("capacity at least {}/s (nothing failed)", rate(c)),
        (None, Some(f), _) => format!("no capacity: even {}/s failed", rate(f)),
        (None, None, _) => "no step was measured".into(),
    }
}

/// The machine's noise through the search in one sentence, from its
/// figures: steady enough for the precision asked, or not, and then the
/// interval it widened to (issue 51).
pub fn machine_line(s: &Search) -> Option<String> {
    let m = s.machine.as_ref()?;
    let mut seen = Vec::new();
    for (speed, place) in [
        (&m.generator_cpu, "the generator's"),
        (&m.target_cpu, "the target's"),
    ] {
        if let Some(c) = speed {
            seen.push(format!(
                "the CPU's speed moved {}% on {place} cores (a fixed loop took {} to {})",
                num(c.spread_pct(), 0),
                ms(c.p10_ms),
                ms(c.p90_ms)
            ));
        }
    }
    if let Some(st) = m.steal_pct {
        seen.push(format!("{}% of the CPU time was stolen", num(st, 1)));
    }
    if let Some(n) = &m.neighbours {
        let took = match n.took_pct > 0.0 {
            true => format!(
                "; they kept one of the target's threads waiting up to {}% of a second",
                num(n.took_pct, 0)
            ),
            false => String::new(),
        };
        seen.push(format!(
            "other processes used {}% of the target's cores (at most {}% in a second{took})",
            num(n.mean_pct, 0),
            num(n.peak_pct, 0)
        ));
    }
    if let Some(p) = &m.pauses {
        let longest = p
            .longest_s
            .map(|l| format!("; the longest {}", ms(l * 1000.0)))
            .unwrap_or_default();
        seen.push(format!(
            "the target paused {} times for {} ({} in all, {}% of the search{longest}: its own, not the machine's)",
            num(p.count, 0),
            p.what,
            ms(p.total_s * 1000.0),
            num(p.share_pct(), 1)
        ));
    }
    if let Some(d) = &m.loop_delay {
        seen.push(format!(
            "the target held its own event loop up to {} in a step (at {}/s: its own, not the machine's)",
            ms(d.longest_s * 1000.0),
            rate(d.at_rps)
        ));
    }
    let seen = seen.join(", ");
    let asked = num(m.asked_pct, 0);
    if m.allows() {
        return Some(format!(
            "machine: steady enough for the {asked}% asked: {seen} (it may move a capacity by {})",
            reach(m)
        ));
    }
    let between = match (&s.interval, s.capacity_rps) {
        (Some(i), Some(_)) => format!(
            ": the capacity is between {}/s and {}/s",
            rate(i.low_rps),
            rate(i.high_rps)
        ),
        _ => String::new(),
    };
    Some(format!(
        "machine: too noisy for the {asked}% asked: {seen}, which may move a capacity by {}{between}; rerun on quieter cores for ±{asked}%",
        reach(m)
    ))
}

/// How far the machine may move a capacity: a share below 100%, a factor
/// past it ("1899.9%" has digits nobody measured: "20x").
fn reach(m: &Machine) -> String {
    match m.reach() {
        r if r < 1.0 => format!("{}%", num(r * 100.0, 1)),
        r => format!("up to {}x", num(1.0 + r, 0)),
    }
}

/// The machine did not allow the precision the search asked for.
pub fn too_noisy(s: &Search) -> bool {
    s.machine.as_ref().is_some_and(|m: &Machine| !m.allows())
}

/// `--repeat N` in one line from its figures: each run's answer, their
/// median and spread, how many intervals hold the median, and the interval
/// over every run.
pub fn repeat_line(doc: &CapacityFile) -> Option<String> {
    let r = doc.repeat.as_ref()?;
    let each: Vec<String> = r
        .capacities_rps
        .iter()
        .map(|c| c.map_or("none".into(), rate))
        .collect();
    let mut line = format!("{} searches: {} /s", r.runs, each.join(", "));
    if let (Some(m), Some(x)) = (r.median_rps, r.max_over_min) {
        line.push_str(&format!("; median {}/s, max/min {}", rate(m), num(x, 2)));
    }
    if r.intervals > 0 {
        line.push_str(&format!(
            "; {} of {} intervals hold the median",
            r.intervals_holding_median, r.intervals
        ));
    }
    if let (Some(m), Some(i)) = (r.median_rps, r.interval) {
        line.push_str(&format!("; capacity {} over every run", estimate(m, &i)));
    }
    Some(line)
}
