//! [`BackendCounts`]: the work each backend says it did, read from the
//! backends themselves (each [`Backend::count`](crate::Backend::count):
//! pg_stat_statements, memcached `stats`, the delay service's `/metrics`),
//! so `iolab verify` can check a target really made the calls it claims, in
//! the spirit of TechEmpower's checks.

use crate::registry::backend;
use crate::BackendConfig;

pub use iolab_model::runs::BackendCounts;

/// Read every configured backend's counter; the first failure is an error
/// naming the backend (a counter that cannot be read cannot be verified).
pub fn read(config: &BackendConfig) -> Result<BackendCounts, String> {
    let mut out = BackendCounts::default();
    for (kind, address) in config.addresses.iter() {
        if kind.def().counter.is_some() {
            out.set(kind, Some(backend(kind).count(address)?));
        }
    }
    Ok(out)
}
