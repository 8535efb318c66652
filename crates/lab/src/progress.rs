//! Live progress of an experiment through observer hooks that do nothing by
//! default ([`Observer`], several at once through [`Observers`]), and the
//! console observer `iolab run` uses: an
//! indicatif bar (run k of n, ETA) plus the current run's live line on a
//! terminal, plain lines otherwise.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use iolab_loadgen::LiveFeed;
use iolab_model::experiment::{ExperimentPlan, RunSpec};
use iolab_model::runs::{Outcome, RunRecord, RunsFile};
use iolab_model::telemetry::TelemetryPoint;

/// What a run is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Starting the target and waiting for `/health`.
    Starting,
    /// Checking the target contract.
    Verifying,
    /// Load that is not counted.
    WarmingUp,
    /// The measured load.
    Measuring,
    /// Stopping the target and waiting for its sockets to drain.
    Stopping,
    /// An in-process batch.
    Batch,
}

impl Stage {
    /// A short word for progress lines.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Starting => "starting",
            Stage::Verifying => "verifying",
            Stage::WarmingUp => "warming up",
            Stage::Measuring => "measuring",
            Stage::Stopping => "stopping",
            Stage::Batch => "running batch",
        }
    }
}

/// The live numbers of the load being sent: the generator's own snapshot.
pub use iolab_loadgen::Progress as Live;

/// Hooks called by the runner; all optional.
pub trait Observer: Sync {
    /// Before the first run; `total` counts runs x reps.
    fn experiment_started(&self, _plan: &ExperimentPlan, _total: usize, _estimate: Duration) {}
    /// A run (one repetition) begins; `index` is 0-based.
    fn run_started(&self, _index: usize, _total: usize, _spec: &RunSpec, _rep: u32) {}
    /// The run moved to another stage.
    fn stage(&self, _spec: &RunSpec, _stage: Stage) {}
    /// Live numbers during warm-up and measurement (about every 250 ms).
    fn live(&self, _spec: &RunSpec, _stage: Stage, _live: &Live) {}
    /// A run (all its repetitions) has its record.
    fn run_finished(&self, _index: usize, _total: usize, _record: &RunRecord) {}
    /// Everything is written.
    fn experiment_finished(&self, _runs: &RunsFile) {}
    /// A one-line message about the experiment as a whole (e.g. the
    /// backends started for it).
    fn note(&self, _msg: &str) {}
    /// A live feed for the attacks of the runs (`--live`), or none; asked
    /// before each attack, which begins it afresh.
    fn feed(&self) -> Option<Arc<LiveFeed>> {
        None
    }
    /// One sample of the target's telemetry, taken at `unix_ms`, while the
    /// run is measured (about every 100 ms).
    fn telemetry(&self, _spec: &RunSpec, _unix_ms: f64, _point: &TelemetryPoint) {}
}

/// Several observers as one, each called in turn (criterion's `Reports`).
pub struct Observers<'a>(pub Vec<&'a dyn Observer>);

impl Observer for Observers<'_> {
    fn experiment_started(&self, plan: &ExperimentPlan, total: usize, estimate: Duration) {
        self.0
            .iter()
            .for_each(|o| o.experiment_started(plan, total, estimate));
    }
    fn run_started(&self, index: usize, total: usize, spec: &RunSpec, rep: u32) {
        self.0
            .iter()
            .for_each(|o| o.run_started(index, total, spec, rep));
    }
    fn stage(&self, spec: &RunSpec, stage: Stage) {
        self.0.iter().for_each(|o| o.stage(spec, stage));
    }
    fn live(&self, spec: &RunSpec, stage: Stage, live: &Live) {
        self.0.iter().for_each(|o| o.live(spec, stage, live));
    }
    fn run_finished(&self, index: usize, total: usize, record: &RunRecord) {
        self.0
            .iter()
            .for_each(|o| o.run_finished(index, total, record));
    }
    fn experiment_finished(&self, runs: &RunsFile) {
        self.0.iter().for_each(|o| o.experiment_finished(runs));
    }
    fn note(&self, msg: &str) {
        self.0.iter().for_each(|o| o.note(msg));
    }
    /// The first observer's feed that there is.
    fn feed(&self) -> Option<Arc<LiveFeed>> {
        self.0.iter().find_map(|o| o.feed())
    }
    fn telemetry(&self, spec: &RunSpec, unix_ms: f64, point: &TelemetryPoint) {
        self.0
            .iter()
            .for_each(|o| o.telemetry(spec, unix_ms, point));
    }
}

/// An observer that shows nothing.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {}

/// Progress on stderr: a bar on a terminal, one line per run otherwise.
pub struct Console {
    mode: Mode,
}

enum Mode {
    Quiet,
    Plain(Mutex<()>),
    Bars {
        _multi: MultiProgress,
        bar: ProgressBar,
        line: ProgressBar,
        /// Estimated milliseconds of each run: the bar moves by time, so
        /// its ETA weighs long runs as long.
        weights: Mutex<Vec<u64>>,
    },
}

impl Console {
    /// Pick the mode: nothing when `quiet`, bars when stderr is a terminal.
    pub fn new(quiet: bool) -> Console {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
            let bar = multi.add(ProgressBar::new(0));
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:.bold} [{bar:30.cyan/blue}] {msg}  elapsed {elapsed}  ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            let line = multi.add(ProgressBar::new_spinner());
            line.set_style(
                ProgressStyle::with_template("  {spinner} {wide_msg}").expect("valid template"),
            );
            line.enable_steady_tick(Duration::from_millis(120));
            Mode::Bars {
                _multi: multi,
                bar,
                line,
                weights: Mutex::new(Vec::new()),
            }
        } else {
            Mode::Plain(Mutex::new(()))
        };
        Console { mode }
    }

    fn plain(&self, msg: &str) {
        if let Mode::Plain(lock) = &self.mode {
            let _g = lock.lock();
            eprintln!("{msg}");
        }
    }
}

/// One line describing how a run ended, e.g.
/// `completed  ok 998/1000  goodput 199.6/s  p50 100.4 ms  p99 102.1 ms`.
pub fn summary_line(r: &RunRecord) -> String {
    let mut s = r.outcome.label().to_string();
    if let Some(a) = &r.attack {
        let q = &a.requests;
        s.push_str(&format!(
            "  ok {}/{}  goodput {:.1}/s  p50 {:.1} ms  p99 {:.1} ms",
            q.ok, q.planned, a.throughput_rps.goodput, a.latency_ms.p50, a.latency_ms.p99
        ));
        let errors = a.errors.total() + q.non_2xx + q.not_sent;
        if errors > 0 {
            let mut parts: Vec<String> = a
                .errors
                .classes()
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            if q.non_2xx > 0 {
                parts.push(format!("non-2xx {}", q.non_2xx));
            }
            if q.not_sent > 0 {
                parts.push(format!("not sent {}", q.not_sent));
            }
            s.push_str(&format!("  ({})", parts.join(", ")));
        }
    }
    if let Some(b) = &r.batch {
        s.push_str(&format!("  {} tasks in {:.2} s", b.tasks, b.total_s));
    }
    if let Some(t) = r.telemetry.peak_threads() {
        s.push_str(&format!("  threads {t}"));
    }
    for short in r.backend_shortfall() {
        s.push_str(&format!("  BACKEND SHORT {short}"));
    }
    match &r.outcome {
        Outcome::StartFailed { detail }
        | Outcome::VerifyFailed { detail }
        | Outcome::TargetDied { detail }
        | Outcome::Skipped { detail } => s.push_str(&format!(": {detail}")),
        Outcome::Completed | Outcome::Interrupted => {}
    }
    s
}

impl Observer for Console {
    fn experiment_started(&self, plan: &ExperimentPlan, total: usize, estimate: Duration) {
        let head = format!(
            "{}: {} runs{}, about {} (scale {})",
            plan.name,
            plan.runs.len(),
            if plan.reps > 1 {
                format!(" x {} reps", plan.reps)
            } else {
                String::new()
            },
            iolab_model::format_duration(Duration::from_secs(estimate.as_secs().max(1))),
            plan.scale
        );
        match &self.mode {
            Mode::Bars { bar, weights, .. } => {
                let w: Vec<u64> = plan
                    .runs
                    .iter()
                    .map(|r| crate::estimate::estimate_run(plan, r).as_millis() as u64)
                    .collect();
                bar.set_length(w.iter().sum::<u64>().max(1));
                bar.set_prefix(plan.name.clone());
                bar.set_message(format!("run 0/{total}"));
                bar.println(head);
                if let Ok(mut g) = weights.lock() {
                    *g = w;
                }
            }
            _ => self.plain(&head),
        }
    }

    fn run_started(&self, index: usize, total: usize, spec: &RunSpec, rep: u32) {
        match &self.mode {
            Mode::Bars { line, bar, .. } => {
                bar.set_message(format!("run {}/{total}", index + 1));
                line.set_message(format!("{}  starting", spec.name));
            }
            _ => self.plain(&format!(
                "[{}/{}] {}{} ...",
                index + 1,
                total,
                spec.name,
                if rep > 0 {
                    format!(" (rep {})", rep + 1)
                } else {
                    String::new()
                }
            )),
        }
    }

    fn stage(&self, spec: &RunSpec, stage: Stage) {
        if let Mode::Bars { line, .. } = &self.mode {
            line.set_message(format!("{}  {}", spec.name, stage.label()));
        }
    }

    fn live(&self, spec: &RunSpec, stage: Stage, l: &Live) {
        if let Mode::Bars { line, .. } = &self.mode {
            line.set_message(format!(
                "{}  {} {:.1}s  sent {}  ok {}  errors {}  {:.0} req/s  p99 {:.1} ms",
                spec.name,
                stage.label(),
                l.elapsed.as_secs_f64(),
                l.sent,
                l.ok,
                l.errors,
                l.rps,
                l.p99_ms
            ));
        }
    }

    fn run_finished(&self, index: usize, total: usize, r: &RunRecord) {
        let msg = format!(
            "[{}/{}] {:<28} {}",
            index + 1,
            total,
            r.name,
            summary_line(r)
        );
        match &self.mode {
            Mode::Bars { bar, weights, .. } => {
                bar.println(msg);
                let done = weights
                    .lock()
                    .map(|w| w.iter().take(index + 1).sum::<u64>())
                    .unwrap_or(0);
                bar.set_position(done);
            }
            _ => self.plain(&msg),
        }
    }

    fn note(&self, msg: &str) {
        match &self.mode {
            Mode::Bars { bar, .. } => bar.println(msg),
            _ => self.plain(msg),
        }
    }

    fn experiment_finished(&self, _runs: &RunsFile) {
        if let Mode::Bars { bar, line, .. } = &self.mode {
            line.finish_and_clear();
            bar.finish_and_clear();
        }
    }
}
