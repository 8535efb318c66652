//! Where and how a run's connections open: the server's address, the
//! source addresses taken in turn, TLS, and the bounds on an answer's head.
//! A leaf of the run context ([`crate::run_ctx::RunCtx::dial`]) that every
//! protocol's connections read, so a protocol module needs no run context.

use std::net::SocketAddr;

use crate::response::Limits;
use crate::source::Sources;
use crate::tls::Tls;

/// What a connection of the run is opened with.
pub struct Dial {
    pub addr: SocketAddr,
    /// `https://` (or `grpcs://`): the TLS client.
    pub tls: Option<Tls>,
    /// Where new connections come from (`--source-addrs`).
    pub sources: Sources,
    /// Bounds on an answer's head (`--max-headers`).
    pub limits: Limits,
}
