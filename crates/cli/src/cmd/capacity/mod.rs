//! `iolab capacity URL --slo 'p99<200ms,success>=99.9%'`: the highest
//! sustained open-loop rate the URL serves within the objective, the curve
//! that led there, the queueing model fitted to it and what each
//! concurrency model would do with the service. Flags become a
//! [`Probe`] and [`Options`] (plan.rs); `iolab_capacity` does the work; the
//! `iolab.capacity/1` document is printed (text or `--json`) and saved with
//! its HTML report in a results folder.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use iolab_capacity::{self as capacity, gate};
use iolab_lab::interrupt::{cancel_on_signals, EXIT_INTERRUPTED};
use iolab_lab::results;
use iolab_model::capacity::{CapacityFile, Slo, StepRecord};
use iolab_model::driver::ConnectionMode;
use iolab_report::Format;

use crate::cmd::flags::RequestFlags;
use crate::CliError;

mod plan;
mod replay;

pub use plan::{options, probe, DEFAULT_SLO};
use plan::{service_name, slo_flag, sweep};

/// Flags of `iolab capacity`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iolab capacity http://127.0.0.1:8080/api/orders --slo 'p99<200ms,success>=99.9%'
  iolab capacity https://127.0.0.1:8443/ -k -m POST -H 'Content-Type: application/json' --body '{}' --slo 'p99<500ms'
  iolab capacity http://127.0.0.1:8080/ --slo 'p99<250ms' --pid 4242 --metrics http://127.0.0.1:8080/actuator/prometheus --json
  iolab capacity http://127.0.0.1:8080/api/orders --sweep 32 --sweep-step 5s
  iolab capacity --replay access.log --base http://127.0.0.1:8080 --slo 'GET /orders/{id}:p99<200ms; *:p99<500ms'")]
pub struct Args {
    /// URL of the service (http:// or https://), or a preset (name or .toml
    /// file) with a [capacity] table; or give --targets.
    #[arg(value_name = "URL|PRESET", required_unless_present_any = ["targets", "replay"])]
    pub url: Option<String>,
    /// The objective every step must meet: latency clauses pQ<BOUND (over
    /// every planned request: an unanswered one is late) and success>=S%
    /// [default: p99<200ms,success>=99.9%; a preset's own]; with --replay
    /// also per endpoint: 'GET /orders/{id}:p99<200ms; *:p99<500ms' (*:
    /// every endpoint not named; a part without an endpoint: every request
    /// together, and each endpoint with neither its own clauses nor *'s).
    #[arg(long, value_name = "SLO")]
    pub slo: Option<String>,
    #[command(flatten)]
    pub request: RequestFlags,
    /// First rate of the ramp, req/s (10, or 600/1m).
    #[arg(long, value_name = "R", default_value_t = 10.0, value_parser = crate::cmd::flags::rate)]
    pub start: f64,
    /// Highest rate tried, req/s.
    #[arg(long, value_name = "R", default_value_t = 100_000.0, value_parser = crate::cmd::flags::rate)]
    pub max: f64,
    /// Stop when the bracket (fail - pass) / pass is this narrow, e.g. 5%.
    #[arg(long, value_name = "P", default_value = "5%")]
    pub precision: String,
    /// The share of a rate's windows allowed to miss the objective, like an
    /// SLO's error budget: each rate is held window after window (each a
    /// step) until its windows decide it; 25% holds a rate when three of
    /// four windows met the objective, or their requests together did; 0%
    /// lets one window decide alone.
    #[arg(long, value_name = "SHARE", default_value = "25%")]
    pub budget: String,
    /// Shortest step.
    #[arg(long, value_name = "D", default_value = "1s")]
    pub min_step: String,
    /// Longest step.
    #[arg(long, value_name = "D", default_value = "30s")]
    pub max_step: String,
    /// Most rates decided (each held in up to the budget's windows).
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub max_steps: usize,
    /// Per-request timeout [default: twice the tightest latency bound, at least 1s].
    #[arg(long, value_name = "T")]
    pub timeout: Option<String>,
    /// The service's PID: its CPU (and its children's) and telemetry from /proc.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// The service's own Prometheus endpoint, e.g. http://127.0.0.1:8080/actuator/prometheus.
    #[arg(long, value_name = "URL")]
    pub metrics: Option<String>,
    /// Series to keep from --metrics (repeat) [default: every gauge the binding rules read: Tomcat/Jetty/executor/anyio busy and max threads, HikariCP active/max/pending, the JVM's, Python's, Go's and Node's runtime series].
    #[arg(long = "series", value_name = "NAME")]
    pub series: Vec<String>,
    /// Most connections open at once.
    #[arg(long, value_name = "MAX", default_value_t = ConnectionMode::DEFAULT_MAX)]
    pub connections: u32,
    /// A new TCP connection per request instead of keep-alive.
    #[arg(long)]
    pub new_connection: bool,
    /// Cores the service may use, for the fit and the what-ifs [default: this machine's].
    #[arg(long, value_name = "N")]
    pub cores: Option<u32>,
    /// A capacity.json of an earlier search: exit 1 when a capacity fell by
    /// more than --max-drop against it (what was measured is still written).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// The largest drop against --baseline that still passes, e.g. 10%.
    #[arg(long, value_name = "P", default_value = "10%", requires = "baseline")]
    pub max_drop: String,
    /// After the search, a closed-loop sweep at 1..N clients (at least six
    /// levels), the Universal Scalability Law fitted to it, and a check at
    /// 2N of which fit, USL or queueing, predicted better (6..5000).
    #[arg(long, value_name = "N")]
    pub sweep: Option<u32>,
    /// How long each level of --sweep lasts.
    #[arg(long, value_name = "D", default_value = "3s", requires = "sweep")]
    pub sweep_step: String,
    /// Results folder [default: results/capacity-<UTC time>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the iolab.capacity/1 document instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Before the search, send N requests at --start's rate, then hold it
    /// until the CPU per request is steady (with --pid; 30 s at most): a
    /// JIT compiles by count, pools fill. Said in the search's notes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warm_up: u64,
    /// Run the search N times back to back (1-20): the answer is their
    /// median, with the spread and the interval over every run.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Exit 3 when the machine was too noisy for --precision (the CPU's
    /// speed moved, or steal took, more than it allows): the answer is
    /// still written, with its widened interval.
    #[arg(long)]
    pub strict: bool,
    /// No line per step on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Search with recorded traffic (`--replay FILE --base URL`): each step
    /// sends its mix in the recorded shares.
    #[command(flatten)]
    pub replay: crate::cmd::attack::replay::ReplayArgs,
}

/// Most searches `--repeat` runs: each takes a minute or more.
const MAX_REPEAT: u32 = 20;

/// Run `iolab capacity`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    // First: a replay refuses a URL or preset beside it.
    let mix = replay::plan(&args)?;
    if let Some(preset) = args.url.as_deref().filter(|u| !u.contains("://")) {
        if args.live.live.is_some() {
            return Err(CliError::usage(
                "--live watches the search of one URL: run `iolab capacity URL --live` for each of the preset's targets",
            ));
        }
        if args.repeat != 1 {
            return Err(CliError::usage(
                "--repeat repeats the search of one URL: run `iolab capacity URL --repeat N` for each of the preset's targets",
            ));
        }
        return run_preset(&args, preset);
    }
    if !(1..=MAX_REPEAT).contains(&args.repeat) {
        return Err(CliError::usage(format!(
            "--repeat {}: give 1 to {MAX_REPEAT} searches",
            args.repeat
        )));
    }
    let page = args.live.bind()?;
    let (slo, per_endpoint) = replay::objective(&args, mix.as_ref())?;
    let mut o = options(&args)?;
    let mut probe = match &mix {
        Some(m) => plan::probe_of(&args, &slo, m.url.clone(), m.request.clone())?,
        None => probe(&args, &slo)?,
    };
    let kept = plan::keep_off_target(&mut probe, &mut o, args.cores.is_some());
    let gate = baseline(&args, &slo)?;
    if let Some((b, _)) = &gate {
        b.check(&service_name(&probe.url), Some(&capacity::describe(&probe)))?;
    }
    // Refuse an unusable request before the search starts.
    let check = iolab_model::attack::AttackPlan {
        connections: probe.connections,
        timeout: probe.timeout,
        request: probe.request.clone(),
        ..iolab_model::attack::AttackPlan::new(
            probe.url.clone(),
            iolab_model::Driver::constant(o.start_rps, Duration::from_secs(1)),
        )
    };
    iolab_loadgen::validate(&check)?;
    let started = results::rfc3339(SystemTime::now());
    let each = Lines { quiet: args.quiet };
    let mut notes = mix.map(|m| m.notes).unwrap_or_default();
    if probe.pid.is_none() {
        notes.push("no PID: CPU and telemetry not measured (give --pid N)".to_string());
    }
    notes.extend(kept.as_ref().map(|(_, said)| said.clone()));
    let page = match page {
        Some(listener) => {
            let feed = iolab_loadgen::LiveFeed::new();
            probe.live = Some(feed.clone());
            let title = format!("iolab capacity {} ({slo})", probe.url);
            Some(super::live::serve(
                listener,
                iolab_live::AttackWatch::steps(title, feed),
            )?)
        }
        None => None,
    };
    let mut searches = Vec::new();
    let mut mix_cpu = None;
    for k in 1..=args.repeat {
        if probe.cancel.load(Ordering::Relaxed) {
            break;
        }
        let name = match args.repeat {
            1 => service_name(&probe.url),
            _ => format!("{} #{k}", service_name(&probe.url)),
        };
        if k > 1 {
            // What the last search's last step left queued drains first.
            capacity::Bench::settle(&probe, Duration::from_secs(1));
        }
        let mut these = notes.clone();
        if k == 1 && args.warm_up > 0 {
            let warm = capacity::warm::Warm {
                requests: args.warm_up as f64,
                rate: o.start_rps,
            };
            match warm.before_search(&probe, &slo) {
                Ok(said) => these.push(said),
                Err(e) => these.push(format!("the warm-up failed ({e}): searched cold")),
            }
        }
        // A mix's CPU per endpoint, warm and before the first search.
        if k == 1 && probe.request.mix.is_some() {
            mix_cpu = Some(capacity::mix::cpu::probe(&probe, o.cores));
        }
        let mut search =
            replay::search(&name, &probe, &slo, per_endpoint.as_ref(), &o, these, &each);
        if let Some(pid) = probe.pid {
            if iolab_telemetry::sample_proc(pid).is_none() {
                search.notes.push(format!(
                    "--pid {pid} exited during the search: CPU and telemetry cover only the steps before it; no CPU binding is read"
                ));
                search.fit = None;
            }
        }
        if let Some(cpu) = &mix_cpu {
            capacity::mix::finish(&mut search, cpu.clone());
        }
        searches.push(search);
    }
    if let Some(page) = page {
        page.finish();
    }
    let mut doc = match args.repeat {
        1 => CapacityFile::new("capacity", slo, searches, started),
        _ => CapacityFile::repeated("capacity", slo, searches, started),
    };
    doc.gate = gate.map(|(b, max)| b.gate(&doc.searches, max));
    doc.endpoint_slo = per_endpoint;
    finish(&args, &doc, probe.cancel.load(Ordering::Relaxed))
}

/// `iolab capacity PRESET`: every target of the preset, searched in turn.
fn run_preset(args: &Args, preset: &str) -> Result<ExitCode, CliError> {
    let (plan, slo, mut o) = capacity::preset::load(preset, Default::default())?;
    let fewest = capacity::preset::targets(&plan)
        .iter()
        .filter_map(|r| match &r.work {
            iolab_model::experiment::Work::Http(w) => Some(w.connections.max()),
            _ => None,
        })
        .min()
        .unwrap_or(u32::MAX);
    o.sweep = sweep(args, fewest)?;
    let slo = slo_flag(args)?.unwrap_or(slo);
    let gate = baseline(args, &slo)?;
    if let Some((b, _)) = &gate {
        for name in capacity::preset::search_names(&plan) {
            b.check(&name, None)?;
        }
    }
    let cancel = cancel_on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}")))?;
    let started = results::rfc3339(SystemTime::now());
    let (say, _) = progress(args.quiet);
    let each = Lines { quiet: args.quiet };
    let searches = capacity::preset::run(&plan, &slo, &o, cancel.clone(), &say, &each)
        .map_err(|e| CliError::Failed(anyhow::anyhow!("{e}")))?;
    let mut doc = CapacityFile::new(&plan.name, slo, searches, started);
    doc.gate = gate.map(|(b, max)| b.gate(&doc.searches, max));
    finish(args, &doc, cancel.load(Ordering::Relaxed))
}

/// Save the document and its report, print it, and the exit code.
fn finish(args: &Args, doc: &CapacityFile, cancelled: bool) -> Result<ExitCode, CliError> {
    // A default name is taken by mkdir: two searches ending in the same
    // second get two folders.
    let out_dir = match &args.out {
        Some(dir) => dir.clone(),
        None => iolab_files::claim_new(&results::default_dir(&doc.name))
            .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot make a results folder: {e}")))?,
    };
    save(doc, &out_dir)?;
    if !args.quiet {
        eprintln!("results: {}/", out_dir.display());
    }
    let bytes = iolab_report::capacity::render(doc, Format::json_or_text(args.json))
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    if cancelled {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if let Some(g) = doc.gate.as_ref().filter(|g| !g.passed) {
        eprintln!("{}", iolab_report::capacity::gate_line(g));
        return Ok(ExitCode::from(1));
    }
    // A search of a target that was never there measured nothing: a
    // failed run, not an answer (issue 49 finding 17).
    if let Some(s) = doc
        .searches
        .iter()
        .find(|s| capacity::seen::never_answered(s))
    {
        eprintln!("error: {}: {}", s.name, s.outcome);
        return Ok(ExitCode::from(1));
    }
    if let Some(s) = doc
        .searches
        .iter()
        .find(|s| args.strict && iolab_report::capacity::too_noisy(s))
    {
        let why = iolab_report::capacity::machine_line(s).unwrap_or_default();
        eprintln!("error: {} (--strict): {why}", s.name);
        return Ok(ExitCode::from(crate::exit::EXIT_NOISY));
    }
    Ok(ExitCode::SUCCESS)
}

/// The baseline and the largest drop allowed, checked before any search.
fn baseline(args: &Args, slo: &Slo) -> Result<Option<(gate::Baseline, f64)>, CliError> {
    let Some(path) = &args.baseline else {
        return Ok(None);
    };
    let max = capacity::preset::parse_share(&args.max_drop)
        .map_err(|e| CliError::usage(format!("--max-drop {e}")))?;
    let b = gate::load(path, slo)?;
    Ok(Some((b, max * 100.0)))
}

/// `capacity.json` and `report.html` in `dir`.
pub fn save(doc: &CapacityFile, dir: &std::path::Path) -> Result<(), CliError> {
    let fail = |e: String| CliError::Failed(anyhow::anyhow!("cannot write {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    for (name, format) in [
        ("capacity.json", Format::Json),
        ("report.html", Format::Html),
    ] {
        let bytes = iolab_report::capacity::render(doc, format).map_err(|e| fail(e.to_string()))?;
        iolab_model::files::write_atomic(&dir.join(name), &bytes)
            .map_err(|e| fail(e.to_string()))?;
    }
    Ok(())
}

/// What a search of `iolab capacity` prints on stderr as it goes (nothing
/// with `--quiet`): a line per step, and per level of its sweep.
#[derive(Debug, Clone, Copy)]
struct Lines {
    quiet: bool,
}

impl capacity::Progress for Lines {
    fn step(&self, s: &StepRecord) {
        if !self.quiet {
            eprintln!("{}", iolab_report::capacity::step_line(s));
        }
    }

    fn level(&self, l: &iolab_model::capacity::usl::SweepLevel) {
        if !self.quiet {
            eprintln!("{}", iolab_report::usl::level_line(l));
        }
    }
}

/// The lines a search prints on stderr as it goes (none with `--quiet`):
/// its messages, and one line per step. Shared with `iolab whatif`.
pub(crate) fn progress(quiet: bool) -> (impl Fn(&str) + Copy, impl Fn(&StepRecord) + Copy) {
    let say = move |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    let each = move |s: &StepRecord| {
        if !quiet {
            eprintln!("{}", iolab_report::capacity::step_line(s));
        }
    };
    (say, each)
}
