//! `iolab attack URL`: send HTTP (or gRPC) load, open loop (`--rate`/`--phase`) or
//! closed loop (`--concurrency`), and report what happened honestly. Flags
//! become a validated [`AttackPlan`]; `iolab_loadgen::attack` does the work;
//! the result is rendered as text (default) or `iolab.attack/1` JSON.
//! Here: the flags and the run; the flags' reading into a plan is in
//! [`plan`].

mod held;
mod plan;
pub(crate) mod replay;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use iolab_capacity::judge;
use iolab_lab::interrupt::{cancel_on_signals, EXIT_INTERRUPTED};
use iolab_loadgen::{AttackReport, Hooks};
use iolab_model::attack::Engine;
use iolab_model::capacity::{Slo, SloVerdict};
use iolab_model::protocol::{engine_help, url_help};
use iolab_report::Format;

pub use plan::plan;

use crate::cmd::flags::{HeldFlags, RequestFlags};
use crate::CliError;

/// Arrival process of an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArrivalArg {
    /// Evenly spaced sends.
    Constant,
    /// Exponential gaps (seeded with --seed, so runs repeat).
    Poisson,
}

/// The generator's event-loop engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// io_uring where the kernel has it, else epoll.
    Auto,
    /// A readiness loop on epoll (any Linux kernel).
    Epoll,
    /// Completions on io_uring (Linux 5.11+, not disabled by kernel.io_uring_disabled).
    #[value(name = "io_uring", alias = "io-uring", alias = "uring")]
    IoUring,
}

impl EngineArg {
    /// The engine of the plan.
    pub fn engine(self) -> Engine {
        match self {
            EngineArg::Auto => Engine::Auto,
            EngineArg::Epoll => Engine::Epoll,
            EngineArg::IoUring => Engine::IoUring,
        }
    }
}

/// Flags of `iolab attack`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iolab attack http://127.0.0.1:8080/ --rate 500 --duration 30s
  iolab attack http://127.0.0.1:8080/ --phase 10s:50..450 --phase 60s:450 --arrival poisson
  iolab attack http://127.0.0.1:8080/ --concurrency 50 --requests 100000
  iolab attack http://127.0.0.1:8080/ --rate 200 -d 1m --new-connection --json > run.json
  iolab attack http://127.0.0.1:8080/api/orders -m POST -H 'Content-Type: application/json' --body-file order.json --rate 100 -d 10s
  iolab attack https://127.0.0.1:8443/ --insecure --rate 100 -d 10s
  iolab attack --targets targets.txt --rate 100 -d 10s        (vegeta's format, sent in turn)
  iolab attack --replay access.log --base http://127.0.0.1:8080 --speed 2x   (recorded times)
  iolab attack --replay site.har --base http://127.0.0.1:8080 --rate 200 -d 30s  (recorded shares)
  iolab attack http://127.0.0.1:8080/ --rate 4000 -d 1m --shard 2/4 --start-at +10s -o shard-2.json
  iolab attack http://127.0.0.1:8080/ --rate 500 -d 5m --live     (a page on 127.0.0.1, /metrics too)
  iolab attack http://127.0.0.1:8080/ --http2 --streams 16 --connections 2 --rate 2000 -d 10s
  iolab attack grpc://127.0.0.1:50051 --call helloworld.Greeter/SayHello --data '{\"name\":\"x\"}' -c 8 -n 10000
  iolab attack grpc://127.0.0.1:50051 --call helloworld.Greeter/SayHello --proto greeter.proto --rate 500 -d 10s
  iolab attack ws://127.0.0.1:8080/ws --connections 100 --hold 10s --message-rate 2/s --message hello
  iolab attack http://127.0.0.1:8080/events?every=100ms --sse --connections 100 --hold 10s --json
  iolab attack grpc://127.0.0.1:50051 --call iolab.test.Greeter/Ticks --connections 50 --rate 10 --hold 10s
  iolab attack grpc://127.0.0.1:50051 --call iolab.test.Greeter/Echo --connections 50 --rate 10 --hold 10s --message-rate 5/s")]
pub struct Args {
    // Its help lists the protocol table's rows (`url_help`).
    #[arg(value_name = "URL", required_unless_present_any = ["targets", "replay"], help = url_help())]
    pub url: Option<String>,
    #[command(flatten)]
    pub request: RequestFlags,
    /// Open loop: requests per second, sent on schedule whatever the
    /// answers: 50, or per a time as vegeta writes it (50/s, 3000/1m); a
    /// gRPC streaming call (--hold): calls started per second [default: 100/s].
    #[arg(long, short = 'r', value_name = "R", value_parser = crate::cmd::flags::rate)]
    pub rate: Option<f64>,
    /// Open loop: how long to send; closed loop: stop after this long (500ms, 3s, 1m).
    #[arg(long, short = 'd', value_name = "D")]
    pub duration: Option<String>,
    /// Open loop in phases, in order: DUR:RATE (hold) or DUR:FROM..TO (linear
    /// ramp); add @START to place a phase explicitly (gaps send nothing,
    /// overlaps are refused). Repeat the flag: --phase 10s:50..450 --phase 60s:450.
    #[arg(long = "phase", value_name = "SPEC")]
    pub phases: Vec<String>,
    /// Open loop: arrival process.
    #[arg(long, value_enum, default_value = "constant")]
    pub arrival: ArrivalArg,
    /// Seed of the Poisson arrivals.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Closed loop: this many clients, each sending its next request when answered.
    #[arg(long, short = 'c', value_name = "C")]
    pub concurrency: Option<u32>,
    /// Closed loop: stop after this many requests in all.
    #[arg(long, short = 'n', value_name = "N")]
    pub requests: Option<u64>,
    /// Most connections open at once; the keep-alive pool grows to it as needed.
    /// A request that cannot get one before its timeout is counted as not_sent
    /// [default: 10000]. With ws:// or --sse: how many connections to hold;
    /// a gRPC streaming call (--hold): how many calls, started at --rate.
    #[arg(long, value_name = "N")]
    pub connections: Option<u32>,
    /// Open a new TCP connection for every request (artillery's way) instead of keep-alive.
    #[arg(long)]
    pub new_connection: bool,
    /// Per-request timeout, counted from the intended send time [default: 10s,
    /// artillery's default].
    #[arg(
        long,
        value_name = "T",
        default_value = "10s",
        hide_default_value = true
    )]
    pub timeout: String,
    /// Width of one series interval.
    #[arg(long, value_name = "I", default_value = "1s")]
    pub interval: String,
    /// Generator event loops (threads) [default: one per available core, or per --cpus].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Pin the generator threads to these CPUs, e.g. 1 or 0,2-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Connect from these addresses in turn, e.g. 127.0.0.1,127.0.0.2: each
    /// has its own ephemeral port range, so past ~14,000 connections to one
    /// server the kernel's port search stops eating the generator's CPU.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub source_addrs: Vec<std::net::IpAddr>,
    /// Most headers one answer may carry before it counts as malformed
    /// (`read`) [default: 256; real answers behind proxies carry 60-80].
    #[arg(long, value_name = "N")]
    pub max_headers: Option<usize>,
    /// Print one iolab.attack/1 JSON object instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Open loop: busy-wait the last few ms before each send instead of
    /// sleeping, so an idle (virtual) CPU's wake-up delay does not make sends
    /// late; costs the generator's cores. Best with --cpus.
    #[arg(long)]
    pub spin: bool,
    // Its help says what io_uring carries, from the protocol table.
    #[arg(long, value_enum, default_value = "auto", help = engine_help())]
    pub engine: EngineArg,
    /// An objective to judge the run by, e.g. 'p99<200ms,success>=99.9%'
    /// (latency over every planned request: an unanswered one is late);
    /// exit 1 when it fails, the verdict in the result (`slo`).
    #[arg(long, value_name = "SLO")]
    pub slo: Option<String>,
    /// No progress line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Write an HdrHistogram interval log of latency (microseconds) to FILE.
    #[arg(long, value_name = "FILE")]
    pub hdr: Option<PathBuf>,
    /// Write one CSV row per request to FILE (intended_ms,sent_ms,latency_ms,status,error).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also write the iolab.attack/1 document to FILE (atomically: a run
    /// that fails leaves no file), e.g. a shard's result for `iolab merge`.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Which shard of the plan to send, and when.
    #[command(flatten)]
    pub sharding: super::shard::ShardArgs,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
    /// Replay recorded traffic (`--replay FILE --base URL`).
    #[command(flatten)]
    pub replay: replay::ReplayArgs,
    #[command(flatten)]
    pub held: HeldFlags,
    /// Replay at the recorded times this much faster: 2, 2x, 0.5x [default: 1x].
    #[arg(long, value_name = "X", requires = "replay", conflicts_with = "rate")]
    pub speed: Option<String>,
}

/// Run `iolab attack`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    if args.held.wanted(args.url.as_deref()) {
        return held::run(&args);
    }
    if let Some(flag) = args.held.stray() {
        return Err(CliError::usage(format!(
            "{flag} is for held connections: give a ws:// or wss:// URL, --sse with an http:// one, or --hold with a streaming gRPC --call"
        )));
    }
    let plan = plan(&args)?;
    iolab_loadgen::validate(&plan)?;
    let slo = checked_before_sending(&args)?;
    let page = args.live.bind()?;
    let live = std::io::stdout().is_terminal() && !args.quiet;
    let mut hooks = hooks(live)?;
    let page = match page {
        Some(listener) => {
            let feed = iolab_loadgen::LiveFeed::new();
            hooks.live = Some(feed.clone());
            let title = format!("iolab attack {}", plan.target);
            Some(super::live::serve(
                listener,
                iolab_live::AttackWatch::attack(title, feed),
            )?)
        }
        None => None,
    };
    let mut report = iolab_loadgen::attack(&plan, &hooks)?;
    if let Some(page) = page {
        page.finish();
    }
    if live {
        eprint!("\r\x1b[K");
    }
    report.result.slo = slo.map(|s| SloVerdict::of(&s, judge(&s, &report, 0.0)));
    // Printed first: a file that fails to write late (a full disk) still
    // leaves the results on stdout.
    let format = Format::json_or_text(args.json);
    let bytes = iolab_report::attack::render(&report.result, format)
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    write_files(&args, &report)?;
    if report.cancelled {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    match &report.result.slo {
        Some(v) if !v.met => {
            eprintln!("objective {} failed: {}", v.slo, v.verdict);
            Ok(ExitCode::from(1))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// What is checked before anything is sent: the objective parses, and the
/// files go where the run's results can (a full disk or a folder that is
/// not there is said before the load, not after).
fn checked_before_sending(args: &Args) -> Result<Option<Slo>, CliError> {
    let slo: Option<Slo> = args
        .slo
        .as_deref()
        .map(|s| {
            s.parse()
                .map_err(|e| CliError::usage(format!("--slo: {e}")))
        })
        .transpose()?;
    for (flag, path) in [
        ("--hdr", &args.hdr),
        ("--csv", &args.csv),
        ("--out", &args.out),
    ] {
        if let Some(path) = path {
            iolab_model::files::check_writable(path)
                .map_err(|e| CliError::usage(format!("{flag} {}: {e}", path.display())))?;
        }
    }
    Ok(slo)
}

/// The run's hooks: Ctrl-C stops sending and still prints what was measured
/// (exit 130), the way vegeta and wrk report a cut-short run; on a terminal
/// (`live`), a progress line on stderr.
fn hooks(live: bool) -> Result<Hooks, CliError> {
    let mut hooks = Hooks {
        cancel: Some(cancel_on_signals().map_err(|e| {
            CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}"))
        })?),
        ..Hooks::default()
    };
    if live {
        hooks.progress = Some(Arc::new(|p: &iolab_loadgen::Progress| {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r\x1b[K{}", iolab_report::attack::progress_line(p));
            let _ = e.flush();
        }));
    }
    Ok(hooks)
}

/// Write the files the flags ask for, in turn: `--hdr`, `--csv`, `--out`.
fn write_files(args: &Args, report: &AttackReport) -> Result<(), CliError> {
    let wrote = |flag: &str, path: &Path, r: std::io::Result<()>| {
        r.map_err(|e| {
            CliError::Failed(anyhow::anyhow!(
                "cannot write {flag} {}: {e}",
                path.display()
            ))
        })
    };
    if let Some(path) = &args.hdr {
        wrote("--hdr", path, report.write_hdr_log(path))?;
    }
    if let Some(path) = &args.csv {
        wrote("--csv", path, report.write_csv(path))?;
    }
    if let Some(path) = &args.out {
        let bytes = iolab_report::attack::render(&report.result, Format::Json)
            .map_err(|e| CliError::Failed(e.into()))?;
        wrote(
            "--out",
            path,
            iolab_model::files::write_atomic(path, &bytes),
        )?;
    }
    Ok(())
}
