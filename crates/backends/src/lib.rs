//! Backends for io steps: each [`IoCall`] goes to one, through a blocking
//! client (thread models) or a non-blocking one (event-loop models).
//!
//! This is the seam between the models and the outside world: a model decides
//! *where* a call runs (its own thread, an offload pool, a future); this crate
//! decides *what* the call does. `sleep` is embedded and needs nothing; `http`,
//! `pg` and `mc` need an address in [`BackendConfig`]. Connections are made
//! lazily and broken ones are dropped, so a target starts while a backend is
//! down and recovers by itself once it is back.
//!
//! Modules: [`sleep`](crate::sleep) (embedded timer), [`http`] (delay-service
//! clients), [`pg`] (PostgreSQL), [`mc`] (memcached), [`delay`] (the delay
//! service itself), [`counts`] (what the backends say they did), `pool`
//! (the two connection pools).

mod config;
pub mod counts;
pub mod delay;
mod error;
pub mod http;
pub mod mc;
pub mod pg;
mod pool;
mod sleep;

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use iolab_model::steps::{BackendKind, IoCall};

pub use config::{
    check_address, check_http_url, check_mc_addr, check_pg_url, Addresses, BackendConfig,
};
pub use counts::BackendCounts;
pub use error::{config_flag, BackendError, ERROR_CLASSES};

/// Every backend a target uses, shared by all its threads (`Arc<Backends>`).
///
/// The blocking and the non-blocking client of a backend each have their own
/// pool of the configured size (a target uses one or the other).
#[derive(Debug)]
pub struct Backends {
    config: BackendConfig,
    http: Option<http::Http>,
    pg: Option<Result<pg::Pg, BackendError>>,
    mc: Option<mc::Mc>,
    calls: [AtomicU64; 4],
    /// Failed calls by kind and class (in [`ERROR_CLASSES`] order).
    errors: [[AtomicU64; 4]; 4],
}

impl Backends {
    /// Build the clients; real connections are made lazily on first use, so a
    /// target starts even while a backend is down.
    pub fn new(config: BackendConfig) -> Self {
        Backends {
            http: config
                .address(BackendKind::Http)
                .map(|url| http::Http::new(url.to_string())),
            pg: config
                .address(BackendKind::Pg)
                .map(|url| pg::Pg::new(url, config.pg_pool, config.pg_wait)),
            mc: config
                .address(BackendKind::Mc)
                .map(|addr| mc::Mc::new(addr.to_string(), config.mc_pool, config.mc_wait)),
            config,
            calls: Default::default(),
            errors: Default::default(),
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
    pub fn calls(&self) -> [(BackendKind, u64); 4] {
        BackendKind::ALL.map(|k| (k, self.calls[k as usize].load(Ordering::Relaxed)))
    }

    /// Failed calls so far, by kind, then by class in [`ERROR_CLASSES`] order
    /// (for `/metrics`).
    pub fn errors(&self) -> [(BackendKind, [u64; 4]); 4] {
        BackendKind::ALL.map(|k| {
            let row = &self.errors[k as usize];
            (k, std::array::from_fn(|i| row[i].load(Ordering::Relaxed)))
        })
    }

    fn record<T>(
        &self,
        kind: BackendKind,
        result: Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.calls[kind as usize].fetch_add(1, Ordering::Relaxed);
        if let Err(e) = &result {
            self.errors[kind as usize][e.class_index()].fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    fn pg(&self) -> Result<&pg::Pg, BackendError> {
        match &self.pg {
            Some(Ok(pg)) => Ok(pg),
            Some(Err(e)) => Err(e.clone()),
            None => Err(BackendError::NotConfigured(BackendKind::Pg)),
        }
    }

    fn http(&self) -> Result<&http::Http, BackendError> {
        self.http
            .as_ref()
            .ok_or(BackendError::NotConfigured(BackendKind::Http))
    }

    fn mc(&self) -> Result<&mc::Mc, BackendError> {
        self.mc
            .as_ref()
            .ok_or(BackendError::NotConfigured(BackendKind::Mc))
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
        let result = match call {
            IoCall::Sleep { micros } => {
                sleep::blocking(*micros);
                Ok(None)
            }
            IoCall::Http { micros } => self
                .http()
                .and_then(|h| h.delay_blocking(*micros))
                .map(|()| None),
            IoCall::Pg { micros } => self
                .pg()
                .and_then(|p| p.sleep_blocking(*micros))
                .map(|()| None),
            IoCall::Mc { key } => self
                .mc()
                .and_then(|m| m.get_blocking(key))
                .map(|v| Some(Bytes::from(v))),
        };
        self.record(call.kind(), result)
    }

    /// [`Backends::call_async`], keeping what the call fetched (see
    /// [`Backends::fetch_blocking`]).
    pub async fn fetch_async(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        let result = match call {
            IoCall::Sleep { micros } => {
                sleep::nonblocking(*micros).await;
                Ok(None)
            }
            // The clients' futures are boxed so that this one stays the size
            // of a sleep: it is held by every waiting request (a sleep's
            // future would otherwise carry the largest client's, 7 KiB).
            IoCall::Http { micros } => match self.http() {
                Ok(h) => Box::pin(h.delay_async(*micros)).await.map(|()| None),
                Err(e) => Err(e),
            },
            IoCall::Pg { micros } => match self.pg() {
                Ok(p) => Box::pin(p.sleep_async(*micros)).await.map(|()| None),
                Err(e) => Err(e),
            },
            IoCall::Mc { key } => match self.mc() {
                Ok(m) => Box::pin(m.get_async(key))
                    .await
                    .map(|v| Some(Bytes::from(v))),
                Err(e) => Err(e),
            },
        };
        self.record(call.kind(), result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn unconfigured_backend_is_a_400_that_says_how_to_fix_it() {
        let b = Backends::sleep_only();
        let e = b.call_blocking(&IoCall::Pg { micros: 1 }).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(e.to_string().contains("--pg"));
        assert_eq!(b.calls()[2], (BackendKind::Pg, 1));
        assert_eq!(b.errors()[2].1, [1, 0, 0, 0]);
    }

    #[test]
    fn blocking_sleep_takes_its_time() {
        let b = Backends::sleep_only();
        let t = std::time::Instant::now();
        b.call_blocking(&IoCall::Sleep { micros: 20_000 }).unwrap();
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
            IoCall::Mc { key: "k".into() },
            IoCall::Pg { micros: 1000 },
            IoCall::Http { micros: 1000 },
        ];
        for call in &calls {
            let e = b.call_async(call).await.unwrap_err();
            assert_eq!((e.status(), e.class()), (503, "backend_unavailable"), "{e}");
            let e = b.call_blocking(call).unwrap_err();
            assert_eq!((e.status(), e.class()), (503, "backend_unavailable"), "{e}");
        }
    }
}
