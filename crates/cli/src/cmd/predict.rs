//! `iolab predict`: say before running what each model will do under a plan.
//!
//! The plan comes from a preset (`iolab predict showdown`) or from ad-hoc
//! flags (`--model pool --threads 200 --steps sleep:1000 --rate 450`); either
//! way it becomes an [`ExperimentPlan`] and `iolab_predict::predict_plan`
//! simulates every run. Output: a table with one explanation per run, or
//! `--json` (`iolab.predict/1`).

use std::process::ExitCode;
use std::time::Duration;

use iolab_model::driver::{Arrival, ConnectionMode, Driver, Phase};
use iolab_model::experiment::{ExperimentPlan, HttpWork, RunSpec, Work};
use iolab_model::predict::PredictFile;
use iolab_model::{parse_duration, ModelKind};
use iolab_report::Format;

use crate::cmd::flags::KnobFlags;
use crate::CliError;

/// Flags of `iolab predict`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab predict showdown\n  iolab predict --model pool --threads 200 --steps sleep:1000 --rate 450 --duration 60s --timeout 10s --new-connection\n  iolab predict --steps 'par(sleep:200,sleep:500,sleep:300)' --rate 1000000 --duration 10s --json"
)]
pub struct Args {
    /// A preset name (e.g. `showdown`) or a preset TOML file. Without one,
    /// the run is built from the flags below.
    pub preset: Option<String>,
    /// Time-scale of the preset (0 < F <= 1) [default: the preset's own].
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Offered rate, req/s: replaces every open-loop run's rate (a constant
    /// rate over the same duration).
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,
    /// Only these models, comma-separated [default: every run of the preset;
    /// without a preset, every built-in model].
    #[arg(long, value_delimiter = ',', value_name = "M")]
    pub model: Vec<String>,
    /// Print `iolab.predict/1` JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// CPUs the target would have [default: this machine's].
    #[arg(long, value_name = "N")]
    pub cores: Option<u32>,
    /// Ad hoc: what each request does, e.g. `sleep:1000` or `seq(pg:200,http:500)`.
    #[arg(long, value_name = "STEPS")]
    pub steps: Option<String>,
    /// Ad hoc: how long the load lasts.
    #[arg(long, value_name = "D", default_value = "60s")]
    pub duration: String,
    /// Ad hoc: the client's timeout per request.
    #[arg(long, value_name = "D", default_value = "10s")]
    pub timeout: String,
    /// Ad hoc: closed loop of C clients instead of an open-loop rate.
    #[arg(long, value_name = "C", conflicts_with = "rate")]
    pub concurrency: Option<u32>,
    /// Ad hoc: Poisson arrivals with this seed instead of evenly spaced ones.
    #[arg(long, value_name = "SEED")]
    pub poisson: Option<u64>,
    /// Ad hoc: a new TCP connection per request (artillery's way).
    #[arg(long)]
    pub new_connection: bool,
    /// Ad hoc: most client connections open at once.
    #[arg(long, value_name = "N", default_value_t = ConnectionMode::DEFAULT_MAX)]
    pub max_client_connections: u32,
    #[command(flatten)]
    pub knobs: KnobFlags,
}

/// Run `iolab predict`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let cores = match args.cores {
        Some(0) => return Err(CliError::usage("--cores: give at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let plan = plan(&args)?;
    let predictions = iolab_lab::targets::predict_plan(&plan, cores);
    let format = Format::json_or_text(args.json);
    let doc = PredictFile::new(&plan.name, cores, predictions);
    let bytes =
        iolab_report::predict::render(&doc, format).map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    Ok(ExitCode::SUCCESS)
}

/// The plan to predict: a preset's, or one built from the ad-hoc flags;
/// `--model` and `--rate` applied to either.
pub fn plan(args: &Args) -> Result<ExperimentPlan, CliError> {
    let models = args
        .model
        .iter()
        .map(|m| {
            m.parse::<ModelKind>()
                .map_err(|e| CliError::usage(format!("--model: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(r) = args.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(CliError::usage(format!(
                "--rate: {r} is not a positive number of requests per second"
            )));
        }
        iolab_model::limits::check_rate(r).map_err(|e| CliError::usage(format!("--rate: {e}")))?;
    }
    let mut plan = match &args.preset {
        Some(name) => {
            if args.steps.is_some() {
                return Err(CliError::usage(
                    "--steps builds an ad-hoc run: drop it or drop the preset",
                ));
            }
            iolab_lab::preset::load_plan(name, args.scale)?
        }
        None => ad_hoc(args, &models)?,
    };
    if !models.is_empty() {
        plan.runs.retain(|r| models.contains(&r.model));
        if plan.runs.is_empty() {
            return Err(CliError::usage(
                "--model: no run of this preset uses that model (see `iolab presets`)",
            ));
        }
    }
    if let Some(rate) = args.rate {
        for run in &mut plan.runs {
            if let Work::Http(h) = &mut run.work {
                if let Driver::Open { phases, .. } = &mut h.driver {
                    let d = phases
                        .iter()
                        .fold(Duration::ZERO, |t, p| t.saturating_add(p.duration));
                    *phases = vec![Phase::hold(rate, d)];
                }
            }
        }
    }
    // Bounded before anything is simulated: `--rate 1e9 --duration 168h`
    // is one line, not a simulation growing without end.
    for run in &plan.runs {
        if let Work::Http(h) = &run.work {
            iolab_predict::check_size(h)
                .map_err(|e| CliError::usage(format!("run '{}': {e}", run.name)))?;
            check_load(args, &run.name, h)?;
        }
    }
    Ok(plan)
}

/// The load checked as `attack` and `run` check it (one rule for what can
/// be sent, so no prediction is made of a load attack refuses); the flag
/// named is predict's own for an ad-hoc run, the preset's field otherwise.
fn check_load(args: &Args, run: &str, h: &HttpWork) -> Result<(), CliError> {
    iolab_lab::runner::check_http(h).map_err(|(field, e)| {
        CliError::usage(match &args.preset {
            None => match field.strip_prefix("load.") {
                Some("max_connections") => format!("--max-client-connections: {e}"),
                Some(flag) => format!("--{flag}: {e}"),
                None => e.replace("--connections", "--max-client-connections"),
            },
            Some(_) => format!("run '{run}': field '{field}': {e}"),
        })
    })
}

/// The plan of `--steps` and the load flags: one run per model asked for
/// (every built-in one by default), all under the same load.
fn ad_hoc(args: &Args, models: &[ModelKind]) -> Result<ExperimentPlan, CliError> {
    let work = ad_hoc_work(args)?;
    let params = args.knobs.params().map_err(CliError::usage)?;
    let models: Vec<ModelKind> = if models.is_empty() {
        ModelKind::built_in().collect()
    } else {
        models.to_vec()
    };
    let runs = models
        .iter()
        .map(|&model| RunSpec::of_model(model, params.clone(), 1.0, Work::Http(work.clone())))
        .collect();
    Ok(ExperimentPlan {
        name: "ad-hoc".to_string(),
        description: "built from iolab predict flags".to_string(),
        source: None,
        scale: 1.0,
        reps: 1,
        warmup: Duration::ZERO,
        warmup_requests: None,
        runs,
        published: None,
        pin: true,
    })
}

/// The load of an ad-hoc run: `--steps`, the driver, the connections and
/// the timeout, each checked in that order.
fn ad_hoc_work(args: &Args) -> Result<HttpWork, CliError> {
    let Some(steps) = &args.steps else {
        return Err(CliError::usage(
            "give a preset (e.g. `iolab predict showdown`) or --steps with --rate or --concurrency (e.g. --steps sleep:1000 --rate 450)",
        ));
    };
    let steps =
        iolab_model::steps::parse(steps).map_err(|e| CliError::usage(format!("--steps: {e}")))?;
    let duration =
        parse_duration(&args.duration).map_err(|e| CliError::usage(format!("--duration: {e}")))?;
    let timeout =
        parse_duration(&args.timeout).map_err(|e| CliError::usage(format!("--timeout: {e}")))?;
    if duration.is_zero() || timeout.is_zero() {
        return Err(CliError::usage(
            "--duration and --timeout must be above zero",
        ));
    }
    let driver = ad_hoc_driver(args, duration)?;
    Ok(HttpWork {
        connections: ad_hoc_connections(args)?,
        ..HttpWork::new(steps, driver, timeout)
    })
}

/// An open loop at `--rate` (evenly spaced, or Poisson with `--poisson`),
/// or a closed loop of `--concurrency` clients, for `duration`.
fn ad_hoc_driver(args: &Args, duration: Duration) -> Result<Driver, CliError> {
    match (args.rate, args.concurrency) {
        (Some(rate), None) => Ok(Driver::Open {
            phases: vec![Phase::hold(rate, duration)],
            arrival: args
                .poisson
                .map_or(Arrival::Constant, |seed| Arrival::Poisson { seed }),
        }),
        (None, Some(0)) => Err(CliError::usage("--concurrency: give at least 1 client")),
        (None, Some(c)) if c > iolab_model::limits::MAX_CONNECTIONS => {
            Err(CliError::usage(format!(
                "--concurrency {c}: at most {} clients",
                iolab_model::limits::MAX_CONNECTIONS
            )))
        }
        (None, Some(c)) => Ok(Driver::Closed {
            concurrency: c,
            requests: None,
            duration: Some(duration),
        }),
        _ => Err(CliError::usage(
            "give --rate R (open loop) or --concurrency C (closed loop)",
        )),
    }
}

/// Keep-alive, or `--new-connection`, on at most `--max-client-connections`.
fn ad_hoc_connections(args: &Args) -> Result<ConnectionMode, CliError> {
    let max = args.max_client_connections;
    if max == 0 {
        return Err(CliError::usage("--max-client-connections: give at least 1"));
    }
    Ok(if args.new_connection {
        ConnectionMode::NewPerRequest { max }
    } else {
        ConnectionMode::KeepAlive { max }
    })
}
