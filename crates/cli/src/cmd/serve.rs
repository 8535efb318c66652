//! `iolab serve`: serve the target contract under one concurrency model.
//!
//! Prints the URL it listens on as the first stdout line (so `--port 0` can be
//! orchestrated), stops on SIGINT/SIGTERM after letting in-flight requests
//! finish within `--grace`, and exits 0. With `--runtime jvm` the same contract
//! is served by the Spring targets in `targets/jvm` (started through
//! `scripts/jvm-target`, see `iolab_lab::jvm`), with the same first line and
//! the signals forwarded.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use iolab_backends::Backends;
use iolab_model::{parse_duration, ModelKind, ModelParams, Runtime};
use iolab_models::{ServeConfig, ServeError, Shutdown};

use crate::cmd::backend_flags::BackendFlags;
use crate::CliError;

/// Flags of `iolab serve`. Defaults follow the real systems each model stands for.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab serve --model pool --port 0\n  iolab serve --model loop-async --workers 1 --cpus 0\n  iolab serve --model thread-per-request --max-threads 1000\n  iolab serve --runtime jvm --model virtual --port 0"
)]
pub struct Args {
    /// Concurrency model: sequential, pool, thread-per-request, loop-blocking, loop-offload, loop-async; on the JVM also virtual.
    #[arg(long, short = 'm', value_name = "MODEL")]
    pub model: String,
    /// Where the target runs: rust (built in) or jvm (Spring MVC/WebFlux in targets/jvm; needs JDK 25 and Maven).
    #[arg(long, value_name = "RUNTIME", default_value = "rust")]
    pub runtime: String,
    /// jvm, pool/virtual: every blocking sleep inside a `synchronized` block (Loom's pinning case).
    #[arg(long)]
    pub synchronized: bool,
    /// jvm: requests the target sends itself before printing its URL (JIT warm-up) [default: 0].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmup: Option<u32>,
    /// Address to listen on (loopback unless you say otherwise).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: String,
    /// Port to listen on; 0 picks a free one (the URL is printed first).
    #[arg(long, short = 'p', value_name = "PORT", default_value_t = 8080)]
    pub port: u16,
    /// pool: worker threads [default: 200, Tomcat maxThreads].
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// pool: connections held open at once [default: 8192, Tomcat maxConnections].
    #[arg(long, value_name = "C")]
    pub max_connections: Option<u32>,
    /// Kernel listen backlog [default: 100 (Tomcat acceptCount) for the thread models, 4096 for the loops].
    #[arg(long, value_name = "B")]
    pub backlog: Option<u32>,
    /// loop-*: event-loop worker threads [default: cores, as tokio].
    #[arg(long, value_name = "K")]
    pub workers: Option<u32>,
    /// loop-offload: blocking pool threads [default: 64, Kotlin Dispatchers.IO].
    #[arg(long, value_name = "P")]
    pub offload: Option<u32>,
    /// thread-per-request: most threads alive at once; beyond it 503 [default: no cap].
    #[arg(long, value_name = "T")]
    pub max_threads: Option<u32>,
    /// Pin the process to these CPUs, e.g. 0 or 0-1 (sched_setaffinity).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// After SIGINT/SIGTERM, how long in-flight requests may take to finish.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub grace: String,
    #[command(flatten)]
    pub backends: BackendFlags,
}

impl Args {
    /// The model knobs given on the command line.
    fn params(&self) -> ModelParams {
        ModelParams {
            threads: self.threads,
            max_connections: self.max_connections,
            backlog: self.backlog,
            workers: self.workers,
            offload: self.offload,
            max_threads: self.max_threads,
            ..Default::default()
        }
    }

    /// `--runtime`, checked.
    fn runtime(&self) -> Result<Runtime, CliError> {
        match self.runtime.as_str() {
            "rust" => Ok(Runtime::Rust),
            "jvm" => Ok(Runtime::Jvm),
            other => Err(CliError::usage(format!(
                "--runtime: unknown runtime '{other}' (expected rust or jvm)"
            ))),
        }
    }

    /// The validated config (without the socket).
    fn config(&self) -> Result<ServeConfig, CliError> {
        let model: ModelKind = self.model.parse().map_err(CliError::usage)?;
        if self.synchronized || self.warmup.is_some() {
            let flag = if self.synchronized {
                "--synchronized"
            } else {
                "--warmup"
            };
            return Err(CliError::usage(format!(
                "{flag} applies to the JVM targets: add --runtime jvm"
            )));
        }
        let params = self.params();
        iolab_models::validate(model, &params).map_err(CliError::usage)?;
        let grace: Duration =
            parse_duration(&self.grace).map_err(|e| CliError::usage(format!("--grace: {e}")))?;
        Ok(ServeConfig {
            model,
            params,
            backends: Arc::new(Backends::new(self.backends.config())),
            grace,
        })
    }
}

/// Run `iolab serve`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    if args.runtime()? == Runtime::Jvm {
        return run_jvm(&args);
    }
    let config = args.config()?;
    let ip: IpAddr = args.bind.parse().map_err(|_| {
        CliError::usage(format!(
            "--bind: '{}' is not an IP address (e.g. 127.0.0.1)",
            args.bind
        ))
    })?;
    if let Some(list) = &args.cpus {
        let cpus = iolab_models::parse_cpu_list(list)
            .map_err(|e| CliError::usage(format!("--cpus: {e}")))?;
        iolab_models::pin_to_cpus(&cpus)
            .map_err(|e| CliError::usage(format!("--cpus {list}: cannot pin the process: {e}")))?;
    }
    let addr = SocketAddr::new(ip, args.port);
    let listener = TcpListener::bind(addr).map_err(|e| {
        CliError::usage(format!(
            "cannot listen on {addr}: {e} (pick another --port, or --port 0 for a free one)"
        ))
    })?;
    let local = listener
        .local_addr()
        .map_err(|e| CliError::usage(format!("cannot read the bound address: {e}")))?;
    let shutdown = Shutdown::new();
    shutdown
        .on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot watch SIGINT/SIGTERM: {e}")))?;
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "http://{local}");
        let _ = out.flush();
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
    match iolab_models::serve(config, listener, shutdown) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e @ (ServeError::BadParams(_) | ServeError::Unsupported(_))) => Err(CliError::usage(e)),
        Err(e) => Err(CliError::Failed(anyhow::anyhow!("serve: {e}"))),
    }
}

/// `iolab serve --runtime jvm`: the matching Spring target in the foreground.
fn run_jvm(args: &Args) -> Result<ExitCode, CliError> {
    use iolab_lab::jvm;

    let model: ModelKind = args.model.parse().map_err(CliError::usage)?;
    let params = ModelParams {
        pg_pool: Some(args.backends.pg_pool),
        mc_pool: Some(args.backends.mc_pool),
        ..args.params()
    };
    jvm::check(model, &params, args.synchronized).map_err(|e| {
        // Name the knob as a flag: `max_threads does not apply` -> `--max-threads ...`.
        match e.split_once(" does not apply") {
            Some((knob, rest)) => {
                CliError::usage(format!("--{} does not apply{rest}", knob.replace('_', "-")))
            }
            None => CliError::usage(e),
        }
    })?;
    if args.bind != "127.0.0.1" {
        return Err(CliError::usage(format!(
            "--bind {}: the JVM targets listen on 127.0.0.1 only; remove --bind",
            args.bind
        )));
    }
    let grace: Duration =
        parse_duration(&args.grace).map_err(|e| CliError::usage(format!("--grace: {e}")))?;
    let root = jvm::find_root().map_err(CliError::usage)?;
    let opts = jvm::JvmOptions {
        port: args.port,
        synchronized: args.synchronized,
        backends: iolab_lab::services::Addresses {
            pg: args.backends.pg.clone(),
            mc: args.backends.mc.clone(),
            http: args.backends.http_backend.clone(),
        },
        pg_wait: Some(args.backends.pg_wait),
        warmup: args.warmup.unwrap_or(0),
    };
    let argv = jvm::jvm_target_command(&root, model, &params, &opts).map_err(CliError::usage)?;
    if let Some(list) = &args.cpus {
        // The JVM inherits our CPU set.
        let cpus = iolab_models::parse_cpu_list(list)
            .map_err(|e| CliError::usage(format!("--cpus: {e}")))?;
        iolab_models::pin_to_cpus(&cpus)
            .map_err(|e| CliError::usage(format!("--cpus {list}: cannot pin the process: {e}")))?;
    }
    // The target halts itself 3 s after SIGTERM at the latest (targets/jvm App.kt).
    let code = jvm::serve_foreground(&argv, grace.max(Duration::from_secs(5)))
        .map_err(|e| CliError::Failed(anyhow::anyhow!("serve --runtime jvm: {e}")))?;
    Ok(ExitCode::from(code))
}
