//! The cost of waiting (preset `cost-of-waiting`, docs/runtimes.md): what one
//! waiting request costs each target, from runs that hold C requests at once.
//!
//! Each run is a closed loop of C clients that each send one request whose IO
//! outlasts the run, so for most of it the target holds C waiting requests
//! while nothing arrives and nothing completes. The run's *plateau* is every
//! measured telemetry sample holding at least 95% of its highest count (the
//! target's own in-flight plus queued, or the kernel's established connections
//! when `/metrics` is silent); its RSS and in-flight are the plateau's medians
//! and its CPU the CPU seconds per second across it. A least-squares line
//! through a target's levels (in flight, RSS) gives the memory per waiting
//! request (slope) and the base under it (intercept); through (in flight,
//! CPU-s/s) the CPU per waiting request. A slope is read as a cost only when
//! the levels lie on its line (r² at least [`STRAIGHT_R2`] through three or
//! more levels) and it rises: a JVM's heap or JIT moves RSS and CPU by rules
//! of their own, and a line through such points would print a precise-looking
//! number that is noise. What holds before it fails is
//! predicted from the model's shape and the machine's limits. [`render`]
//! lays it out for every document.

mod fit;
pub mod render;

pub use fit::{fit, straight, Line, STRAIGHT_R2};

use iolab_model::concurrency::{Capacity, Host};
use iolab_model::driver::Driver;
use iolab_model::experiment::Work;
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::telemetry::{Telemetry, TelemetryPoint};
use serde_json::Value;

use crate::runs::summary::label;

/// The metric a `[published]` row gives per task (KiB), matched to a target.
pub const TASK_KIB: &str = "task_kib";

/// One level: a run holding `clients` requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Index of the run in the file.
    pub run: usize,
    /// Clients of the closed loop (requests sent at once).
    pub clients: u32,
    /// Requests the target held on the plateau (median).
    pub in_flight: f64,
    /// RSS on the plateau (median), MiB.
    pub rss_mb: f64,
    /// CPU seconds per second across the plateau.
    pub cpu_per_s: Option<f64>,
    /// Seconds the plateau lasted.
    pub span_s: f64,
    /// Requests sent but not answered 2xx.
    pub failed: u64,
}

/// A published per-task figure set beside a target.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    /// KiB per task.
    pub kib: f64,
    /// What was measured, where.
    pub note: String,
}

/// The most waiting requests a target holds before it fails, predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    /// How many waiting requests (`None`: nothing bounds it that is known).
    pub n: Option<f64>,
    /// What bounds it, in a phrase made from the numbers.
    pub why: String,
}

/// One target's cost of waiting.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// The target's label.
    pub label: String,
    /// Where it ran (`rust`, `go`, ...).
    pub runtime: String,
    /// Its levels, fewest clients first.
    pub levels: Vec<Level>,
    /// Slope of RSS against in flight, KiB per waiting request.
    pub kib_per_request: Option<f64>,
    /// Intercept: RSS with nothing waiting, MiB.
    pub base_mb: Option<f64>,
    /// Share of the RSS variance the line explains.
    pub r2: Option<f64>,
    /// Slope of CPU against in flight: CPU microseconds per second per waiting request.
    pub cpu_us_per_request: Option<f64>,
    /// Share of the CPU variance its line explains.
    pub cpu_r2: Option<f64>,
    /// The smallest CPU slope the samples can tell from none, same unit:
    /// `/proc` counts CPU in 10 ms ticks, so each level's rate is known to
    /// within 2 ticks over its plateau, spread over the requests between the
    /// levels held.
    pub cpu_resolution_us: Option<f64>,
    /// RSS before the run's warm-up (first sample), MiB.
    pub idle_rss_mb: Option<f64>,
    /// Seconds from start to ready (launcher warm-up included).
    pub ready_s: Option<f64>,
    /// Waiting requests that fit in 1 GiB: (1024 MiB - base) / slope.
    pub in_gib: Option<f64>,
    /// Most requests it held at once, at any level.
    pub most_held: f64,
    /// Most it held with every request answered 2xx.
    pub most_held_ok: Option<f64>,
    /// The prediction of what holds before it fails.
    pub holds: Ceiling,
    /// The published per-task figure for its runtime, if the plan gives one.
    pub anchor: Option<Anchor>,
}

/// Every target measured at two or more closed-loop levels, in file order.
pub fn costs(file: &RunsFile) -> Vec<Cost> {
    let mut labels: Vec<String> = Vec::new();
    for r in &file.runs {
        let l = label(r);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    labels
        .into_iter()
        .filter_map(|l| cost_of(file, &l))
        .collect()
}

fn cost_of(file: &RunsFile, label_: &str) -> Option<Cost> {
    let mut levels: Vec<Level> = file
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| label(r) == label_)
        .filter_map(|(i, r)| level(i, r))
        .collect();
    levels.sort_by_key(|l| l.clients);
    levels.dedup_by_key(|l| l.clients);
    if levels.len() < 2 {
        return None;
    }
    let first = &file.runs[levels[0].run];
    let xs: Vec<f64> = levels.iter().map(|l| l.in_flight).collect();
    let rss: Vec<f64> = levels.iter().map(|l| l.rss_mb).collect();
    let mem = fit(&xs, &rss);
    let cpu_pts: Vec<(f64, f64)> = levels
        .iter()
        .filter_map(|l| Some((l.in_flight, l.cpu_per_s?)))
        .collect();
    let (cx, cy): (Vec<f64>, Vec<f64>) = cpu_pts.into_iter().unzip();
    let cpu = fit(&cx, &cy);
    let slope_mb = mem
        .filter(|m| straight(m.r2, levels.len()))
        .map(|m| m.slope)
        .filter(|s| *s > 0.0);
    let base_mb = mem.map(|m| m.intercept);
    let in_gib = slope_mb
        .zip(base_mb)
        .map(|(s, b)| ((1024.0 - b) / s).max(0.0));
    let most_held = levels.iter().map(|l| l.in_flight).fold(0.0, f64::max);
    let most_held_ok = levels
        .iter()
        .filter(|l| l.failed == 0)
        .map(|l| l.in_flight)
        .reduce(f64::max);
    Some(Cost {
        label: label_.to_string(),
        runtime: first.spec.runtime.to_string(),
        kib_per_request: mem.map(|m| m.slope * 1024.0),
        base_mb,
        r2: mem.and_then(|m| m.r2),
        cpu_us_per_request: cpu.map(|c| c.slope * 1e6),
        cpu_r2: cpu.and_then(|c| c.r2),
        cpu_resolution_us: cpu_resolution(&levels),
        idle_rss_mb: first.telemetry.series.first().map(|p| p.rss_mb),
        ready_s: median(
            levels
                .iter()
                .filter_map(|l| file.runs[l.run].telemetry.ready_s)
                .collect(),
        ),
        in_gib,
        most_held,
        most_held_ok,
        holds: holds(first, file, base_mb, slope_mb),
        anchor: anchor(file, first),
        levels,
    })
}

impl Cost {
    /// KiB per waiting request, when RSS rose along a straight line.
    pub fn kib_cost(&self) -> Option<f64> {
        self.kib_per_request
            .filter(|k| *k > 0.0 && straight(self.r2, self.levels.len()))
    }

    /// CPU us/s per waiting request, when it rose along a straight line.
    pub fn cpu_cost(&self) -> Option<f64> {
        self.cpu_us_per_request
            .filter(|c| *c > 0.0 && straight(self.cpu_r2, self.levels.len()))
    }
}

/// A run's level, when it is a closed loop with a plateau.
fn level(i: usize, r: &RunRecord) -> Option<Level> {
    let Work::Http(w) = &r.spec.work else {
        return None;
    };
    let Driver::Closed { concurrency, .. } = &w.driver else {
        return None;
    };
    let a = r.attack.as_ref()?;
    let p = plateau(&r.telemetry)?;
    Some(Level {
        run: i,
        clients: *concurrency,
        in_flight: p.held,
        rss_mb: p.rss_mb,
        cpu_per_s: p.cpu_per_s,
        span_s: p.span_s,
        failed: a.requests.sent.saturating_sub(a.requests.ok),
    })
}

/// The plateau of a run's telemetry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plateau {
    /// Requests held (median).
    pub held: f64,
    /// RSS (median), MiB.
    pub rss_mb: f64,
    /// CPU seconds per second across it (at least 0.3 s of it).
    pub cpu_per_s: Option<f64>,
    /// Seconds from its first sample to its last.
    pub span_s: f64,
}

/// Requests a sample shows the target holding.
fn held(p: &TelemetryPoint) -> Option<f64> {
    p.in_flight
        .map(|f| f + p.queued.unwrap_or(0.0))
        .or(p.connections.map(|c| c as f64))
}

/// Every measured sample holding at least 95% of the most held.
pub fn plateau(t: &Telemetry) -> Option<Plateau> {
    let pts: Vec<(&TelemetryPoint, f64)> =
        t.measured().filter_map(|p| Some((p, held(p)?))).collect();
    let top = pts.iter().map(|(_, h)| *h).fold(0.0, f64::max);
    if top < 1.0 {
        return None;
    }
    let flat: Vec<&(&TelemetryPoint, f64)> = pts.iter().filter(|(_, h)| *h >= 0.95 * top).collect();
    let (first, last) = (flat.first()?.0, flat.last()?.0);
    let span = last.t_s - first.t_s;
    Some(Plateau {
        held: median(flat.iter().map(|(_, h)| *h).collect())?,
        rss_mb: median(flat.iter().map(|(p, _)| p.rss_mb).collect())?,
        cpu_per_s: (span >= 0.3).then(|| (last.cpu_s - first.cpu_s).max(0.0) / span),
        span_s: span,
    })
}

/// CPU clock tick of `/proc/PID/stat` (USER_HZ), seconds.
const CPU_TICK_S: f64 = 0.01;

/// See [`Cost::cpu_resolution_us`].
fn cpu_resolution(levels: &[Level]) -> Option<f64> {
    let with: Vec<&Level> = levels.iter().filter(|l| l.cpu_per_s.is_some()).collect();
    let span = with.iter().map(|l| l.span_s).reduce(f64::min)?;
    let lo = with.iter().map(|l| l.in_flight).reduce(f64::min)?;
    let hi = with.iter().map(|l| l.in_flight).reduce(f64::max)?;
    (hi > lo && span > 0.0).then(|| 2.0 * (2.0 * CPU_TICK_S / span) / (hi - lo) * 1e6)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// What holds the most waiting requests before the model fails: its own bound
/// (threads, processes, a cap), else the first machine limit it meets.
fn holds(run: &RunRecord, file: &RunsFile, base_mb: Option<f64>, slope_mb: Option<f64>) -> Ceiling {
    let env = &file.environment;
    let host = run.host.unwrap_or(Host::cores(env.cores));
    let params = run.effective_params.as_ref().unwrap_or(&run.spec.params);
    if let Capacity::Bounded { n, what } = run.model.shape(params, &host).capacity() {
        return Ceiling {
            n: Some(f64::from(n)),
            why: format!("{n} {what}; past them requests queue or are refused"),
        };
    }
    let mut limits: Vec<(f64, String)> = Vec::new();
    if let (Some(s), Some(b)) = (slope_mb, base_mb) {
        let n = ((env.memory_mb as f64 - b) / s).max(0.0);
        limits.push((
            n,
            format!(
                "memory: {} MiB at {:.1} KiB each",
                env.memory_mb,
                s * 1024.0
            ),
        ));
    }
    let (soft, _) = env.nofile;
    if soft > 0 {
        limits.push((
            soft as f64,
            format!("open files: nofile {soft}, a socket each"),
        ));
    }
    if run.model.blocks_threads() {
        if let Some(t) = env.threads_max {
            limits.push((t as f64, format!("threads: threads-max {t}, one each")));
        }
    }
    limits
        .into_iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(n, why)| Ceiling {
            n: Some(n.floor()),
            why,
        })
        .unwrap_or(Ceiling {
            n: None,
            why: "no limit known".into(),
        })
}

/// The plan's published per-task figure for this run's target (`[published]`
/// rows with metric `task_kib` and `run = { target = LABEL }`).
fn anchor(file: &RunsFile, run: &RunRecord) -> Option<Anchor> {
    let target = run.coordinates.get("target")?.as_str()?;
    let rows = file.plan.published.as_ref()?.get("rows")?.as_array()?;
    rows.iter().find_map(|r| {
        (r.get("metric")?.as_str()? == TASK_KIB).then_some(())?;
        let t = r.get("run")?.get("target")?.as_str()?;
        (t == target).then_some(())?;
        Some(Anchor {
            kib: r.get("value")?.as_f64()?,
            note: r
                .get("note")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    })
}

/// Our figure for a `[published]` row's metric, when it is this section's.
pub fn ours(file: &RunsFile, run: &RunRecord, metric: &str) -> Option<f64> {
    (metric == TASK_KIB).then_some(())?;
    costs(file)
        .into_iter()
        .find(|c| c.label == label(run))?
        .kib_cost()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plateau_is_the_samples_near_the_top() {
        let p = |t_s: f64, held: f64, rss_mb: f64, cpu_s: f64| TelemetryPoint {
            t_s,
            rss_mb,
            cpu_s,
            in_flight: Some(held),
            ..TelemetryPoint::default()
        };
        let t = Telemetry {
            series: vec![
                p(-0.5, 0.0, 5.0, 0.0),
                p(0.0, 100.0, 8.0, 0.10),
                p(0.5, 1000.0, 20.0, 0.20),
                p(1.0, 990.0, 21.0, 0.25),
                p(1.5, 1000.0, 22.0, 0.30),
                p(2.0, 10.0, 22.0, 0.31),
            ],
            ..Telemetry::default()
        };
        let pl = plateau(&t).unwrap();
        assert_eq!(pl.held, 1000.0);
        assert_eq!(pl.rss_mb, 21.0);
        assert!((pl.cpu_per_s.unwrap() - 0.1).abs() < 1e-9);
    }
}
