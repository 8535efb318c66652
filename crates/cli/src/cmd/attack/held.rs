//! `iolab attack ws://...`, `iolab attack http://... --sse` and `iolab
//! attack grpc://... --call M --hold D` (a streaming method): hold
//! connections (`--connections`, `--hold`, `--open-rate`; `--rate` starts
//! gRPC calls) and, over WebSocket, send messages on them
//! (`--message-rate`, `--message`; a bidirectional call's `--data`). The
//! flags become a [`HeldPlan`](iolab_model::attack::HeldPlan) checked by
//! `iolab_loadgen::held::validate`; the run is `iolab_loadgen::held::attack`;
//! the result is the same `iolab.attack/1` document with its `connections`
//! and `messages` sections, rendered by `iolab_report::attack`.

use std::process::ExitCode;

use iolab_lab::interrupt::{cancel_on_signals, EXIT_INTERRUPTED};
use iolab_loadgen::Hooks;
use iolab_model::attack::HeldPlan;
use iolab_model::protocol::GrpcCall;
use iolab_model::request::parse_header;
use iolab_report::Format;

use super::Args;
use crate::cmd::flags::held::is_grpc;
use crate::CliError;

/// What a held run does instead of the flags that shape a request run
/// (`--phase`, `--duration`, `--concurrency`, `--requests`,
/// `--new-connection`), in the words of its kind.
struct Instead {
    phase: &'static str,
    duration: &'static str,
    count: &'static str,
    connection: &'static str,
}

/// The request-run flags given, each with what to do instead.
fn run_shape(args: &Args, i: &Instead) -> [(bool, &'static str, &'static str); 5] {
    [
        (!args.phases.is_empty(), "--phase", i.phase),
        (args.duration.is_some(), "--duration", i.duration),
        (args.concurrency.is_some(), "--concurrency", i.count),
        (args.requests.is_some(), "--requests", i.count),
        (args.new_connection, "--new-connection", i.connection),
    ]
}

/// Flags a gRPC streaming call has no use for, with what to do instead.
fn refuse_for_calls(args: &Args) -> Result<(), CliError> {
    let (r, h) = (&args.request, &args.held);
    let own = [
        (
            h.open_rate.is_some(),
            "--open-rate",
            "calls start at --rate R",
        ),
        (
            h.message.is_some(),
            "--message",
            "a call's request message is --data JSON",
        ),
        (h.sse, "--sse", "drop it"),
        (
            r.streams != 1,
            "--streams",
            "each call has its own connection",
        ),
    ];
    let shape = run_shape(
        args,
        &Instead {
            phase: "start calls at --rate R",
            duration: "start --connections N calls",
            count: "hold --connections N calls",
            connection: "each call has its own connection",
        },
    );
    refuse(
        own.into_iter().chain(shape),
        args,
        "a gRPC streaming call (--hold)",
    )
}

/// Flags of request runs a held run has no use for, with what to do instead.
fn refuse_request_flags(args: &Args) -> Result<(), CliError> {
    let r = &args.request;
    let rate = (
        args.rate.is_some(),
        "--rate",
        "open connections at --open-rate R",
    );
    let shape = run_shape(
        args,
        &Instead {
            phase: "open connections at --open-rate R",
            duration: "hold each connection for --hold D",
            count: "hold --connections N",
            connection: "each held connection is its own",
        },
    );
    let own = [
        (r.targets.is_some(), "--targets", "give one URL"),
        (
            r.body.is_some() || r.body_file.is_some(),
            "--body",
            "use --message TEXT|@FILE",
        ),
        (
            r.http2 || r.call.is_some(),
            "--http2/--call",
            "held connections are HTTP/1.1 upgrades",
        ),
        (
            r.method != "GET",
            "--method",
            "a held connection opens with GET",
        ),
    ];
    let given = std::iter::once(rate).chain(shape).chain(own);
    refuse(given, args, "held connections (ws:// or --sse)")
}

/// The first flag given of `given` and of the document flags every held
/// run refuses (its document has no request rows), as one line saying
/// what to do instead.
fn refuse<'a>(
    given: impl IntoIterator<Item = (bool, &'a str, &'a str)>,
    args: &Args,
    what: &str,
) -> Result<(), CliError> {
    let document = [
        (
            args.csv.is_some(),
            "--csv",
            "use --json (a held run has no request rows)",
        ),
        (
            args.hdr.is_some(),
            "--hdr",
            "use --json (messages.histogram)",
        ),
        (
            args.slo.is_some(),
            "--slo",
            "read messages.latency_ms from --json",
        ),
    ];
    match given.into_iter().chain(document).find(|(on, _, _)| *on) {
        Some((_, flag, instead)) => Err(CliError::usage(format!(
            "{flag} does not apply to {what}: {instead}"
        ))),
        None => Ok(()),
    }
}

/// The plan of a held run from the flags.
pub fn plan(args: &Args) -> Result<HeldPlan, CliError> {
    let url = args.url.as_deref().ok_or_else(|| {
        CliError::usage("give the URL to hold connections to, e.g. ws://127.0.0.1:8080/ws")
    })?;
    let call = match is_grpc(url) {
        true => {
            refuse_for_calls(args)?;
            Some((grpc_call(args)?, args.rate))
        }
        false => {
            refuse_request_flags(args)?;
            None
        }
    };
    let timeout = iolab_model::parse_duration(&args.timeout)
        .map_err(|e| CliError::usage(format!("--timeout: {e}")))?;
    let mut plan = (args.held).plan(url, args.connections, timeout, args.request.insecure, call)?;
    plan.source_addrs = args.source_addrs.clone();
    plan.shard = args.sharding.shard;
    if plan.grpc.is_some() {
        plan.metadata = (args.request.headers.iter())
            .map(|h| parse_header(h).map_err(|e| CliError::usage(format!("-H: {e}"))))
            .collect::<Result<_, _>>()?;
    }
    iolab_loadgen::held::validate(&plan)?;
    iolab_loadgen::held::check_files(&plan)?;
    engine(args, &plan)?;
    Ok(plan)
}

/// Held connections run on the engine their protocol's row carries them
/// on (epoll): `--engine io_uring` is refused by the row, not ignored.
fn engine(args: &Args, plan: &HeldPlan) -> Result<(), CliError> {
    let row = plan.kind.protocol().def();
    let tls = plan.target.starts_with(&format!("{}://", row.schemes.1));
    match row.refusal(args.engine.engine(), tls) {
        Some(refused) => Err(CliError::usage(refused)),
        None => Ok(()),
    }
}

/// The streaming method a `grpc://` URL with `--hold` calls.
fn grpc_call(args: &Args) -> Result<GrpcCall, CliError> {
    let r = &args.request;
    let method = r.call.clone().ok_or_else(|| {
        CliError::usage("a gRPC stream needs --call package.Service/Method (a streaming method)")
    })?;
    Ok(GrpcCall {
        method,
        data: r.data.clone().unwrap_or_else(|| "{}".into()),
        protos: r.protos.clone(),
    })
}

/// Wait for `--start-at` (Unix ms), so shards open their connections
/// together; a Ctrl-C ends the wait (the run then stops at once).
fn wait_until(at_ms: u64, hooks: &Hooks) {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let cancelled = (hooks.cancel.as_ref()).is_some_and(|c| c.load(Ordering::Relaxed));
        if now >= at_ms || cancelled {
            return;
        }
        std::thread::sleep(Duration::from_millis((at_ms - now).min(50)));
    }
}

/// Run a held-connection attack and print its document.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let plan = plan(args)?;
    let start_at = args.sharding.start_at_unix_ms()?;
    if let Some(path) = &args.out {
        iolab_model::files::check_writable(path)
            .map_err(|e| CliError::usage(format!("--out {}: {e}", path.display())))?;
    }
    let hooks = Hooks {
        // Ctrl-C closes the connections and still prints what was measured.
        cancel: Some(cancel_on_signals().map_err(|e| {
            CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}"))
        })?),
        ..Hooks::default()
    };
    if let Some(at) = start_at {
        wait_until(at, &hooks);
    }
    let mut report = iolab_loadgen::held::attack(&plan, &hooks)?;
    // This process is the generator: its peak memory is the held
    // connections' (and the shard record says which start it was given).
    report.result.generator.peak_rss_kib = iolab_loadgen::machine::peak_rss_kib();
    if let Some(rec) = report.result.shard.as_mut() {
        rec.start_at_unix_ms = start_at;
    }
    let format = Format::json_or_text(args.json);
    let bytes = iolab_report::attack::render(&report.result, format)
        .map_err(|e| CliError::Failed(e.into()))?;
    super::super::report::print(&bytes);
    if let Some(path) = &args.out {
        let json = iolab_report::attack::render(&report.result, Format::Json)
            .map_err(|e| CliError::Failed(e.into()))?;
        iolab_model::files::write_atomic(path, &json).map_err(|e| {
            CliError::Failed(anyhow::anyhow!(
                "cannot write --out {}: {e}",
                path.display()
            ))
        })?;
    }
    Ok(match report.cancelled {
        true => ExitCode::from(EXIT_INTERRUPTED),
        false => ExitCode::SUCCESS,
    })
}
