//! Where the real backends are ([`Addresses`]: one address per kind, from
//! the flags or the `IOLAB_*` variables each kind's definition names) and how
//! their pools are sized ([`BackendConfig`]). Every list of backends here is
//! a walk over `BackendKind`'s definitions and each kind's [`Backend`](crate::Backend)
//! (its address check), so adding a backend adds no line.

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::steps::BackendKind;
use iolab_model::ModelParams;

use crate::backend::Pool;
use crate::registry::backend;

/// An address a backend cannot use: `--pg 'mysql://x' is not a PostgreSQL
/// URL: use postgres://USER@HOST:PORT/DB`. Each backend's check fills in
/// what it wanted and the fix, so a new backend adds no variant.
#[derive(Debug, thiserror::Error)]
#[error("{flag} '{value}' is not {wanted}{}: {fix}", cause.as_ref().map_or(String::new(), |c| format!(" ({c})")), flag = kind.def().flag)]
pub struct AddressError {
    /// Whose address.
    pub kind: BackendKind,
    /// The address given.
    pub value: String,
    /// What it should be: `a PostgreSQL URL`.
    pub wanted: &'static str,
    /// The fix: `use postgres://USER@HOST:PORT/DB`.
    pub fix: &'static str,
    /// The parser's own reason, when a library's parser refused it.
    pub cause: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl AddressError {
    /// `value` is not `wanted` for `kind`; `fix` says what to write.
    pub(crate) fn new(
        kind: BackendKind,
        value: &str,
        wanted: &'static str,
        fix: &'static str,
    ) -> Self {
        AddressError {
            kind,
            value: value.to_string(),
            wanted,
            fix,
            cause: None,
        }
    }

    /// The same, with the parser's reason.
    pub(crate) fn because(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }
}

/// A [`BackendConfig`] that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// An address is wrong.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// A pool of no connections (the knob, e.g. `pg_pool`).
    #[error("--{} must be at least 1", .0.replace('_', "-"))]
    EmptyPool(&'static str),
}

/// Where each real backend is (`pg` URL, `mc` `HOST:PORT`, `http` base URL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Addresses(BTreeMap<BackendKind, String>);

impl Addresses {
    /// The address of `kind`, if known.
    pub fn get(&self, kind: BackendKind) -> Option<&str> {
        self.0.get(&kind).map(String::as_str)
    }

    /// Set (or clear) the address of `kind`, normalised.
    pub fn set(&mut self, kind: BackendKind, address: Option<String>) {
        match address {
            Some(a) if !kind.is_sleep() => {
                self.0.insert(kind, normalise(kind, &a));
            }
            _ => {
                self.0.remove(&kind);
            }
        }
    }

    /// These addresses with `kind` at `address`.
    pub fn with(mut self, kind: BackendKind, address: impl Into<String>) -> Addresses {
        self.set(kind, Some(address.into()));
        self
    }

    /// Every known (kind, address).
    pub fn iter(&self) -> impl Iterator<Item = (BackendKind, &str)> {
        self.0.iter().map(|(k, v)| (*k, v.as_str()))
    }

    /// No address known.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// From each kind's environment variable (`IOLAB_PG`, ...; empty = unset).
    pub fn from_env() -> Addresses {
        let mut a = Addresses::default();
        for kind in BackendKind::real() {
            let v = std::env::var(kind.def().env).ok();
            a.set(kind, v.filter(|v| !v.trim().is_empty()));
        }
        a
    }

    /// The flags that point a target at these backends (`--pg URL ...`).
    pub fn serve_flags(&self) -> Vec<String> {
        self.iter()
            .flat_map(|(k, v)| [k.def().flag.to_string(), v.to_string()])
            .collect()
    }

    /// Replace `{pg}`, `{mc}`, `{http_backend}` (each kind's flag name) in `text`.
    pub fn substitute(&self, text: &str) -> String {
        self.iter().fold(text.to_string(), |t, (k, v)| {
            t.replace(&format!("{{{}}}", placeholder(k)), v)
        })
    }

    /// Only the addresses of `kinds`.
    pub fn only(&self, kinds: impl IntoIterator<Item = BackendKind>) -> Addresses {
        let mut a = Addresses::default();
        for k in kinds {
            a.set(k, self.get(k).map(str::to_string));
        }
        a
    }

    /// Check every address, so a typo fails at start-up with a message naming
    /// the flag instead of turning every request into a 503.
    pub fn check(&self) -> Result<(), AddressError> {
        self.iter().try_for_each(|(k, v)| check_address(k, v))
    }
}

/// A kind's placeholder in custom commands: its flag's name, `http_backend`.
fn placeholder(kind: BackendKind) -> String {
    kind.def().flag.trim_start_matches('-').replace('-', "_")
}

fn normalise(kind: BackendKind, address: &str) -> String {
    backend(kind).normalise(address)
}

/// Check an address of `kind`: one line naming the flag and the fix.
pub fn check_address(kind: BackendKind, address: &str) -> Result<(), AddressError> {
    backend(kind).check_address(address)
}

/// HikariCP's connection timeout: how long a call waits for a pooled
/// connection unless told otherwise (`--pg-wait`).
pub const POOL_WAIT: Duration = Duration::from_secs(30);

/// Where the real backends are and how their pools are sized.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// The addresses.
    pub addresses: Addresses,
    /// Each pooled backend's pool (size from its pool knob), by kind.
    pub pools: BTreeMap<BackendKind, Pool>,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig::new(Addresses::default(), &ModelParams::default())
    }
}

impl BackendConfig {
    /// `addresses` with the pools their kinds' knobs in `params` size
    /// (the knobs' defaults when unset: PostgreSQL 10, memcached 1).
    pub fn new(addresses: Addresses, params: &ModelParams) -> Self {
        let pools = BackendKind::ALL
            .into_iter()
            .filter_map(|kind| {
                let knob = iolab_model::knob::knob(kind.def().pool_knob?)?;
                let size = params.value(knob, 1).unwrap_or(1);
                Some((
                    kind,
                    Pool {
                        size,
                        wait: POOL_WAIT,
                    },
                ))
            })
            .collect();
        BackendConfig { addresses, pools }
    }

    /// The address of `kind`, if configured.
    pub fn address(&self, kind: BackendKind) -> Option<&str> {
        self.addresses.get(kind)
    }

    /// The pool of `kind` (one connection and the default wait for a kind
    /// without a pool knob: its client does not pool).
    pub fn pool(&self, kind: BackendKind) -> Pool {
        self.pools.get(&kind).copied().unwrap_or(Pool {
            size: 1,
            wait: POOL_WAIT,
        })
    }

    /// This configuration with `size` connections in the pool of `kind`.
    pub fn with_pool(mut self, kind: BackendKind, size: u32) -> Self {
        let pool = self.pool(kind);
        self.pools.insert(kind, Pool { size, ..pool });
        self
    }

    /// This configuration with calls to `kind` waiting at most `wait` for
    /// a pooled connection.
    pub fn with_wait(mut self, kind: BackendKind, wait: Duration) -> Self {
        let pool = self.pool(kind);
        self.pools.insert(kind, Pool { wait, ..pool });
        self
    }

    /// Check every configured address and pool size.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.addresses.check()?;
        for (kind, pool) in &self.pools {
            if pool.size == 0 {
                let knob = kind.def().pool_knob.unwrap_or_default();
                return Err(ConfigError::EmptyPool(knob));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_with_a_fix_in_the_message() {
        use crate::http::check_http_url;
        use crate::mc::check_mc_addr;
        use crate::pg::check_pg_url;
        assert!(check_pg_url("postgres://postgres@127.0.0.1:5432/postgres").is_ok());
        assert!(check_pg_url("mysql://x")
            .unwrap_err()
            .to_string()
            .contains("postgres://"));
        assert!(check_mc_addr("127.0.0.1:11211").is_ok());
        assert!(check_mc_addr("127.0.0.1")
            .unwrap_err()
            .to_string()
            .contains("HOST:PORT"));
        assert!(check_mc_addr("h:0").is_err());
        assert!(check_http_url("http://127.0.0.1:8080").is_ok());
        assert!(check_http_url("https://x").is_err());
        assert!(check_http_url("http://").is_err());
    }

    #[test]
    fn addresses_come_from_one_table() {
        let a = Addresses::default()
            .with(BackendKind::Mc, "127.0.0.1:1")
            .with(BackendKind::Http, "http://127.0.0.1:2/");
        assert_eq!(
            a.serve_flags(),
            [
                "--http-backend",
                "http://127.0.0.1:2",
                "--mc",
                "127.0.0.1:1"
            ]
        );
        assert_eq!(
            a.substitute("x {mc} {http_backend} {pg}"),
            "x 127.0.0.1:1 http://127.0.0.1:2 {pg}"
        );
        let only = a.only([BackendKind::Http]);
        assert_eq!(only.get(BackendKind::Mc), None);
        assert!(Addresses::default()
            .with(BackendKind::Mc, "nowhere")
            .check()
            .is_err());
    }
}
