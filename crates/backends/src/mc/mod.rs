//! `mc:KEY`: a memcached get of KEY. Its clients ([`client`]: a pool of
//! `mc_pool` connections each, and the one-shot [`set`], [`get`] and
//! [`stats`]), its counter (`get_hits`, [`mc_get_hits`]) and the memcached
//! `iolab run` starts ([`service`]).

mod client;
pub mod service;

use iolab_model::steps::BackendKind;

use crate::backend::{Backend, Clients, Pool};
use crate::{AddressError, BackendError, CountError, Service};

pub use client::{get, set, stats};

/// memcached as a [`Backend`].
pub struct McBackend;

/// The one instance.
pub static MC: McBackend = McBackend;

impl Backend for McBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Mc
    }

    fn check_address(&self, address: &str) -> Result<(), AddressError> {
        check_mc_addr(address)
    }

    fn clients(&self, address: &str, pool: Pool) -> Result<Box<dyn Clients>, BackendError> {
        Ok(Box::new(client::Mc::new(
            address.to_string(),
            pool.size,
            pool.wait,
        )))
    }

    fn count(&self, address: &str) -> Result<u64, CountError> {
        mc_get_hits(address)
    }

    fn service(&self) -> Option<&'static dyn Service> {
        Some(&service::MEMCACHED)
    }
}

/// A memcached address: `HOST:PORT`.
pub fn check_mc_addr(addr: &str) -> Result<(), AddressError> {
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
            Ok(())
        }
        _ => Err(AddressError::new(
            BackendKind::Mc,
            addr,
            "HOST:PORT",
            "use e.g. 127.0.0.1:11211",
        )),
    }
}

/// memcached's `get_hits` counter.
pub fn mc_get_hits(addr: &str) -> Result<u64, CountError> {
    let stats = stats(addr).map_err(|why| CountError::McStats {
        addr: addr.to_string(),
        why,
    })?;
    stats
        .iter()
        .find(|(k, _)| k == "get_hits")
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| CountError::McNoHits(addr.to_string()))
}
