//! Runs that faced the same load (same work, same driver), so that the best
//! model can be marked per offered rate: only when it is better beyond the
//! runs' noise (`iolab_model::noise`); otherwise the leaders are a tie.

use std::collections::BTreeSet;

use iolab_model::experiment::Work;
use iolab_model::noise::{self, Figure};
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::Driver;

use crate::numbers;

/// The mark of the best run in its group.
pub const BEST: &str = "★";

/// The mark of each run tied for best: no one of them is better beyond
/// the noise.
pub const TIE: &str = "=";

/// Runs under one load, in file order.
#[derive(Debug, Clone)]
pub struct Group {
    /// Heading, e.g. `offered 400 req/s · sleep:100 · 5s, timeout 2s`.
    pub title: String,
    /// A short heading for narrow places, e.g. `400 req/s`.
    pub short: String,
    /// Indices into `RunsFile::runs`.
    pub runs: Vec<usize>,
    /// The best run of the group, when it has two or more measured runs
    /// and one is better than the rest by more than their noise.
    pub best: Option<usize>,
    /// The runs tied for best (two or more, within each other's noise),
    /// when no one run is best.
    pub tied: Vec<usize>,
    /// True for batch runs.
    pub batch: bool,
}

fn key(run: &RunRecord) -> String {
    match &run.spec.work {
        Work::Http(h) => format!(
            "http|{}|{}|{}|{}",
            h.steps,
            serde_json::to_string(&h.driver).unwrap_or_default(),
            serde_json::to_string(&h.connections).unwrap_or_default(),
            h.timeout.as_secs_f64()
        ),
        Work::Batch(b) => format!(
            "batch|{}|{}",
            serde_json::to_string(&b.tasks).unwrap_or_default(),
            b.master.as_ref().map_or(0, |m| m.workers)
        ),
    }
}

fn title(run: &RunRecord) -> String {
    match &run.spec.work {
        Work::Http(h) => {
            let load = match &h.driver {
                Driver::Open { .. } => format!(
                    "offered {} req/s",
                    numbers::rate(h.driver.peak_rate().unwrap_or(0.0))
                ),
                Driver::Closed { concurrency, .. } => {
                    format!("{concurrency} clients (closed loop)")
                }
            };
            let dur = h
                .driver
                .duration()
                .map(|d| format!("{}, ", numbers::secs(d.as_secs_f64())))
                .unwrap_or_default();
            format!(
                "{load} · {} · {dur}timeout {}",
                h.steps,
                numbers::secs(h.timeout.as_secs_f64())
            )
        }
        Work::Batch(b) => {
            let tasks = match &b.tasks {
                iolab_model::batch::TaskMix::Calls { n, ms } => {
                    format!("{} calls of {}", numbers::count(*n), numbers::ms(*ms))
                }
                iolab_model::batch::TaskMix::Mixed { cpu, io, .. } => {
                    format!("{} tasks ({cpu} cpu, {io} io)", cpu + io)
                }
            };
            match &b.master {
                Some(m) => format!("{tasks} · {} workers", m.workers),
                None => tasks,
            }
        }
    }
}

fn short(run: &RunRecord) -> String {
    match &run.spec.work {
        Work::Http(h) => match &h.driver {
            Driver::Open { .. } => format!(
                "{} req/s",
                numbers::rate(h.driver.peak_rate().unwrap_or(0.0))
            ),
            Driver::Closed { concurrency, .. } => format!("{concurrency} clients"),
        },
        Work::Batch(b) => {
            let tasks = match &b.tasks {
                iolab_model::batch::TaskMix::Calls { n, .. } => {
                    format!("{} calls", numbers::count(*n))
                }
                iolab_model::batch::TaskMix::Mixed { cpu, io, .. } => format!("{} tasks", cpu + io),
            };
            match &b.master {
                Some(m) => format!("W={}", m.workers),
                None => tasks,
            }
        }
    }
}

/// What a run is ranked by, each with its noise ([`iolab_model::noise`]):
/// goodput then p99 (HTTP, higher then lower is better), or the total
/// (batch, lower is better); `None` for a run that did not complete.
fn figures(run: &RunRecord) -> Option<(Figure, Figure)> {
    if !run.outcome.is_completed() {
        return None;
    }
    if let Some(a) = &run.attack {
        return Some((noise::goodput(a, &run.reps), noise::p99(a, &run.reps)));
    }
    let b = run.batch.as_ref()?;
    let total = noise::batch_total(b);
    // Lower is better: ranked as its negative.
    let neg = Figure {
        value: -total.value,
        noise: total.noise,
    };
    (b.failed == 0).then_some((
        neg,
        Figure {
            value: 0.0,
            noise: 0.0,
        },
    ))
}

/// The best of `scored` (index, (first, second)), higher first figure
/// better, then lower second: one run when it beats every other beyond
/// the noise, else the runs tied with the leader (`Err`).
fn rank(scored: &[(usize, (Figure, Figure))]) -> Result<usize, Vec<usize>> {
    let Some(lead) = scored
        .iter()
        .max_by(|a, b| a.1 .0.value.total_cmp(&b.1 .0.value))
    else {
        return Err(Vec::new());
    };
    let level: Vec<_> = scored
        .iter()
        .filter(|(_, f)| !f.0.differs(&lead.1 .0))
        .collect();
    let low = level
        .iter()
        .min_by(|a, b| a.1 .1.value.total_cmp(&b.1 .1.value))
        .expect("the leader is level with itself");
    let tied: Vec<usize> = level
        .iter()
        .filter(|(_, f)| !f.1.differs(&low.1 .1))
        .map(|(i, _)| *i)
        .collect();
    match tied.as_slice() {
        [one] => Ok(*one),
        _ => Err(tied),
    }
}

/// Groups in order of first appearance.
pub fn groups(file: &RunsFile) -> Vec<Group> {
    let mut keys: Vec<String> = Vec::new();
    let mut out: Vec<Group> = Vec::new();
    for (i, run) in file.runs.iter().enumerate() {
        let k = key(run);
        match keys.iter().position(|x| *x == k) {
            Some(g) => out[g].runs.push(i),
            None => {
                keys.push(k);
                out.push(Group {
                    title: title(run),
                    short: short(run),
                    runs: vec![i],
                    best: None,
                    tied: Vec::new(),
                    batch: matches!(run.spec.work, Work::Batch(_)),
                });
            }
        }
    }
    distinguish(file, &mut out);
    for g in &mut out {
        let scored: Vec<(usize, (Figure, Figure))> = g
            .runs
            .iter()
            .filter_map(|&i| figures(&file.runs[i]).map(|s| (i, s)))
            .collect();
        if scored.len() >= 2 {
            match rank(&scored) {
                Ok(best) => g.best = Some(best),
                Err(tied) => g.tied = tied,
            }
        }
    }
    out
}

/// Groups whose headings would read the same (they differ in something the
/// heading does not say, e.g. E2's connection mode) get the coordinates that
/// tell them apart appended: `· connections=new-per-request`.
fn distinguish(file: &RunsFile, groups: &mut [Group]) {
    for i in 0..groups.len() {
        let same: Vec<usize> = (0..groups.len())
            .filter(|&j| groups[j].title == groups[i].title)
            .collect();
        if same.len() < 2 {
            continue;
        }
        let coords = |g: &Group| file.runs[g.runs[0]].coordinates.clone();
        let mut keys: BTreeSet<String> = BTreeSet::new();
        for &j in &same {
            for (k, v) in coords(&groups[j]) {
                if matches!(k.as_str(), "model" | "target") {
                    continue;
                }
                if same.iter().any(|&o| coords(&groups[o]).get(&k) != Some(&v)) {
                    keys.insert(k);
                }
            }
        }
        for &j in &same {
            let c = coords(&groups[j]);
            for k in &keys {
                let v = c.get(k).map_or("-".to_string(), |v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                groups[j].title += &format!(" · {k}={v}");
                groups[j].short += &format!(" {k}={v}");
            }
        }
    }
}

impl Group {
    /// The mark of run `i` in its group's tables: [`BEST`],
    /// [`TIE`] or nothing.
    pub fn mark(&self, i: usize) -> &'static str {
        if self.best == Some(i) {
            BEST
        } else if self.tied.contains(&i) {
            TIE
        } else {
            ""
        }
    }
}
