//! [`BackendCounts`]: the work each backend says it did, read from the
//! backends themselves (pg_stat_statements, memcached `stats`, the delay
//! service's `/metrics`), so `iolab verify` can check a target really made the
//! calls it claims, in the spirit of TechEmpower's checks.

use iolab_model::steps::BackendKind;

use crate::BackendConfig;

pub use iolab_model::runs::BackendCounts;

/// Read every configured backend's counter; the first failure is an error
/// naming the backend (a counter that cannot be read cannot be verified).
pub fn read(config: &BackendConfig) -> Result<BackendCounts, String> {
    let mut out = BackendCounts::default();
    for (kind, address) in config.addresses.iter() {
        match kind {
            BackendKind::Sleep => {}
            BackendKind::Pg => out.pg_sleep_calls = Some(crate::pg::sleep_calls(address)?),
            BackendKind::Mc => out.mc_get_hits = Some(mc_get_hits(address)?),
            BackendKind::Http => out.http_hits = Some(crate::http::delay_hits(address)?),
        }
    }
    Ok(out)
}

/// memcached's `get_hits` counter.
pub fn mc_get_hits(addr: &str) -> Result<u64, String> {
    let stats = crate::mc::stats(addr)
        .map_err(|e| format!("cannot read memcached stats at {addr}: {e}"))?;
    stats
        .iter()
        .find(|(k, _)| k == "get_hits")
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| format!("memcached at {addr} reported no get_hits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_what_both_have() {
        let before = BackendCounts {
            pg_sleep_calls: Some(5),
            mc_get_hits: Some(10),
            http_hits: None,
            error: None,
        };
        let after = BackendCounts {
            pg_sleep_calls: Some(8),
            mc_get_hits: Some(3),
            http_hits: Some(4),
            error: None,
        };
        let d = after.since(&before);
        assert_eq!(d.pg_sleep_calls, Some(3));
        assert_eq!(d.mc_get_hits, Some(0));
        assert_eq!(d.http_hits, Some(4));
    }
}
