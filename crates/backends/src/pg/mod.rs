//! `pg:MS`: `SELECT pg_sleep(MS/1000.0)` on PostgreSQL. Its clients
//! ([`client`]: a pool of `pg_pool` connections each), its counter
//! (`pg_stat_statements`' calls of the statement, [`sleep_calls`]) and the
//! throwaway cluster `iolab run` starts ([`service`]).

mod client;
pub mod service;

use iolab_model::steps::BackendKind;

use crate::backend::{Backend, Clients, Pool};
use crate::{AddressError, BackendError, CountError, Service};

pub use client::{sleep_calls, SLEEP_SQL};

/// PostgreSQL as a [`Backend`].
pub struct PgBackend;

/// The one instance.
pub static PG: PgBackend = PgBackend;

impl Backend for PgBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Pg
    }

    fn check_address(&self, address: &str) -> Result<(), AddressError> {
        check_pg_url(address)
    }

    fn clients(&self, address: &str, pool: Pool) -> Result<Box<dyn Clients>, BackendError> {
        Ok(Box::new(client::Pg::new(address, pool.size, pool.wait)?))
    }

    fn count(&self, address: &str) -> Result<u64, CountError> {
        sleep_calls(address)
    }

    fn service(&self) -> Option<&'static dyn Service> {
        Some(&service::POSTGRES)
    }
}

/// A PostgreSQL URL that tokio-postgres accepts (`postgres://user@host:port/db`).
pub fn check_pg_url(url: &str) -> Result<(), AddressError> {
    const FIX: &str = "use postgres://USER@HOST:PORT/DB";
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(AddressError::new(
            BackendKind::Pg,
            url,
            "a PostgreSQL URL",
            FIX,
        ));
    }
    url.parse::<tokio_postgres::Config>()
        .map(|_| ())
        .map_err(|e| {
            AddressError::new(BackendKind::Pg, url, "a valid PostgreSQL URL", FIX).because(e)
        })
}
