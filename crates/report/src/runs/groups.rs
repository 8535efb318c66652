//! Runs that faced the same load (same work, same driver), so that the best
//! model can be marked per offered rate.

use std::collections::BTreeSet;

use iolab_model::experiment::Work;
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::Driver;

use crate::numbers;

/// Runs under one load, in file order.
#[derive(Debug, Clone)]
pub struct Group {
    /// Heading, e.g. `offered 400 req/s · sleep:100 · 5s, timeout 2s`.
    pub title: String,
    /// A short heading for narrow places, e.g. `400 req/s`.
    pub short: String,
    /// Indices into `RunsFile::runs`.
    pub runs: Vec<usize>,
    /// The best run of the group, when it has two or more measured runs.
    pub best: Option<usize>,
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

/// Better run of two: highest goodput, then lowest p99 (HTTP); shortest total (batch).
fn score(run: &RunRecord) -> Option<(f64, f64)> {
    if !run.outcome.is_completed() {
        return None;
    }
    if let Some(a) = &run.attack {
        return Some((a.throughput_rps.goodput, -a.latency_ms.p99));
    }
    let b = run.batch.as_ref()?;
    (b.failed == 0).then_some((-b.total_s, 0.0))
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
                    batch: matches!(run.spec.work, Work::Batch(_)),
                });
            }
        }
    }
    distinguish(file, &mut out);
    for g in &mut out {
        let scored: Vec<(usize, (f64, f64))> = g
            .runs
            .iter()
            .filter_map(|&i| score(&file.runs[i]).map(|s| (i, s)))
            .collect();
        if scored.len() >= 2 {
            g.best = scored
                .iter()
                .fold(None::<(usize, (f64, f64))>, |acc, &(i, s)| match acc {
                    Some((_, b)) if b.0 > s.0 || (b.0 == s.0 && b.1 >= s.1) => acc,
                    _ => Some((i, s)),
                })
                .map(|(i, _)| i);
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

/// Indices of the best run of every group.
pub fn best_set(file: &RunsFile) -> BTreeSet<usize> {
    groups(file).into_iter().filter_map(|g| g.best).collect()
}
