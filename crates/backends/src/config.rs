//! [`BackendConfig`]: where the real backends are and how their pools are sized.

use std::time::Duration;

/// Where the real backends are and how their pools are sized.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// PostgreSQL URL, e.g. `postgres://postgres@127.0.0.1:5432/postgres`.
    pub pg: Option<String>,
    /// PostgreSQL pool size (HikariCP default 10).
    pub pg_pool: u32,
    /// Longest wait for a PostgreSQL connection (HikariCP default 30 s).
    pub pg_wait: Duration,
    /// memcached address, e.g. `127.0.0.1:11211`.
    pub mc: Option<String>,
    /// memcached connections (default 1, the E4 set-up).
    pub mc_pool: u32,
    /// Base URL of iolab's HTTP delay service.
    pub http: Option<String>,
    /// Longest wait for a memcached connection (default 30 s, like `pg_wait`).
    pub mc_wait: Duration,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            pg: None,
            pg_pool: 10,
            pg_wait: Duration::from_secs(30),
            mc: None,
            mc_pool: 1,
            http: None,
            mc_wait: Duration::from_secs(30),
        }
    }
}

impl BackendConfig {
    /// Check every configured address, so a typo fails at start-up with a
    /// message naming the flag instead of turning every request into a 503.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(url) = &self.pg {
            check_pg_url(url)?;
        }
        if let Some(addr) = &self.mc {
            check_mc_addr(addr)?;
        }
        if let Some(url) = &self.http {
            check_http_url(url)?;
        }
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
}
