//! [`Backend`]: one backend as the lab uses it — its address check, its
//! client pair (blocking and non-blocking), its own counter of the work it
//! did and the service `iolab run` starts for it (the registry from
//! [`BackendKind`] to its module is `crate::registry`). Its words (step syntax,
//! flag, environment variable, pool knob, counter field) are its
//! [`BackendKind::def`] in the model.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use iolab_model::steps::{BackendKind, IoCall};

use crate::{AddressError, BackendError, CountError, Service};

/// What a non-blocking call returns: the value it fetched (an `mc` get's
/// bytes), or nothing.
pub type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<Bytes>, BackendError>> + Send + 'a>>;

/// A backend's connection pool: how many connections, and how long a call
/// waits for one before it fails as `pool_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// Connections (the knob its [`BackendKind::def`] names as `pool_knob`).
    pub size: u32,
    /// Longest wait for a connection (HikariCP's 30 s by default).
    pub wait: Duration,
}

/// One backend: the module behind a [`BackendKind`].
pub trait Backend: Sync {
    /// Which kind it serves.
    fn kind(&self) -> BackendKind;

    /// Check an address: one line naming the flag and the fix.
    fn check_address(&self, address: &str) -> Result<(), AddressError>;

    /// The address as kept (a URL's trailing `/` dropped, say).
    fn normalise(&self, address: &str) -> String {
        address.to_string()
    }

    /// Both clients for the backend at `address` (connections are made
    /// lazily, so a target starts while its backend is down).
    fn clients(&self, address: &str, pool: Pool) -> Result<Box<dyn Clients>, BackendError>;

    /// Its own counter of the work it did, read at `address` (the number
    /// `iolab verify` and `runs.json` compare with the target's answers).
    fn count(&self, address: &str) -> Result<u64, CountError>;

    /// What `iolab run` starts when no running one is given (`None`:
    /// nothing to start, as for the embedded timer).
    fn service(&self) -> Option<&'static dyn Service>;
}

/// A backend's client pair: a blocking client for thread models and a
/// non-blocking one for event loops. Calls are the kind's own (the parser
/// and [`BackendKind::timed_call`] build a call only with the argument its
/// kind takes).
pub trait Clients: Send + Sync + std::fmt::Debug {
    /// Make the call on the calling thread, blocking it until done.
    fn blocking(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError>;
    /// Make the call without holding a thread.
    fn nonblocking<'a>(&'a self, call: &'a IoCall) -> CallFuture<'a>;
}

/// The duration of a timed call (its kind takes one: see [`Clients`]).
pub(crate) fn micros(call: &IoCall) -> u64 {
    call.micros()
        .expect("a timed backend's calls carry a duration")
}

/// The key of a keyed call (its kind takes one: see [`Clients`]).
pub(crate) fn key(call: &IoCall) -> &str {
    call.key().expect("a keyed backend's calls carry a key")
}
