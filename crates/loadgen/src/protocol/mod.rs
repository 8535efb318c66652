//! The request/answer protocols behind one trait the loops drive
//! ([`Exchange`]: send the run's next request on a worker's connection,
//! opening it if needed, and read its answer; then keep or drop the
//! connection): HTTP/1.1 ([`http1`]) and HTTP/2, gRPC unary calls
//! included ([`http2`]). A thread's connections ([`Workers`]) hand each
//! worker its [`Slot`]. Which protocol a run speaks, and on which engine,
//! is its row of `iolab_model::protocol::PROTOCOLS`; held connections
//! (WebSocket, SSE, gRPC streams) are [`crate::held`].

mod http1;
mod http2;

use std::cell::RefCell;
use std::net::SocketAddr;

use iolab_model::attack::AttackPlan;

use iolab_model::protocol::{ProtocolKind, ProtocolSummary};

use crate::endpoint::Endpoint;
use crate::http::Answer;
use crate::recorder::{ErrorClass, Recorder};
use crate::run_ctx::RunCtx;
use crate::tls::Tls;

/// Before the run, what its protocol sends beside the rendered HTTP/1.1
/// requests: HTTP/2's heads (a gRPC call's made ready, by its `.proto`
/// files or the server's reflection), once the server is seen to speak
/// HTTP/2. `None` for HTTP/1.1. The error is one line.
pub fn prepare(
    plan: &AttackPlan,
    target: &Endpoint,
    addr: SocketAddr,
    tls: Option<&Tls>,
) -> Result<Option<crate::h2::Requests>, crate::error::AttackError> {
    match plan.request.protocol.kind() {
        ProtocolKind::Http2 | ProtocolKind::GrpcUnary => {
            crate::h2::preflight(addr, tls, target)?;
            Ok(Some(
                match crate::grpc::requests(plan, target, addr, tls)? {
                    Some(call) => call,
                    None => crate::h2::Requests::of(plan)?,
                },
            ))
        }
        // Held protocols are prepared by `crate::held`.
        _ => Ok(None),
    }
}

/// What differs between request/answer protocols, for one worker's
/// connection. Crate-private: every implementation is here.
pub(crate) trait Exchange {
    /// The index of the next request in [`RunCtx::requests`] when it is
    /// taken before sending (so a replayed mix knows its endpoint), else
    /// `None` (the protocol takes its request in turn itself).
    fn next_index(&self, ctx: &RunCtx) -> Option<usize>;

    /// Send request `index` (or the protocol's next) and read its whole
    /// answer; `rec` counts a retry.
    async fn exchange(
        &mut self,
        ctx: &RunCtx,
        rec: &RefCell<Recorder>,
        index: Option<usize>,
    ) -> Result<Answer, ErrorClass>;

    /// The request has ended (`reusable`: its answer left the connection
    /// fit for another): keep the connection or drop it. True when a TLS
    /// connection closed without its close_notify.
    fn after(&mut self, ctx: &RunCtx, reusable: bool) -> bool;
}

/// A worker's connection: its own HTTP/1.1 one (kept between requests),
/// or its share of an HTTP/2 connection.
pub enum Slot {
    Http1(http1::Worker),
    Http2(http2::Worker),
}

impl Exchange for Slot {
    fn next_index(&self, ctx: &RunCtx) -> Option<usize> {
        match self {
            Slot::Http1(w) => w.next_index(ctx),
            Slot::Http2(w) => w.next_index(ctx),
        }
    }

    async fn exchange(
        &mut self,
        ctx: &RunCtx,
        rec: &RefCell<Recorder>,
        index: Option<usize>,
    ) -> Result<Answer, ErrorClass> {
        match self {
            Slot::Http1(w) => w.exchange(ctx, rec, index).await,
            Slot::Http2(w) => w.exchange(ctx, rec, index).await,
        }
    }

    fn after(&mut self, ctx: &RunCtx, reusable: bool) -> bool {
        match self {
            Slot::Http1(w) => w.after(ctx, reusable),
            Slot::Http2(w) => w.after(ctx, reusable),
        }
    }
}

/// A generator thread's connections, by protocol: HTTP/1.1 workers each
/// open their own; HTTP/2 workers share a pool, `--streams` to a
/// connection.
pub enum Workers {
    Http1,
    Http2(crate::h2::conn::Pool),
}

impl Workers {
    /// The run's protocol (its row, [`RunCtx::kind`]), for one thread.
    pub fn of(ctx: &RunCtx) -> Workers {
        let pool = crate::h2::conn::Pool::of(ctx.h2.as_ref(), ctx.dial.tls.is_some());
        match (ctx.kind, pool) {
            (ProtocolKind::Http2 | ProtocolKind::GrpcUnary, Some(pool)) => Workers::Http2(pool),
            // Held protocols run loops of their own (`crate::held`).
            _ => Workers::Http1,
        }
    }

    /// A new worker's slot.
    pub fn slot(&self) -> Slot {
        match self {
            Workers::Http1 => Slot::Http1(http1::Worker::default()),
            Workers::Http2(pool) => Slot::Http2(http2::Worker::new(pool.assign())),
        }
    }

    /// What the thread's connections saw, beside its counts (HTTP/2 only).
    pub fn summary(&self) -> Option<ProtocolSummary> {
        match self {
            Workers::Http1 => None,
            Workers::Http2(pool) => Some(pool.summary()),
        }
    }
}
