//! Backends for io steps: each [`IoCall`] goes to one, through a blocking
//! client (thread models) or a non-blocking one (event-loop models).
//!
//! This is the seam between the models and the outside world: a model decides
//! *where* a call runs (its own thread, an offload pool, a future); this crate
//! decides *what* the call does. Each backend is one module behind the
//! [`Backend`] trait, registered once in [`backend`]: its address check, its
//! client pair, its own counter and the service `iolab run` starts for it —
//! [`sleep`](crate::sleep) (embedded timer), [`http`] (the delay service and
//! its clients), [`pg`] (PostgreSQL), [`mc`] (memcached). Around them:
//! [`Backends`] (every client a target uses, with its call counters by
//! kind), [`counts`] (what the backends say they did), [`service`] (what
//! starting one takes), `pool` (the connection pools). Connections are made
//! lazily and broken ones are dropped, so a target starts while a backend is
//! down and recovers by itself once it is back.

mod backend;
mod config;
pub mod counts;
mod error;
pub mod http;
pub mod mc;
pub mod pg;
mod pool;
mod registry;
pub mod service;
mod sleep;

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use iolab_model::steps::{BackendKind, IoCall};

pub use backend::{Backend, CallFuture, Clients, Pool};
pub use config::{check_address, AddressError, Addresses, BackendConfig, ConfigError, POOL_WAIT};
pub use counts::{BackendCounts, CountError};
pub use error::{config_flag, BackendError, ERROR_CLASSES};
pub use http::delay;
pub use registry::backend;
pub use service::{Service, StartError, Started};

/// Every backend a target uses, shared by all its threads (`Arc<Backends>`).
///
/// The blocking and the non-blocking client of a backend each have their own
/// pool of the configured size (a target uses one or the other).
#[derive(Debug)]
pub struct Backends {
    config: BackendConfig,
    /// Each kind's clients, in [`BackendKind::ALL`] order (`None`: no address).
    clients: Vec<Option<Result<Box<dyn Clients>, BackendError>>>,
    /// Calls made, by kind.
    calls: Vec<AtomicU64>,
    /// Failed calls by kind and class (in [`ERROR_CLASSES`] order).
    errors: Vec<[AtomicU64; ERROR_CLASSES.len()]>,
}

impl Backends {
    /// Build the clients; real connections are made lazily on first use, so a
    /// target starts even while a backend is down.
    pub fn new(config: BackendConfig) -> Self {
        let clients = BackendKind::ALL
            .into_iter()
            .map(|kind| {
                let address = if kind.is_sleep() {
                    Some("")
                } else {
                    config.address(kind)
                };
                address.map(|a| backend(kind).clients(a, config.pool(kind)))
            })
            .collect();
        Backends {
            clients,
            calls: BackendKind::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
            errors: BackendKind::ALL
                .iter()
                .map(|_| Default::default())
                .collect(),
            config,
        }
    }

    /// Backends with nothing configured but the embedded timer.
    pub fn sleep_only() -> Self {
        Self::new(BackendConfig::default())
    }

    /// The configuration in use.
    pub fn config(&self) -> &BackendConfig {
        &self.config
    }

    /// Calls made so far, by kind (for `/metrics`).
    pub fn calls(&self) -> Vec<(BackendKind, u64)> {
        BackendKind::ALL
            .into_iter()
            .map(|k| (k, self.calls[index(k)].load(Ordering::Relaxed)))
            .collect()
    }

    /// Failed calls so far, by kind, then by class in [`ERROR_CLASSES`] order
    /// (for `/metrics`).
    pub fn errors(&self) -> Vec<(BackendKind, [u64; ERROR_CLASSES.len()])> {
        BackendKind::ALL
            .into_iter()
            .map(|k| {
                let row = &self.errors[index(k)];
                (k, std::array::from_fn(|i| row[i].load(Ordering::Relaxed)))
            })
            .collect()
    }

    fn record<T>(
        &self,
        kind: BackendKind,
        result: Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.calls[index(kind)].fetch_add(1, Ordering::Relaxed);
        if let Err(e) = &result {
            self.errors[index(kind)][e.class_index()].fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    fn clients(&self, kind: BackendKind) -> Result<&dyn Clients, BackendError> {
        match &self.clients[index(kind)] {
            Some(Ok(c)) => Ok(c.as_ref()),
            Some(Err(e)) => Err(e.clone()),
            None => Err(BackendError::NotConfigured(kind)),
        }
    }

    /// Make the call on the current thread, blocking it until done.
    pub fn call_blocking(&self, call: &IoCall) -> Result<(), BackendError> {
        self.fetch_blocking(call).map(drop)
    }

    /// Make the call without blocking a thread.
    pub async fn call_async(&self, call: &IoCall) -> Result<(), BackendError> {
        self.fetch_async(call).await.map(drop)
    }

    /// [`Backends::call_blocking`], keeping what the call fetched: the
    /// value of an `mc` get (`Some`), nothing for the other kinds (`None`).
    /// The value is the buffer the client read into: handing it on costs no copy.
    pub fn fetch_blocking(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        let result = self.clients(call.kind()).and_then(|c| c.blocking(call));
        self.record(call.kind(), result)
    }

    /// [`Backends::call_async`], keeping what the call fetched (see
    /// [`Backends::fetch_blocking`]).
    pub async fn fetch_async(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        // Each client's future is boxed (CallFuture): this one stays small,
        // and it is held by every waiting request (unboxed it would carry the
        // largest client's, 7 KiB).
        let result = match self.clients(call.kind()) {
            Ok(c) => c.nonblocking(call).await,
            Err(e) => Err(e),
        };
        self.record(call.kind(), result)
    }
}

/// The position of `kind` in [`BackendKind::ALL`] (the counters' order;
/// the model's tests hold `ALL` in declaration order).
fn index(kind: BackendKind) -> usize {
    kind as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pg(micros: u64) -> IoCall {
        BackendKind::Pg.timed_call(micros).unwrap()
    }

    #[test]
    fn unconfigured_backend_is_a_400_that_says_how_to_fix_it() {
        let b = Backends::sleep_only();
        let e = b.call_blocking(&pg(1)).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(e.to_string().contains("--pg"));
        assert_eq!(b.calls()[2], (BackendKind::Pg, 1));
        assert_eq!(b.errors()[2].1, [1, 0, 0, 0]);
    }

    #[test]
    fn blocking_sleep_takes_its_time() {
        let b = Backends::sleep_only();
        let t = std::time::Instant::now();
        let sleep = BackendKind::Sleep.timed_call(20_000).unwrap();
        b.call_blocking(&sleep).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(20));
    }

    #[tokio::test]
    async fn a_backend_that_is_down_is_a_503_and_the_target_keeps_going() {
        // A port nothing listens on: bind, note it, close.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addresses = Addresses::default()
            .with(BackendKind::Mc, format!("127.0.0.1:{port}"))
            .with(
                BackendKind::Pg,
                format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            )
            .with(BackendKind::Http, format!("http://127.0.0.1:{port}"));
        let b = Backends::new(BackendConfig {
            addresses,
            ..BackendConfig::default()
        });
        let calls = [
            BackendKind::Mc.keyed_call("k").unwrap(),
            pg(1000),
            BackendKind::Http.timed_call(1000).unwrap(),
        ];
        for call in &calls {
            let e = b.call_async(call).await.unwrap_err();
            assert_eq!((e.status(), e.class()), (503, "backend_unavailable"), "{e}");
            let e = b.call_blocking(call).unwrap_err();
            assert_eq!((e.status(), e.class()), (503, "backend_unavailable"), "{e}");
        }
    }
}
