//! The cost of a held connection (preset `c10k`, docs/attack.md): what one
//! held WebSocket costs each target, from runs that hold N of them at once
//! (`driver = "held"`), measured beside what `predict` said.
//!
//! Each run opens its connections on schedule and holds each for the
//! hold. Its *plateau* is the window in which every handshake has been
//! answered or has timed out (the last intended open plus one timeout)
//! and the first connections are still held (the hold from the start): the
//! target then holds every connection it will hold, and nothing else
//! arrives. RSS and threads are the window's medians, CPU the CPU seconds a
//! second across it. Least-squares lines through a target's levels
//! (established, RSS) and (established, threads) give the memory and the
//! threads per held connection, read as a cost only when the levels lie on
//! them (r² at least [`STRAIGHT_R2`](crate::runs::waiting::STRAIGHT_R2) through three or more levels); a model
//! that held the same number at every level (a pool of 200 threads) has no
//! slope, and says where it stopped instead. [`render`] lays it out.

pub mod render;

use iolab_model::concurrency::ModelKind;
use iolab_model::experiment::Work;
use iolab_model::predict::HeldPrediction;
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_model::telemetry::{Telemetry, TelemetryPoint};

use crate::runs::summary::label;
use crate::runs::waiting::{fit, straight};

/// One level: a run asked to hold `asked` WebSockets.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Index of the run in the file.
    pub run: usize,
    /// WebSockets the run opened.
    pub asked: u64,
    /// Handshakes completed (101).
    pub established: u64,
    /// Held for the whole hold.
    pub held: u64,
    /// RSS on the plateau (median), MiB.
    pub rss_mb: Option<f64>,
    /// Threads on the plateau (median).
    pub threads: Option<f64>,
    /// CPU seconds per second across the plateau (at least 0.3 s of it).
    pub cpu_per_s: Option<f64>,
    /// Messages a second the established connections were to send.
    pub messages_per_s: f64,
    /// 99th percentile of message latency (from the intended send), ms.
    pub p99_ms: Option<f64>,
    /// The generator's own lateness (opens and sends after their intended
    /// time), p99, ms: a message tail near it is the generator's.
    pub lag_p99_ms: f64,
}

impl Level {
    /// CPU microseconds per message on the plateau (holding included).
    pub fn cpu_us_per_message(&self) -> Option<f64> {
        let c = self.cpu_per_s?;
        (self.messages_per_s > 0.0).then(|| c / self.messages_per_s * 1e6)
    }
}

/// A fitted cost: slope per held connection and its r².
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slope {
    /// Per held connection.
    pub per: f64,
    /// Share of the variance the line explains (`None`: y did not vary).
    pub r2: Option<f64>,
    /// Levels it went through.
    pub levels: usize,
}

impl Slope {
    /// The slope when the levels lie on its line; a flat line (y the same
    /// at every level: a loop's threads) is a cost of exactly 0.
    pub fn cost(&self) -> Option<f64> {
        match self.r2 {
            None if self.per == 0.0 => Some(0.0),
            _ => straight(self.r2, self.levels).then_some(self.per),
        }
    }
}

/// One target's cost of a held connection.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldCost {
    /// The target's label.
    pub label: String,
    /// Its model.
    pub model: ModelKind,
    /// Its levels, fewest asked first.
    pub levels: Vec<Level>,
    /// KiB of RSS per established connection.
    pub kib: Option<Slope>,
    /// Threads per established connection.
    pub threads: Option<Slope>,
    /// Most connections it established at a level that asked for more
    /// (`None`: it established every one it was asked for).
    pub stopped_at: Option<u64>,
    /// What `predict` said (of the first level's run).
    pub predicted: Option<HeldPrediction>,
    /// Where the model's own bound or the machine's first limit stops it,
    /// and why.
    pub predicted_stop: (Option<u64>, String),
}

/// Every target measured at one or more held levels, in file order.
pub fn costs(file: &RunsFile) -> Vec<HeldCost> {
    let mut labels: Vec<String> = Vec::new();
    for r in file.runs.iter().filter(|r| is_held(r)) {
        let l = label(r);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    labels.iter().filter_map(|l| cost_of(file, l)).collect()
}

fn is_held(r: &RunRecord) -> bool {
    matches!(&r.spec.work, Work::Http(w) if w.held.is_some())
}

fn cost_of(file: &RunsFile, label_: &str) -> Option<HeldCost> {
    let mut levels: Vec<Level> = (file.runs.iter().enumerate())
        .filter(|(_, r)| is_held(r) && label(r) == label_)
        .filter_map(|(i, r)| level(i, r))
        .collect();
    levels.sort_by_key(|l| l.asked);
    let first = &file.runs[levels.first()?.run];
    let slope = |y: &dyn Fn(&Level) -> Option<f64>, scale: f64| {
        let pts: Vec<(f64, f64)> = (levels.iter())
            .filter_map(|l| Some((l.established as f64, y(l)?)))
            .collect();
        let (xs, ys): (Vec<f64>, Vec<f64>) = pts.iter().copied().unzip();
        fit(&xs, &ys).map(|f| Slope {
            per: f.slope * scale,
            r2: f.r2,
            levels: pts.len(),
        })
    };
    let kib = slope(&|l| l.rss_mb, 1024.0);
    let threads = slope(&|l| l.threads, 1.0);
    let stopped_at = (levels.iter())
        .filter(|l| l.established < l.asked)
        .map(|l| l.established)
        .max();
    let predicted = first.prediction.as_ref().and_then(|p| p.held.clone());
    let predicted_stop = stop(file, predicted.as_ref());
    Some(HeldCost {
        label: label_.to_string(),
        model: first.model,
        levels,
        kib,
        threads,
        stopped_at,
        predicted,
        predicted_stop,
    })
}

/// A held run's level, when it was measured.
fn level(i: usize, r: &RunRecord) -> Option<Level> {
    let Work::Http(w) = &r.spec.work else {
        return None;
    };
    let load = w.held.as_ref()?;
    let a = r.attack.as_ref()?;
    let conns = a.connections.as_ref()?;
    let msgs = a.messages.as_ref();
    let from = f64::from(load.connections) / load.open_rate + w.timeout.as_secs_f64();
    let p = plateau(&r.telemetry, from, load.hold.as_secs_f64());
    Some(Level {
        run: i,
        asked: u64::from(load.connections),
        established: conns.established,
        held: conns.held,
        rss_mb: p.map(|p| p.rss_mb),
        threads: p.map(|p| p.threads),
        cpu_per_s: p.and_then(|p| p.cpu_per_s),
        messages_per_s: conns.established as f64 * load.message_rate,
        p99_ms: msgs.and_then(|m| m.latency_ms.as_ref()).map(|l| l.p99),
        lag_p99_ms: a.generator.lag_p99_ms,
    })
}

/// What the samples of a plateau say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plateau {
    /// RSS (median), MiB.
    pub rss_mb: f64,
    /// Threads (median).
    pub threads: f64,
    /// CPU seconds per second across it (at least 0.3 s of it).
    pub cpu_per_s: Option<f64>,
}

/// The measured samples from `from` to `to` seconds of the run.
pub fn plateau(t: &Telemetry, from: f64, to: f64) -> Option<Plateau> {
    let pts: Vec<&TelemetryPoint> = t
        .measured()
        .filter(|p| p.t_s >= from && p.t_s <= to)
        .collect();
    let (first, last) = (pts.first()?, pts.last()?);
    let span = last.t_s - first.t_s;
    Some(Plateau {
        rss_mb: median(pts.iter().map(|p| p.rss_mb).collect())?,
        threads: median(pts.iter().map(|p| p.threads as f64).collect())?,
        cpu_per_s: (span >= 0.3).then(|| (last.cpu_s - first.cpu_s).max(0.0) / span),
    })
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(match n % 2 {
        1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    })
}

/// Where the target is predicted to stop: the model's own bound, else the
/// first machine limit a held connection meets (open files: a socket each;
/// threads-max: a thread each; memory at the predicted KiB each).
fn stop(file: &RunsFile, p: Option<&HeldPrediction>) -> (Option<u64>, String) {
    let Some(p) = p else {
        return (None, "not predicted".into());
    };
    if let Some(n) = p.holds {
        return (Some(n), p.why.clone());
    }
    let env = &file.environment;
    let mut limits: Vec<(u64, String)> = Vec::new();
    if env.nofile.0 > 0 {
        let n = env.nofile.0;
        limits.push((n, format!("open files: nofile {n}, a socket each")));
    }
    if p.threads_per_connection > 0.0 {
        if let Some(t) = env.threads_max {
            limits.push((t, format!("threads: threads-max {t}, one each")));
        }
    }
    if env.memory_mb > 0 && p.kib_per_connection > 0.0 {
        let n = (env.memory_mb as f64 * 1024.0 / p.kib_per_connection) as u64;
        let kib = p.kib_per_connection;
        limits.push((
            n,
            format!("memory: {} MiB at {kib} KiB each", env.memory_mb),
        ));
    }
    match limits.into_iter().min_by_key(|l| l.0) {
        Some((n, why)) => (Some(n), why),
        None => (None, "no limit known".into()),
    }
}
