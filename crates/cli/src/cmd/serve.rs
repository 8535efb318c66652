//! `iolab serve`: serve the target contract under one concurrency model.
//!
//! Prints the URL it listens on as the first stdout line (so `--port 0` can be
//! orchestrated), stops on SIGINT/SIGTERM after letting in-flight requests
//! finish within `--grace`, and exits 0. With `--metrics-port`, `/metrics` is
//! also served on a listener of its own (second stdout line: `metrics URL`).
//! With `--runtime NAME` the same contract is served by a runtime folder
//! (`runtimes/NAME`, through its manifest's launcher), with the same first
//! line and the signals forwarded.

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use iolab_backends::Backends;
use iolab_lab::targets::runtime::{build, launcher_argv, LaunchArgs};
use iolab_lab::targets::{foreground, Manifest, RuntimeKind, TargetCommand};
use iolab_model::{parse_duration, ModelKind, Runtime};
use iolab_servers::{ServeConfig, ServeError, Shutdown};

use crate::cmd::flags::{BackendFlags, KnobFlags};
use crate::CliError;

/// Flags of `iolab serve`. Defaults follow the real systems each model stands for.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab serve --model pool --port 0\n  iolab serve --model loop-async --workers 1 --cpus 0\n  iolab serve --model thread-per-request --max-threads 1000\n  iolab serve --runtime jvm --model virtual --port 0\n  iolab serve --runtime jvm --model pool --option synchronized"
)]
pub struct Args {
    #[arg(long, short = 'm', value_name = "MODEL", help = model_help())]
    pub model: String,
    #[arg(long, value_name = "RUNTIME", default_value = "rust", help = runtime_help())]
    pub runtime: String,
    /// A runtime's option (repeatable), e.g. `synchronized` on the JVM (Loom's pinning case).
    #[arg(long = "option", value_name = "NAME")]
    pub options: Vec<String>,
    /// Runtimes: requests the target sends itself before printing its URL (JIT warm-up) [default: 0].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmup: Option<u32>,
    /// Address to listen on (loopback unless you say otherwise).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: String,
    /// Port to listen on; 0 picks a free one (the URL is printed first).
    #[arg(long, short = 'p', value_name = "PORT", default_value_t = 8080)]
    pub port: u16,
    /// Share --port with other `iolab serve --reuse-port` processes
    /// (SO_REUSEPORT): the kernel deals connections among them, so one
    /// target holds more connections than one process's file limit (e.g.
    /// 20,000 WebSockets under `ulimit -n` 20,000, as two processes).
    #[arg(long)]
    pub reuse_port: bool,
    /// Also serve /metrics on this port from a thread of its own, which a saturated pool cannot starve (0: a free one; printed as the second stdout line, `metrics URL`).
    #[arg(long, value_name = "PORT")]
    pub metrics_port: Option<u16>,
    /// Pin the process to these CPUs, e.g. 0 or 0-1 (sched_setaffinity).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// After SIGINT/SIGTERM, how long in-flight requests may take to finish.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub grace: String,
    /// Record who held what (queued, running on which thread, waiting on IO) for the first N requests: `GET /spans` answers them (iolab.spans/1), `GET /spans?open` starts a new sample [default: off].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub spans: Option<u32>,
    #[command(flatten)]
    pub knobs: KnobFlags,
    #[command(flatten)]
    pub backends: BackendFlags,
}

impl Args {
    /// The validated config of a built-in model (without the socket).
    fn config(&self) -> Result<ServeConfig, CliError> {
        let model: ModelKind = self.model.parse().map_err(CliError::usage)?;
        if let Some(flag) = self
            .options
            .first()
            .map(|o| format!("--option {o}"))
            .or(self.warmup.map(|_| "--warmup".to_string()))
        {
            return Err(CliError::usage(format!(
                "{flag} applies to a runtime folder's targets: add --runtime (e.g. --runtime jvm)"
            )));
        }
        let params = self.knobs.params().map_err(CliError::usage)?;
        iolab_servers::validate(model, &params).map_err(CliError::usage)?;
        check_task_knobs(&params)?;
        Ok(ServeConfig {
            model,
            backends: Arc::new(Backends::new(self.backends.config(&params))),
            params,
            grace: self.grace()?,
            spans: self.spans,
        })
    }

    fn grace(&self) -> Result<Duration, CliError> {
        parse_duration(&self.grace).map_err(|e| CliError::usage(format!("--grace: {e}")))
    }

    fn pin(&self) -> Result<(), CliError> {
        if let Some(list) = &self.cpus {
            let cpus = iolab_model::limits::parse_cpu_list(list)
                .map_err(|e| CliError::usage(format!("--cpus: {e}")))?;
            iolab_servers::pin_to_cpus(&cpus).map_err(|e| {
                CliError::usage(format!("--cpus {list}: cannot pin the process: {e}"))
            })?;
        }
        Ok(())
    }
}

/// Knobs that start threads or processes, against what this machine starts:
/// checked before a socket is bound or a thread started.
fn check_task_knobs(params: &iolab_model::ModelParams) -> Result<(), CliError> {
    iolab_lab::machine::check_task_knobs(params)
        .map_err(|(knob, e)| CliError::usage(format!("--{}: {e}", knob.replace('_', "-"))))
}

/// Run `iolab serve`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let runtime =
        Runtime::named(&args.runtime).map_err(|e| CliError::usage(format!("--runtime: {e}")))?;
    if !runtime.is_rust() {
        return run_runtime(&args, &runtime);
    }
    let config = args.config()?;
    let ip: IpAddr = args.bind.parse().map_err(|_| {
        CliError::usage(format!(
            "--bind: '{}' is not an IP address (e.g. 127.0.0.1)",
            args.bind
        ))
    })?;
    args.pin()?;
    let addr = SocketAddr::new(ip, args.port);
    let listener = match args.reuse_port {
        true => iolab_servers::listen_reuse_port(addr).map_err(|e| {
            CliError::usage(format!(
                "cannot listen on {addr} with --reuse-port: {e} (the other processes on it must be iolab serve --reuse-port of this user)"
            ))
        })?,
        false => listen(addr, "--port")?,
    };
    let metrics = args
        .metrics_port
        .map(|p| listen(SocketAddr::new(ip, p), "--metrics-port"))
        .transpose()?;
    let shutdown = Shutdown::new();
    shutdown
        .on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot watch SIGINT/SIGTERM: {e}")))?;
    let local = local_addr(&listener)?;
    {
        crate::outln!("http://{local}");
        if let Some(m) = &metrics {
            crate::outln!("metrics http://{}", local_addr(m)?);
        }
    }
    let knobs = config.params.label();
    eprintln!(
        "iolab serve: model {}{} on http://{local} (SIGINT/SIGTERM stops, grace {})",
        config.model,
        if knobs.is_empty() {
            String::new()
        } else {
            format!(" ({knobs})")
        },
        args.grace
    );
    match iolab_servers::serve_with(config, listener, metrics, shutdown) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e @ (ServeError::BadParams(_) | ServeError::Unsupported(_))) => Err(CliError::usage(e)),
        Err(e) => Err(CliError::Failed(anyhow::anyhow!("serve: {e}"))),
    }
}

/// `--runtime`'s help, from the runtime folders built into the binary.
fn runtime_help() -> String {
    format!(
        "Where the target runs: rust (built in) or a runtime folder under runtimes/ ({}).",
        iolab_lab::targets::embedded::names().join(", ")
    )
}

/// `--model`'s help, from the model table: the built-in ones and the rest.
fn model_help() -> String {
    let (built_in, others): (Vec<ModelKind>, Vec<ModelKind>) =
        ModelKind::ALL.iter().partition(|m| m.def().built_in);
    let names = |ms: &[ModelKind]| ms.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
    format!(
        "Concurrency model: {} built in; a runtime may serve others ({}).",
        names(&built_in),
        names(&others)
    )
}

fn listen(addr: SocketAddr, flag: &str) -> Result<TcpListener, CliError> {
    TcpListener::bind(addr).map_err(|e| {
        CliError::usage(format!(
            "cannot listen on {addr}: {e} (pick another {flag}, or 0 for a free one)"
        ))
    })
}

fn local_addr(l: &TcpListener) -> Result<SocketAddr, CliError> {
    l.local_addr()
        .map_err(|e| CliError::usage(format!("cannot read the bound address: {e}")))
}

/// `iolab serve --runtime NAME`: the runtime's target in the foreground.
fn run_runtime(args: &Args, runtime: &Runtime) -> Result<ExitCode, CliError> {
    let model: ModelKind = args.model.parse().map_err(CliError::usage)?;
    let m = Manifest::load(runtime)?;
    if args.reuse_port {
        return Err(CliError::usage(format!(
            "--reuse-port: runtime {runtime}'s target binds its own socket; only the built-in models share a port"
        )));
    }
    if args.spans.is_some() {
        return Err(CliError::usage(format!(
            "--spans: runtime {runtime} records no spans (only the built-in models do; see runtimes/README.md): remove --spans or --runtime"
        )));
    }
    if !m.runs(RuntimeKind::Http) {
        return Err(CliError::usage(format!(
            "runtime {runtime} runs batches, it serves nothing: use it from a batch preset"
        )));
    }
    if args.bind != "127.0.0.1" {
        return Err(CliError::usage(format!(
            "--bind {}: runtime targets listen on 127.0.0.1 only; remove --bind",
            args.bind
        )));
    }
    let params = args.knobs.params().map_err(CliError::usage)?;
    check_task_knobs(&params)?;
    let launch = LaunchArgs {
        model,
        params: &params,
        options: &args.options,
        backends: &args.backends.addresses,
        port: args.port,
        warmup: args.warmup.unwrap_or(0),
        pg_wait: Some(args.backends.pg_wait),
        separate_metrics: args.metrics_port.is_some(),
    };
    let argv =
        launcher_argv(&m, &launch).map_err(|e| CliError::usage(flag_names(&e.to_string())))?;
    build(&m).map_err(|e| CliError::Failed(anyhow::anyhow!(e)))?;
    // The target inherits our CPU set.
    args.pin()?;
    let cmd = TargetCommand {
        argv,
        port: None,
        cpus: Vec::new(),
        dir: Some(m.dir.clone()),
    };
    let code = foreground::serve(&cmd, args.grace()?.max(Duration::from_secs(5)))
        .map_err(|e| CliError::Failed(anyhow::anyhow!("serve --runtime {runtime}: {e}")))?;
    Ok(ExitCode::from(code))
}

/// Name a knob as its flag: `max_threads does not apply` -> `--max-threads does not apply`.
fn flag_names(e: &str) -> String {
    match e.split_once(" does not apply") {
        Some((knob, rest)) if iolab_model::knob::knob(knob).is_some() => {
            format!("--{} does not apply{rest}", knob.replace('_', "-"))
        }
        _ => e.to_string(),
    }
}
