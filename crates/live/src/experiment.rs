//! The live view of `iolab run`: a lab [`Observer`] that keeps the
//! experiment's finished runs (the report's table fills in run by run), the
//! run under way (its attack from the generator's [`LiveFeed`], the target's
//! telemetry as it is sampled), the runs still to come with their
//! predictions, and the time left by the plan's estimate.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iolab_lab::estimate::estimate_run;
use iolab_lab::progress::{Observer, Stage};
use iolab_loadgen::LiveFeed;
use iolab_model::attack::AttackResult;
use iolab_model::experiment::{ExperimentPlan, RunSpec};
use iolab_model::live::{LiveState, LiveView, PendingRun};
use iolab_model::predict::Prediction;
use iolab_model::runs::{RunRecord, RunsFile, RUNS_SCHEMA};
use iolab_model::telemetry::TelemetryPoint;

use crate::attack::live_run;
use crate::metrics::Snapshot;
use crate::Source;

/// Telemetry samples kept for the run under way (100 ms apart: 15 minutes).
const MAX_SAMPLES: usize = 9_000;

/// Watches an experiment; give it to the runner as an observer (beside the
/// console, through `Observers`) and to a [`crate::Server`] as its source.
pub struct ExperimentWatch {
    feed: Arc<LiveFeed>,
    cores: u32,
    started: Instant,
    version: AtomicU64,
    state: Mutex<State>,
    /// Each run's prediction, in plan order, once made.
    predictions: Arc<Mutex<Vec<Option<Prediction>>>>,
}

#[derive(Default)]
struct State {
    file: Option<RunsFile>,
    /// Index of the run under way.
    index: usize,
    name: String,
    stage: String,
    run_started: Option<Instant>,
    /// The same, Unix ms: an attack that began before is another run's.
    run_started_unix_ms: u64,

    /// The target's samples of the run under way: (Unix ms, point).
    telemetry: Vec<(f64, TelemetryPoint)>,
    done: bool,
}

impl ExperimentWatch {
    /// A watch whose pending runs are predicted for a target on `cores`
    /// cores (as the runner predicts them).
    pub fn new(cores: u32) -> Arc<ExperimentWatch> {
        Arc::new(ExperimentWatch {
            feed: LiveFeed::new(),
            cores,
            started: Instant::now(),
            version: AtomicU64::new(0),
            state: Mutex::new(State::default()),
            predictions: Arc::default(),
        })
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut st) = self.state.lock() {
            f(&mut st);
        }
        self.version.fetch_add(1, Relaxed);
    }
}

/// Seconds left: the runs after the current one by the plan's estimate,
/// and what the current one has left of its own.
fn eta(plan: &ExperimentPlan, index: usize, in_run: Duration) -> f64 {
    let rest: Duration = plan
        .runs
        .iter()
        .skip(index + 1)
        .map(|r| estimate_run(plan, r))
        .sum();
    let current = plan.runs.get(index).map_or(Duration::ZERO, |r| {
        estimate_run(plan, r).saturating_sub(in_run)
    });
    (rest + current).as_secs_f64()
}

/// The samples on the attack's clock (0 = its start; warm-up before 0).
fn on_clock(samples: &[(f64, TelemetryPoint)], a: &AttackResult) -> Vec<TelemetryPoint> {
    let zero = a.started_unix_ms as f64;
    samples
        .iter()
        .map(|(at, p)| TelemetryPoint {
            t_s: ((at - zero) / 1000.0 * 1000.0).round() / 1000.0,
            ..p.clone()
        })
        .collect()
}

impl Observer for ExperimentWatch {
    fn experiment_started(&self, plan: &ExperimentPlan, _total: usize, _estimate: Duration) {
        self.update(|st| {
            st.file = Some(RunsFile {
                schema: RUNS_SCHEMA.to_string(),
                plan: plan.clone(),
                runs: Vec::new(),
                complete: false,
                started_utc: String::new(),
                finished_utc: None,
                environment: Default::default(),
            });
            st.stage = "starting".into();
        });
        // Each run's prediction, made once and off the runner's thread (the
        // simulation takes a moment per run).
        let (plan, cores, slot) = (plan.clone(), self.cores, self.predictions.clone());
        let _ = std::thread::Builder::new()
            .name("iolab-live-predict".into())
            .spawn(move || {
                let all = plan
                    .runs
                    .iter()
                    .map(|r| iolab_lab::targets::predict_run(r, cores))
                    .collect();
                if let Ok(mut p) = slot.lock() {
                    *p = all;
                }
            });
    }

    fn run_started(&self, index: usize, _total: usize, spec: &RunSpec, rep: u32) {
        self.update(|st| {
            st.index = index;
            st.name = match rep {
                0 => spec.name.clone(),
                r => format!("{} (rep {})", spec.name, r + 1),
            };
            st.run_started = Some(Instant::now());
            st.run_started_unix_ms = iolab_telemetry::unix_ms() as u64;
            st.telemetry.clear();
        });
    }

    fn stage(&self, _spec: &RunSpec, stage: Stage) {
        self.update(|st| st.stage = stage.label().to_string());
    }

    fn run_finished(&self, _index: usize, _total: usize, record: &RunRecord) {
        self.update(|st| {
            if let Some(f) = &mut st.file {
                f.runs.push(record.clone());
            }
        });
    }

    fn experiment_finished(&self, runs: &RunsFile) {
        self.update(|st| {
            st.file = Some(runs.clone());
            st.stage = "finished".into();
            st.done = true;
        });
    }

    fn feed(&self) -> Option<Arc<LiveFeed>> {
        Some(self.feed.clone())
    }

    /// Kept for the next picture, which the attack's next interval makes
    /// (a sample alone does not: ten a second would redraw the page as often).
    fn telemetry(&self, _spec: &RunSpec, unix_ms: f64, point: &TelemetryPoint) {
        if let Ok(mut st) = self.state.lock() {
            if st.telemetry.len() < MAX_SAMPLES {
                st.telemetry.push((unix_ms, point.clone()));
            }
        }
    }
}

impl Source for ExperimentWatch {
    fn version(&self) -> u64 {
        self.version.load(Relaxed) + self.feed.version()
    }

    fn view(&self) -> LiveView {
        let snap = self.feed.snapshot();
        let predictions = self
            .predictions
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default();
        let Ok(st) = self.state.lock() else {
            return LiveView::default();
        };
        let plan = st.file.as_ref().map(|f| &f.plan);
        let measured = st.file.as_ref().map_or(0, |f| f.runs.len());
        let current = snap
            .as_ref()
            .filter(|s| !st.done && s.report.result.started_unix_ms >= st.run_started_unix_ms)
            .map(|s| {
                let mut run = live_run(format!("{} ({})", st.name, st.stage), s);
                run.telemetry = on_clock(&st.telemetry, &s.report.result);
                run
            });
        LiveView {
            title: plan.map_or_else(|| "iolab run".into(), |p| format!("iolab run {}", p.name)),
            stage: match plan {
                Some(p) if !st.done => format!(
                    "run {} of {}: {} {}",
                    (st.index + 1).min(p.runs.len()),
                    p.runs.len(),
                    st.name,
                    st.stage
                ),
                _ => st.stage.clone(),
            },
            elapsed_s: self.started.elapsed().as_secs_f64(),
            eta_s: plan.filter(|_| !st.done).map(|p| {
                eta(
                    p,
                    st.index,
                    st.run_started.map_or(Duration::ZERO, |t| t.elapsed()),
                )
            }),
            current,
            pending: plan
                .map(|p| {
                    p.runs
                        .iter()
                        .enumerate()
                        .skip(match st.run_started {
                            Some(_) if !st.done => st.index + 1,
                            _ => measured,
                        })
                        .map(|(i, r)| PendingRun {
                            name: r.name.clone(),
                            prediction: predictions.get(i).cloned().flatten(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            experiment: st.file.clone(),
            dropped_frames: snap.as_ref().map_or(0, |s| s.dropped_frames),
            finished: st.done,
            ..LiveView::default()
        }
    }

    fn state(&self) -> Option<LiveState> {
        self.feed.snapshot().map(|s| crate::attack::state(&s))
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
