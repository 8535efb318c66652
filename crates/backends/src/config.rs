//! Where the real backends are ([`Addresses`]: one address per kind, from
//! the flags or the `IOLAB_*` variables each kind's definition names) and how
//! their pools are sized ([`BackendConfig`]). Every list of backends here is
//! a walk over `BackendKind`'s definitions, so adding a backend adds no line.

use std::collections::BTreeMap;
use std::time::Duration;

use iolab_model::steps::BackendKind;
use iolab_model::ModelParams;

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
    pub fn check(&self) -> Result<(), String> {
        self.iter().try_for_each(|(k, v)| check_address(k, v))
    }
}

/// A kind's placeholder in custom commands: its flag's name, `http_backend`.
fn placeholder(kind: BackendKind) -> String {
    kind.def().flag.trim_start_matches('-').replace('-', "_")
}

fn normalise(kind: BackendKind, address: &str) -> String {
    match kind {
        BackendKind::Http => address.trim_end_matches('/').to_string(),
        BackendKind::Sleep | BackendKind::Pg | BackendKind::Mc => address.to_string(),
    }
}

/// Check an address of `kind`: one line naming the flag and the fix.
pub fn check_address(kind: BackendKind, address: &str) -> Result<(), String> {
    match kind {
        BackendKind::Sleep => Ok(()),
        BackendKind::Http => check_http_url(address),
        BackendKind::Pg => check_pg_url(address),
        BackendKind::Mc => check_mc_addr(address),
    }
}

/// Where the real backends are and how their pools are sized.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// The addresses.
    pub addresses: Addresses,
    /// PostgreSQL pool size (HikariCP default 10).
    pub pg_pool: u32,
    /// Longest wait for a PostgreSQL connection (HikariCP default 30 s).
    pub pg_wait: Duration,
    /// memcached connections (default 1, the E4 set-up).
    pub mc_pool: u32,
    /// Longest wait for a memcached connection (default 30 s, like `pg_wait`).
    pub mc_wait: Duration,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig::new(Addresses::default(), &ModelParams::default())
    }
}

impl BackendConfig {
    /// `addresses` with the pool sizes of `params` (their defaults when unset).
    pub fn new(addresses: Addresses, params: &ModelParams) -> Self {
        BackendConfig {
            addresses,
            pg_pool: params.pg_pool(),
            pg_wait: Duration::from_secs(30),
            mc_pool: params.mc_pool.unwrap_or(1),
            mc_wait: Duration::from_secs(30),
        }
    }

    /// The address of `kind`, if configured.
    pub fn address(&self, kind: BackendKind) -> Option<&str> {
        self.addresses.get(kind)
    }

    /// Check every configured address and pool size.
    pub fn validate(&self) -> Result<(), String> {
        self.addresses.check()?;
        if self.pg_pool == 0 {
            return Err("--pg-pool must be at least 1".into());
        }
        if self.mc_pool == 0 {
            return Err("--mc-pool must be at least 1".into());
        }
        Ok(())
    }
}

/// A PostgreSQL URL that tokio-postgres accepts (`postgres://user@host:port/db`).
pub fn check_pg_url(url: &str) -> Result<(), String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!(
            "--pg '{url}' is not a PostgreSQL URL: use postgres://USER@HOST:PORT/DB"
        ));
    }
    url.parse::<tokio_postgres::Config>()
        .map(|_| ())
        .map_err(|e| format!("--pg '{url}' is not a valid PostgreSQL URL ({e}): use postgres://USER@HOST:PORT/DB"))
}

/// A memcached address: `HOST:PORT`.
pub fn check_mc_addr(addr: &str) -> Result<(), String> {
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0) => {
            Ok(())
        }
        _ => Err(format!(
            "--mc '{addr}' is not HOST:PORT: use e.g. 127.0.0.1:11211"
        )),
    }
}

/// An `http://HOST:PORT` base URL (no TLS: the delay service is on loopback).
pub fn check_http_url(url: &str) -> Result<(), String> {
    let fix = "use http://HOST:PORT, e.g. the URL `iolab backend http` prints";
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--http-backend '{url}' is not an http:// URL: {fix}"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() || url.parse::<hyper::Uri>().is_err() {
        return Err(format!("--http-backend '{url}' is not a valid URL: {fix}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_with_a_fix_in_the_message() {
        assert!(check_pg_url("postgres://postgres@127.0.0.1:5432/postgres").is_ok());
        assert!(check_pg_url("mysql://x")
            .unwrap_err()
            .contains("postgres://"));
        assert!(check_mc_addr("127.0.0.1:11211").is_ok());
        assert!(check_mc_addr("127.0.0.1")
            .unwrap_err()
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
