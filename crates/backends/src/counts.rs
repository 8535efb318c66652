//! [`BackendCounts`]: the work each backend says it did, read from the
//! backends themselves (each [`Backend::count`](crate::Backend::count):
//! pg_stat_statements, memcached `stats`, the delay service's `/metrics`),
//! so `iolab verify` can check a target really made the calls it claims, in
//! the spirit of TechEmpower's checks. [`CountError`]: why a counter could
//! not be read, one variant per reader's fault.

use std::io;

use crate::registry::backend;
use crate::{BackendConfig, BackendError};

pub use iolab_model::runs::BackendCounts;

/// Why a backend's own counter could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    /// The embedded timer has nothing to read.
    #[error("the embedded timer keeps no counter")]
    NoCounter,
    /// The PostgreSQL URL does not parse.
    #[error("{0}")]
    PgUrl(BackendError),
    /// PostgreSQL cannot be reached.
    #[error("cannot connect to PostgreSQL at {url}: {why}")]
    PgConnect {
        /// The URL.
        url: String,
        /// Why.
        why: tokio_postgres::Error,
    },
    /// `pg_stat_statements` is not there (or not readable).
    #[error("cannot read pg_stat_statements ({0}): start PostgreSQL with `scripts/services up`, which enables it")]
    PgStatStatements(tokio_postgres::Error),
    /// The runtime the query ran on stopped.
    #[error("PostgreSQL IO thread gone")]
    PgThreadGone,
    /// memcached's `stats` failed.
    #[error("cannot read memcached stats at {addr}: {why}")]
    McStats {
        /// memcached's address.
        addr: String,
        /// Why.
        why: io::Error,
    },
    /// memcached answered `stats` without `get_hits`.
    #[error("memcached at {0} reported no get_hits")]
    McNoHits(String),
    /// The delay service's `/metrics` could not be fetched.
    #[error("cannot read {url}: {why}")]
    DelayGet {
        /// The `/metrics` URL.
        url: String,
        /// Why.
        why: Box<ureq::Error>,
    },
    /// Its body could not be read.
    #[error("cannot read {url}: {why}")]
    DelayBody {
        /// The `/metrics` URL.
        url: String,
        /// Why.
        why: io::Error,
    },
    /// It has no hit counter: not iolab's delay service.
    #[error("{0} has no {metric} line: is it iolab's delay service?", metric = crate::delay::HITS_METRIC)]
    DelayNoHits(String),
}

/// Read every configured backend's counter; the first failure is an error
/// naming the backend (a counter that cannot be read cannot be verified).
pub fn read(config: &BackendConfig) -> Result<BackendCounts, CountError> {
    let mut out = BackendCounts::default();
    for (kind, address) in config.addresses.iter() {
        if kind.def().counter.is_some() {
            out.set(kind, Some(backend(kind).count(address)?));
        }
    }
    Ok(out)
}
