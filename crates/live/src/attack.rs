//! The live view of `iolab attack` (one attack) and of `iolab capacity`
//! (one attack per step, the steps so far listed below the current one):
//! all of it read from the generator's [`LiveFeed`].

use std::sync::Arc;
use std::time::Instant;

use iolab_loadgen::{LiveFeed, LiveSnapshot};
use iolab_model::attack::AttackResult;
use iolab_model::live::{LiveRun, LiveState, LiveView, LIVE_STATE_SCHEMA};

use crate::metrics::Snapshot;
use crate::Source;

/// Watches the attacks fed to one [`LiveFeed`].
pub struct AttackWatch {
    title: String,
    feed: Arc<LiveFeed>,
    started: Instant,
    /// List the attacks that ended before the current one (capacity's steps).
    steps: bool,
}

impl AttackWatch {
    /// One attack, as `iolab attack` sends it.
    pub fn attack(title: impl Into<String>, feed: Arc<LiveFeed>) -> Arc<AttackWatch> {
        Self::new(title.into(), feed, false)
    }

    /// A capacity search: one attack per step.
    pub fn steps(title: impl Into<String>, feed: Arc<LiveFeed>) -> Arc<AttackWatch> {
        Self::new(title.into(), feed, true)
    }

    fn new(title: String, feed: Arc<LiveFeed>, steps: bool) -> Arc<AttackWatch> {
        Arc::new(AttackWatch {
            title,
            feed,
            started: Instant::now(),
            steps,
        })
    }
}

/// A live run from a feed's snapshot.
pub(crate) fn live_run(name: String, s: &LiveSnapshot) -> LiveRun {
    LiveRun {
        name,
        attack: s.report.result.clone(),
        interval_s: s.interval.as_secs_f64(),
        in_flight: (!s.finished).then_some(s.in_flight),
        telemetry: Vec::new(),
    }
}

/// What `/state` serves of a feed's snapshot.
pub(crate) fn state(s: &LiveSnapshot) -> LiveState {
    LiveState {
        schema: LIVE_STATE_SCHEMA.to_string(),
        finished: s.finished,
        in_flight: s.in_flight,
        interval_s: s.interval.as_secs_f64(),
        attack: s.report.result.clone(),
    }
}

/// Seconds an attack has left by its plan (an open loop, or a closed one
/// bounded by time), from what it has run.
pub(crate) fn remaining_s(a: &AttackResult) -> Option<f64> {
    a.driver.duration_s.map(|d| (d - a.elapsed_s).max(0.0))
}

/// A step's name: its offered rate.
fn step_name(i: usize, a: &AttackResult) -> String {
    format!(
        "step {}: {} req/s",
        i + 1,
        iolab_report::numbers::rate(a.driver.rate.unwrap_or(a.throughput_rps.offered))
    )
}

impl Source for AttackWatch {
    fn version(&self) -> u64 {
        self.feed.version()
    }

    fn view(&self) -> LiveView {
        let snap = self.feed.snapshot();
        let history = if self.steps {
            self.feed.history()
        } else {
            Vec::new()
        };
        let finished = snap.as_ref().is_some_and(|s| s.finished) && !self.steps;
        let stage = match &snap {
            None => "starting".to_string(),
            Some(s) if s.finished && !self.steps => "finished".into(),
            Some(s) if s.finished => format!("step {} done", history.len()),
            Some(_) if self.steps => format!("measuring step {}", history.len() + 1),
            Some(_) => "sending".into(),
        };
        let name = match self.steps {
            true if snap.as_ref().is_some_and(|s| s.finished) => step_name(
                history.len().saturating_sub(1),
                history.last().unwrap_or(&AttackResult::default()),
            ),
            true => format!("step {}", history.len() + 1),
            false => "this attack".to_string(),
        };
        LiveView {
            title: self.title.clone(),
            stage,
            elapsed_s: self.started.elapsed().as_secs_f64(),
            eta_s: match (&snap, self.steps) {
                (Some(s), false) if !s.finished => remaining_s(&s.report.result),
                _ => None,
            },
            dropped_frames: snap.as_ref().map_or(0, |s| s.dropped_frames),
            current: snap.as_ref().map(|s| live_run(name, s)),
            history: history
                .iter()
                .enumerate()
                .map(|(i, a)| LiveRun {
                    name: step_name(i, a),
                    attack: a.clone(),
                    ..LiveRun::default()
                })
                .collect(),
            finished,
            ..LiveView::default()
        }
    }

    fn state(&self) -> Option<LiveState> {
        self.feed.snapshot().map(|s| state(&s))
    }

    fn metrics(&self) -> Option<Snapshot> {
        self.feed.snapshot().map(|s| Snapshot {
            in_flight: Some(s.in_flight),
            dropped_frames: s.dropped_frames,
            latency: Some(s.report.latency),
            result: s.report.result,
        })
    }
}
