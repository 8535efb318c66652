//! Open- and closed-loop HTTP load generator with honest accounting (`iolab attack`).
//!
//! One single-threaded tokio runtime per generator thread, each with its own
//! connections, histograms and counters, merged once at the end (the wrk / oha
//! shape). Open-loop sends follow a computed schedule and latency is measured
//! from the *intended* send time, so a slow target cannot hide behind a slow
//! generator (no coordinated omission). Request failures are data, counted by
//! class; only an unusable plan or setup is an [`AttackError`].
//!
//! Requests are rendered once before the run ([`wire`]: method, headers,
//! body; several in turn from a list in vegeta's format, [`parse_request_list`]);
//! `https://` runs over rustls ([`tls`]); `--http2` over the `h2` crate
//! ([`h2`]); gRPC unary calls (`grpc://`, `--call`) are HTTP/2 requests
//! made ready by [`grpc`]; the loops drive each through one trait
//! ([`protocol`]'s `Exchange`). Held connections (WebSocket, SSE: opened on a
//! schedule, held, their messages counted by sequence number) are
//! [`held`], with an entry point of their own ([`held::attack`]).
//!
//! Entry points: [`validate`] and [`attack`]; files (`--hdr`, `--csv`) via
//! [`AttackReport`]. Rendering the result is `iolab-report`'s job.

mod backlog;
mod clock;
mod closed_loop;
mod dial;
mod endpoint;
mod endpoints;
mod engine;
mod error;
mod gen_thread;
mod generator;
mod grpc;
mod h2;
pub mod held;
mod hooks;
mod http;
mod live;
pub mod machine;
mod merge;
mod open_loop;
mod output;
mod protocol;
mod recorder;
pub mod replay;
mod report;
mod request;
mod request_list;
pub mod response;
mod retry;
mod run_ctx;
pub mod shard;
mod source;
mod thread_share;
mod tls;
mod uring;
mod validate;
mod wire;

use iolab_model::attack::AttackPlan;

pub use endpoint::{Endpoint, ResolveError, UrlError, UrlFault};
pub use error::{AttackError, ThreadError};
pub use hdrhistogram::Histogram;
pub use hooks::{Hooks, Progress, ProgressFn};
pub use iolab_model::schedule::Schedule;
pub use live::{LiveFeed, LiveSnapshot};
pub use output::write_hdr_log;
pub use recorder::{ErrorClass, RequestRow};
pub use report::{AttackReport, IntervalHistogram};
pub use request_list::parse_request_list;
pub use shard::thread_schedule;
pub use source::SourceError;
pub use tls::TlsError;
pub use uring::UringError;
pub use validate::validate;

/// The HTTP/2 answer rules and the watch on a server's SETTINGS, for
/// `verify --http2`, so it reads an HTTP/2 answer as `attack` does.
pub mod http2 {
    pub use crate::h2::answer::{final_head, Failed};
    pub use crate::h2::watch::{Seen, SettingsFault, Watched};
    /// The body type of `h2`'s requests, as the generator sends them.
    pub use bytes::Bytes;
}

/// Whether the io_uring engine can run on this kernel: `Err` says why not
/// (no io_uring, disabled by `kernel.io_uring_disabled`, a missing operation).
pub fn io_uring_available() -> Result<(), uring::UringError> {
    uring::probe()
}

/// Run the plan to completion (or cancellation) and return the merged result.
///
/// Blocking: it starts its own threads and runtimes, so it may be called from
/// any plain thread, including one already inside another tokio runtime's
/// `spawn_blocking`.
pub fn attack(plan: &AttackPlan, hooks: &Hooks) -> Result<AttackReport, AttackError> {
    validate(plan)?;
    let target = Endpoint::parse(&plan.target)?;
    let addr = target.resolve()?;
    source::check(&plan.source_addrs, addr)?;
    // Every connection is a file: lift the soft limit to what the plan may
    // open (validate checked the hard limit allows a closed loop's clients).
    let fds = u64::from(plan.connections.max()) + iolab_model::limits::FD_RESERVE;
    machine::raise_nofile(fds);
    let requests = wire::render_all(&target, &plan.request.list)?;
    let http2 = plan.request.protocol.is_http2();
    let tls = match target.tls {
        true => {
            let tls = tls::Tls::new(&target.host, plan.request.insecure, http2)?;
            tls::preflight(&tls, addr, &target.host)?;
            Some(tls)
        }
        false => None,
    };
    let h2 = protocol::prepare(plan, &target, addr, tls.as_ref())?;
    let outputs = generator::run(plan, requests, h2, tls, addr, hooks)?;
    let report = merge::report(plan, outputs);
    debug_assert_eq!(report.result.check_accounting(), Ok(()));
    if let Some(feed) = &hooks.live {
        feed.finish(&report);
    }
    Ok(report)
}
