//! `iolab run [PRESET]`: flags -> a validated [`ExperimentPlan`] -> the lab's
//! runner -> a results folder (`runs.json`, `environment.json`, `report.md`,
//! `report.html`) and a comparison table on stdout.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use iolab_lab::preset::{self, Overrides};
use iolab_lab::progress::Observers;
use iolab_lab::runner::slots::Sharding;
use iolab_lab::{interrupt, results, runner, LabError, RunOptions};
use iolab_live::{Listener, Server};
use iolab_model::experiment::{ExperimentPlan, Work};
use iolab_model::runs::RunsFile;
use iolab_report::runs::summary;
use iolab_report::Format;

use crate::console::Console;
use crate::CliError;

/// Flags of `iolab run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Preset name (see `iolab presets`) or path to a preset .toml file.
    #[arg(default_value = preset::DEFAULT_PRESET, value_name = "PRESET")]
    pub preset: String,
    /// Time-scale F (0 < F <= 1): every duration x F and every rate / F, so a
    /// 60 s experiment takes 60 x F s with the same requests in flight.
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Repeat every run N times; results keep the median and the spread.
    #[arg(long, value_name = "N")]
    pub reps: Option<u32>,
    /// Results folder [default: results/<preset>-<UTC time>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress and no table: print only the results folder.
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not pin the target and the load generator to different CPUs.
    #[arg(long)]
    pub no_pin: bool,
    /// Skip the contract check (`iolab verify`) before measuring targets.
    #[arg(long)]
    pub no_verify: bool,
    /// Print the runs the preset expands to, and the time it will take; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// This host's shard of every run's load, and the start of the first
    /// (--start-at is required with --shard: each later run starts at a slot
    /// fixed by the preset, the same on every host; `iolab merge` adds the
    /// hosts' results folders).
    #[command(flatten)]
    pub sharding: super::shard::ShardArgs,
    /// With --shard: time between one run's planned end and the next run's
    /// start, beyond the warm-up, for the next target to start and be verified.
    #[arg(long, value_name = "D", default_value = "10s")]
    pub shard_gap: String,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
}

/// Run `iolab run`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let plan = preset::load_plan_with(
        &args.preset,
        Overrides {
            scale: args.scale,
            reps: args.reps,
        },
    )?;
    let sharding = sharding(&args)?;
    // Bound before the dry run's plan too: a dry run says what the real
    // one would do, and a busy --live port refuses it (issue 49 finding 14).
    let page = args.live.bind()?;
    if args.dry_run {
        print_plan(&plan);
        return Ok(ExitCode::SUCCESS);
    }
    // A default name is taken by mkdir, so two runs started in the same
    // second get two folders; the runner claims it (or --out) for this run.
    let out_dir = match &args.out {
        Some(dir) => dir.clone(),
        None => iolab_files::claim_new(&results::default_dir(&plan.name))
            .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot make a results folder: {e}")))?,
    };
    let cancel = interrupt::cancel_on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}")))?;
    let opts = RunOptions {
        sharding,
        pin: !args.no_pin,
        verify: !args.no_verify,
        cancel,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        ..RunOptions::new(&out_dir)
    };
    let console = Console::new(args.quiet);
    let (watch, page) = match page {
        Some(listener) => {
            let (watch, page) = live_page(listener, opts.pin && plan.pin)?;
            (Some(watch), Some(page))
        }
        None => (None, None),
    };
    let mut observers: Vec<&dyn iolab_lab::Observer> = vec![&console];
    if let Some(w) = &watch {
        observers.push(w.as_ref());
    }
    let ran = runner::run_keeping(&plan, &opts, &Observers(observers));
    if let Some(page) = page {
        page.finish();
    }
    let ran = ran.map_err(|e| not_run(e, args.out.is_none(), &out_dir))?;
    let file = &ran.file;
    // A results folder that cannot be written (a full disk) loses no
    // measurement: the table goes to stdout first, even with -q, since no
    // folder holds the runs.
    if let Some(e) = &ran.unsaved {
        print_table(file);
        eprintln!(
            "error: the results could not be saved ({e}): the {} runs measured are only in the table above (no runs.json is left in {}/)",
            file.runs.len(),
            out_dir.display()
        );
        return Ok(ExitCode::from(1));
    }
    write_reports(file, &out_dir);
    if args.quiet {
        crate::outln!("{}", out_dir.display());
    } else {
        print_summary(file, &out_dir);
    }
    Ok(exit_code(file))
}

/// Why nothing ran: refused (exit 2; a folder made for it goes, as
/// `remove_dir` takes only an empty one, or one with the claim) or the
/// folder could not be written (exit 1, its message holding its cause,
/// printed once rather than as a chain).
fn not_run(e: LabError, made_here: bool, out_dir: &Path) -> CliError {
    match e {
        LabError::Invalid(m) => {
            if made_here {
                let _ = std::fs::remove_file(out_dir.join(iolab_files::folder::CLAIM));
                let _ = std::fs::remove_dir(out_dir);
            }
            CliError::Usage(m)
        }
        e @ LabError::Io { .. } => CliError::Failed(anyhow::anyhow!("{e}")),
    }
}

/// 130 when interrupted, 1 when no run was measured, else 0.
fn exit_code(file: &RunsFile) -> ExitCode {
    if !file.complete {
        ExitCode::from(interrupt::EXIT_INTERRUPTED)
    } else if nothing_measured(file) {
        eprintln!("error: no run was measured: every target failed (its outcome says why)");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Every run failed (start, contract check or died): a run's failure is
/// data, but an experiment that measured nothing failed (exit 1). Runs
/// skipped for a runtime this machine lacks are not failures.
fn nothing_measured(file: &RunsFile) -> bool {
    use iolab_model::runs::Outcome;
    !file.runs.is_empty()
        && file.runs.iter().all(|r| {
            matches!(
                r.outcome,
                Outcome::StartFailed { .. }
                    | Outcome::VerifyFailed { .. }
                    | Outcome::TargetDied { .. }
            )
        })
}

/// `--live`: the page watching the experiment; pending runs are predicted
/// for the cores the runner gives the target.
fn live_page(
    listener: Listener,
    pin: bool,
) -> Result<(Arc<iolab_live::ExperimentWatch>, Server), CliError> {
    let (target, _) = iolab_lab::environment::pinning(pin);
    let cores = match target.len() {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        n => n as u32,
    };
    let watch = iolab_live::ExperimentWatch::new(cores);
    let page = super::live::serve(listener, watch.clone())?;
    Ok((watch, page))
}

/// The table, then what did not complete, then where the results are.
fn print_summary(file: &RunsFile, out_dir: &Path) {
    print_table(file);
    let failed = file
        .runs
        .iter()
        .filter(|r| !r.outcome.is_completed())
        .count();
    if failed > 0 {
        eprintln!(
            "note: {failed} of {} runs did not complete (see their outcome in runs.json)",
            file.runs.len()
        );
    }
    if !file.complete {
        eprintln!(
            "interrupted: kept {} measured runs, marked incomplete",
            file.runs.len()
        );
    }
    eprintln!("results: {}/", out_dir.display());
}

/// `--shard` with its `--start-at` and `--shard-gap`; neither without `--shard`.
fn sharding(args: &Args) -> Result<Option<Sharding>, CliError> {
    let start = args.sharding.start_at_unix_ms()?;
    match (args.sharding.shard, start) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(CliError::usage(
            "--start-at applies to a sharded run: add --shard i/n (or leave --start-at out)",
        )),
        (Some(_), None) => Err(CliError::usage(
            "--shard needs --start-at TIME so that every host starts each run together (e.g. --start-at +30s, the same time on every host)",
        )),
        (Some(shard), Some(start_at_unix_ms)) => Ok(Some(Sharding {
            shard,
            start_at_unix_ms,
            gap: iolab_model::parse_duration(&args.shard_gap)
                .map_err(|e| CliError::usage(format!("--shard-gap: {e}")))?,
        })),
    }
}

/// `report.md` and `report.html` beside `runs.json`; a renderer that fails
/// leaves its file out (the results can be re-rendered with `iolab report`).
pub(crate) fn write_reports(file: &RunsFile, dir: &Path) {
    for (format, name) in [
        (Format::Markdown, "report.md"),
        (Format::Html, "report.html"),
    ] {
        if let Ok(bytes) = iolab_report::render(file, format) {
            if let Err(e) = iolab_model::files::write_atomic(&dir.join(name), &bytes) {
                eprintln!("warning: cannot write {}: {e}", dir.join(name).display());
            }
        }
    }
}

/// The report's table, or one summary line per run if it cannot render.
pub(crate) fn print_table(file: &RunsFile) {
    match iolab_report::render(file, Format::Table) {
        Ok(bytes) => iolab_files::stdout::write(&bytes),
        Err(_) => {
            for r in &file.runs {
                crate::outln!("{:<32} {}", r.name, summary::line(r));
            }
        }
    }
}

fn print_plan(plan: &ExperimentPlan) {
    crate::outln!(
        "{}: {}\n{} runs x {} reps, scale {}, warm-up {}, about {}",
        plan.name,
        plan.description,
        plan.runs.len(),
        plan.reps,
        plan.scale,
        iolab_model::format_duration(plan.warmup),
        iolab_model::format_duration(Duration::from_secs(
            iolab_lab::estimate::estimate(plan).as_secs().max(1)
        ))
    );
    for r in &plan.runs {
        let what = match &r.work {
            Work::Http(w @ iolab_model::experiment::HttpWork { held: Some(h), .. }) => {
                format!(
                    "{}  {} WebSockets opened at {}/s, each held {} at {} msg/s  timeout {}",
                    w.steps,
                    iolab_report::numbers::count(u64::from(h.connections)),
                    iolab_report::numbers::rate(h.open_rate),
                    iolab_model::format_duration(h.hold),
                    iolab_report::numbers::rate(h.message_rate),
                    iolab_model::format_duration(w.timeout)
                )
            }
            Work::Http(w) => {
                let load = match (&w.driver, w.driver.peak_rate()) {
                    (_, Some(rate)) => format!("{} req/s", iolab_report::numbers::rate(rate)),
                    (iolab_model::Driver::Closed { concurrency, .. }, None) => {
                        format!("{concurrency} clients (closed loop)")
                    }
                    _ => "closed loop".to_string(),
                };
                format!(
                    "{}  {}  for {}  timeout {}",
                    w.steps,
                    load,
                    w.driver
                        .duration()
                        .map_or("-".into(), iolab_model::format_duration),
                    iolab_model::format_duration(w.timeout)
                )
            }
            Work::Batch(b) => format!("batch of {b}"),
        };
        crate::outln!("  {:<36} {:<20} {}", r.name, r.params.label(), what);
    }
}
