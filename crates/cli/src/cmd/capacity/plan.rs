//! The `iolab capacity` flags made a validated plan: the search's
//! [`Options`], the [`Probe`] (what is loaded and watched) and the
//! objective, each fault a one-line usage error naming the flag.

use std::time::Duration;

use iolab_capacity::{self as capacity, Options, Probe, SweepOptions};
use iolab_lab::interrupt::cancel_on_signals;
use iolab_model::capacity::{BudgetError, Slo};
use iolab_model::driver::ConnectionMode;
use iolab_model::parse_duration;

use super::Args;
use crate::CliError;

fn duration(flag: &str, s: &str) -> Result<Duration, CliError> {
    parse_duration(s).map_err(|e| CliError::usage(format!("{flag}: {e}")))
}

/// `5%` or `0.05`.
fn precision(s: &str) -> Result<f64, CliError> {
    capacity::preset::parse_share(s).map_err(|e| CliError::usage(format!("--precision {e}")))
}

/// The search's settings from the flags.
pub fn options(args: &Args) -> Result<Options, CliError> {
    let o = Options {
        start_rps: args.start,
        max_rps: args.max,
        precision: precision(&args.precision)?,
        min_step: duration("--min-step", &args.min_step)?,
        max_step: duration("--max-step", &args.max_step)?,
        max_steps: args.max_steps,
        cores: match args.cores {
            Some(0) => return Err(CliError::usage("--cores: give at least 1")),
            Some(n) => n,
            None => Options::default().cores,
        },
        sweep: sweep(args, args.connections)?,
        budget: args
            .budget
            .parse()
            .map_err(|e: BudgetError| CliError::usage(format!("--budget {e}")))?,
    };
    if !(o.start_rps > 0.0 && o.start_rps.is_finite() && o.max_rps >= o.start_rps) {
        return Err(CliError::usage(
            "--start must be above 0 and --max at least --start (e.g. --start 10 --max 10000)",
        ));
    }
    if o.min_step.is_zero() || o.max_step < o.min_step {
        return Err(CliError::usage(
            "--min-step must be above 0 and --max-step at least --min-step",
        ));
    }
    if o.max_steps < 2 {
        return Err(CliError::usage("--max-steps: give at least 2"));
    }
    Ok(o)
}

/// `--sweep N --sweep-step D`, within the limits, its check at 2N within
/// `connections`.
pub(super) fn sweep(args: &Args, connections: u32) -> Result<Option<SweepOptions>, CliError> {
    let Some(max) = args.sweep else {
        return Ok(None);
    };
    iolab_model::limits::check_sweep(max).map_err(|e| CliError::usage(format!("--sweep: {e}")))?;
    let step = duration("--sweep-step", &args.sweep_step)?;
    iolab_model::limits::check_sweep_step(step)
        .map_err(|e| CliError::usage(format!("--sweep-step: {e}")))?;
    if 2 * max > connections {
        return Err(CliError::usage(format!(
            "--sweep {max}: its check at twice N holds {} connections, but --connections is {connections}: raise it or lower --sweep",
            2 * max
        )));
    }
    Ok(Some(SweepOptions { max, step }))
}

/// The probe (what is loaded and watched) from the flags.
pub fn probe(args: &Args, slo: &Slo) -> Result<Probe, CliError> {
    let (url, request) = args.request.requests(args.url.as_deref())?;
    probe_of(args, slo, url, request)
}

/// The probe of `request` (its first URL `url`), watched as the flags say.
pub(super) fn probe_of(
    args: &Args,
    slo: &Slo,
    url: String,
    request: iolab_model::request::RequestSet,
) -> Result<Probe, CliError> {
    let timeout = match &args.timeout {
        Some(t) => duration("--timeout", t)?,
        None => slo_timeout(slo)?,
    };
    if timeout.is_zero() {
        return Err(CliError::usage("--timeout must be above 0"));
    }
    if let Some(pid) = args.pid {
        // The CPU read is the process and every descendant: init's is the
        // whole machine, iolab's or its shell's include the load itself
        // (issue 49 finding 16: `--pid 1` named another job's compiler
        // the CPU binding "with high confidence").
        let own = [1, std::process::id(), std::os::unix::process::parent_id()];
        if own.contains(&pid) {
            return Err(CliError::usage(format!(
                "--pid {pid} is {}: its CPU is the whole machine's or the load's own; give the service's PID (e.g. from `pgrep -f gunicorn`)",
                match pid {
                    1 => "init, every process's ancestor",
                    p if p == std::process::id() => "iolab itself",
                    _ => "the shell that started iolab",
                }
            )));
        }
        if iolab_telemetry::sample_proc(pid).is_none() {
            // A zombie is a service that died (a port clash before the
            // search, issue 50 finding 7): it has a /proc entry and no CPU.
            let gone = match std::path::Path::new(&format!("/proc/{pid}")).exists() {
                true => "has exited (its parent has not reaped it)",
                false => "is no running process",
            };
            return Err(CliError::usage(format!(
                "--pid {pid} {gone}: start the service and give its PID (e.g. from `pgrep -f gunicorn`)"
            )));
        }
    }
    let max = args.connections;
    let series = if args.series.is_empty() {
        iolab_model::capacity::gauges::default_series()
    } else {
        args.series.clone()
    };
    Ok(Probe {
        url,
        request,
        timeout,
        connections: if args.new_connection {
            ConnectionMode::NewPerRequest { max }
        } else {
            ConnectionMode::KeepAlive { max }
        },
        gen_cpus: Vec::new(),
        target_cpus: Vec::new(),
        pid: args.pid,
        metrics: args.metrics.clone().map(|m| (m, series)),
        cancel: cancel_on_signals().map_err(|e| {
            CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}"))
        })?,
        live: None,
        // A service at a URL: its requests are its own.
        work_base: None,
    })
}

/// The client timeout when --timeout is not given: twice the objective's
/// tightest latency bound (at least 1 s). A bound whose double passes the
/// generator's timeout limit is the objective's fault, so --slo is named.
fn slo_timeout(slo: &Slo) -> Result<Duration, CliError> {
    let bound_ms = slo.tightest_ms().unwrap_or(500.0);
    let max = iolab_model::limits::MAX_TIMEOUT;
    if bound_ms * 2.0 > max.as_secs_f64() * 1000.0 {
        let fmt = iolab_model::format_duration;
        return Err(CliError::usage(format!(
            "--slo: a latency bound of {} needs a client timeout of twice it, over the {} limit: give a bound of at most {} (or set --timeout)",
            fmt(Duration::from_secs_f64(bound_ms / 1000.0)),
            fmt(max),
            fmt(max / 2)
        )));
    }
    Ok(Duration::from_secs_f64((bound_ms * 2.0 / 1000.0).max(1.0)))
}

/// The default objective.
pub const DEFAULT_SLO: &str = "p99<200ms,success>=99.9%";

pub fn slo_flag(args: &Args) -> Result<Option<Slo>, CliError> {
    args.slo
        .as_deref()
        .map(|s| {
            s.parse()
                .map_err(|e| CliError::usage(format!("--slo: {e}")))
        })
        .transpose()
}

/// A searched URL's name in the report's sentences: its host, port and
/// path (`127.0.0.1:8080/orders`), not "url" (issue 50 finding 8: "url is
/// limited by its threads").
pub(super) fn service_name(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.split(['?', '#']).next().unwrap_or(rest);
    path.strip_suffix('/').unwrap_or(path).to_string()
}

/// A target started pinned (`taskset -c 0 ...`) and named by `--pid`: its
/// cores are read each step and watched for other processes, and the
/// search's own threads are kept off them (a generator beside the target
/// would be read as the target's CPU, or as a neighbour taking it). The
/// fit counts the target's cores unless `--cores` was given. `None` (the
/// search as before) when the target may run on every core this command
/// may, or on one it may not.
pub(super) fn keep_off_target(
    probe: &mut Probe,
    o: &mut Options,
    cores_given: bool,
) -> Option<(iolab_lab::environment::KeptTo, String)> {
    let theirs = iolab_telemetry::tasks::cpus_allowed(probe.pid?)?;
    let mine = iolab_lab::environment::allowed_cpus();
    let rest: Vec<usize> = mine
        .iter()
        .copied()
        .filter(|c| !theirs.contains(c))
        .collect();
    if theirs.is_empty() || rest.is_empty() || !theirs.iter().all(|c| mine.contains(c)) {
        return None;
    }
    let kept = iolab_lab::environment::keep_to(&rest)?;
    probe.target_cpus = theirs.clone();
    if !cores_given {
        o.cores = theirs.len() as u32;
    }
    let list = |c: &[usize]| c.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let said = format!(
        "the target is pinned to CPU {}: the search ran on CPU {} and read the target's cores",
        list(&theirs),
        list(&rest)
    );
    Some((kept, said))
}
