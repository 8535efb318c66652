//! `iolab serve`: serve the target contract under one concurrency model.
//!
//! Prints the URL it listens on as the first stdout line (so `--port 0` can be
//! orchestrated), stops on SIGINT/SIGTERM after letting in-flight requests
//! finish within `--grace`, and exits 0.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use iolab_backends::Backends;
use iolab_model::{parse_duration, ModelKind, ModelParams};
use iolab_models::{ServeConfig, ServeError, Shutdown};

use crate::cmd::backend_flags::BackendFlags;
use crate::CliError;

/// Flags of `iolab serve`. Defaults follow the real systems each model stands for.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab serve --model pool --port 0\n  iolab serve --model loop-async --workers 1 --cpus 0\n  iolab serve --model thread-per-request --max-threads 1000"
)]
pub struct Args {
    /// Concurrency model: sequential, pool, thread-per-request, loop-blocking, loop-offload, loop-async.
    #[arg(long, short = 'm', value_name = "MODEL")]
    pub model: String,
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
    /// The validated config (without the socket).
    fn config(&self) -> Result<ServeConfig, CliError> {
        let model: ModelKind = self.model.parse().map_err(CliError::usage)?;
        let params = ModelParams {
            threads: self.threads,
            max_connections: self.max_connections,
            backlog: self.backlog,
            workers: self.workers,
            offload: self.offload,
            max_threads: self.max_threads,
            ..Default::default()
        };
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
