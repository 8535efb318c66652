//! `iolab run`'s progress on stderr, an observer of the lab's runs: an
//! indicatif bar (run k of n, ETA by each run's estimated time) and the
//! current run's live line on a terminal, one plain line per run otherwise,
//! nothing with `--quiet`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use iolab_lab::progress::{Live, Observer, Stage};
use iolab_model::experiment::{ExperimentPlan, RunSpec};
use iolab_model::runs::{RunRecord, RunsFile};
use iolab_report::runs::summary;

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
                    .map(|r| iolab_lab::estimate::estimate_run(plan, r).as_millis() as u64)
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
            summary::line(r)
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
