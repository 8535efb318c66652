//! `iolab backend`: helpers around the real backends.
//! - `http`: iolab's HTTP delay service (`GET /delay?ms=MS`, `/health`,
//!   `/metrics`); its first stdout line is its URL, like `iolab serve`.
//! - `mc-fill`: store a value in memcached (E4's 1 MB `test` key).
//! - `counts`: the work the backends say they did (what `verify` compares).

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;

use iolab_backends::BackendConfig;
use iolab_model::steps::{BackendKind, Step};

use crate::cmd::flags::BackendFlags;
use crate::CliError;

/// Flags of `iolab backend`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which helper.
    #[command(subcommand)]
    pub command: Sub,
}

/// The helpers.
#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Run the HTTP delay service: GET /delay?ms=MS answers after MS ms.
    Http(HttpArgs),
    /// Store a value of SIZE bytes under KEY in memcached (E4: --key test --size 1024000).
    McFill(McFillArgs),
    /// Print what each backend counted itself (the numbers `verify` compares).
    Counts(CountsArgs),
}

/// Flags of `iolab backend http`.
#[derive(Debug, clap::Args)]
pub struct HttpArgs {
    /// Port to listen on (0 = a free one; the URL is printed first).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind (loopback by default; the service is for local experiments).
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: IpAddr,
}

/// Flags of `iolab backend mc-fill`.
#[derive(Debug, clap::Args)]
pub struct McFillArgs {
    /// memcached address.
    #[arg(long, env = "IOLAB_MC", value_name = "HOST:PORT")]
    pub mc: String,
    /// Key to store (`mc:KEY` steps read it).
    #[arg(long, default_value = "test")]
    pub key: String,
    /// Value size in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1_024_000)]
    pub size: usize,
}

/// Flags of `iolab backend counts`.
#[derive(Debug, clap::Args)]
pub struct CountsArgs {
    /// Where the backends are (the same flags and env vars as `iolab serve`).
    #[command(flatten)]
    pub backends: BackendFlags,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Run `iolab backend`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    match args.command {
        Sub::Http(a) => http(a),
        Sub::McFill(a) => mc_fill(a),
        Sub::Counts(a) => counts(a),
    }
}

fn http(a: HttpArgs) -> Result<ExitCode, CliError> {
    let bind = SocketAddr::new(a.bind, a.port);
    iolab_backends::delay::run_until_ctrl_c(bind, |url| {
        crate::outln!("{url}");
        eprintln!(
            "delay service: GET {url}/delay?ms=MS, {url}/health, {url}/metrics (Ctrl-C stops)"
        );
    })
    .map_err(|e| CliError::usage(format!("cannot serve on {bind}: {e} (pick another --port)")))?;
    Ok(ExitCode::SUCCESS)
}

fn mc_fill(a: McFillArgs) -> Result<ExitCode, CliError> {
    iolab_backends::check_address(BackendKind::Mc, &a.mc).map_err(CliError::usage)?;
    // The key must be one that an `mc:KEY` step can name.
    match iolab_model::steps::parse(&format!("mc:{}", a.key)) {
        Ok(Step::Io(call)) if call.key() == Some(a.key.as_str()) => {}
        Ok(_) => {
            return Err(CliError::usage(format!(
                "bad --key '{}': use letters, digits and _ . : - only",
                a.key
            )))
        }
        Err(e) => return Err(CliError::usage(format!("bad --key '{}': {e}", a.key))),
    }
    // A recognisable, incompressible-enough pattern: bytes cycle through a-z.
    let value: Vec<u8> = (0..a.size).map(|i| b'a' + (i % 26) as u8).collect();
    iolab_backends::mc::set(&a.mc, &a.key, &value).map_err(|e| {
        CliError::Failed(anyhow::anyhow!(
            "cannot store '{}' in memcached at {}: {e}",
            a.key,
            a.mc
        ))
    })?;
    eprintln!(
        "stored '{}' ({} bytes) in memcached at {}",
        a.key, a.size, a.mc
    );
    Ok(ExitCode::SUCCESS)
}

fn counts(a: CountsArgs) -> Result<ExitCode, CliError> {
    let config: BackendConfig = a.backends.config(&Default::default());
    if config.addresses.is_empty() {
        return Err(CliError::usage(format!(
            "no backend given: pass {} (or eval \"$(scripts/services up)\")",
            backend_flags()
        )));
    }
    let counts =
        iolab_backends::counts::read(&config).map_err(|e| CliError::Failed(anyhow::anyhow!(e)))?;
    if a.json {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&counts).expect("counts serialize")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let show = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
    crate::outln!("{:<16} {:>12}  source", "counter", "value");
    for (kind, count) in counts.iter() {
        if let Some(c) = kind.def().counter {
            crate::outln!("{:<16} {:>12}  {}", c.field, show(count), c.source);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--http-backend, --pg or --mc`: every real backend's flag.
fn backend_flags() -> String {
    let flags: Vec<&str> = BackendKind::real().map(|k| k.def().flag).collect();
    iolab_model::steps::listed(&flags)
}
