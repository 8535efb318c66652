//! Flags that point a target at its backends (`--pg`, `--mc`, `--http-backend`,
//! pool sizes), shared by `iolab serve` and `iolab batch`. Addresses are
//! checked while the flags are parsed, so a typo is a usage error (exit 2)
//! naming the flag, not a stream of 503s.

use std::time::Duration;

use iolab_backends::BackendConfig;

/// Backend addresses and pool sizes.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Backends")]
pub struct BackendFlags {
    /// PostgreSQL URL for `pg:MS` steps, e.g. postgres://postgres@127.0.0.1:5432/postgres.
    #[arg(long, env = "IOLAB_PG", value_name = "URL", value_parser = pg_url)]
    pub pg: Option<String>,
    /// PostgreSQL connections in the pool (HikariCP's default).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub pg_pool: u32,
    /// Longest wait for a pooled PostgreSQL connection before a 503 `pool_timeout`.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub pg_wait: Duration,
    /// memcached address for `mc:KEY` steps, e.g. 127.0.0.1:11211.
    #[arg(long, env = "IOLAB_MC", value_name = "HOST:PORT", value_parser = mc_addr)]
    pub mc: Option<String>,
    /// memcached connections (1 is the E4 set-up: every get queues on one socket).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub mc_pool: u32,
    /// Base URL of iolab's HTTP delay service for `http:MS` steps (`iolab backend http`).
    #[arg(long, env = "IOLAB_HTTP_BACKEND", value_name = "URL", value_parser = http_url)]
    pub http_backend: Option<String>,
}

impl BackendFlags {
    /// The typed configuration.
    pub fn config(&self) -> BackendConfig {
        BackendConfig {
            pg: self.pg.clone(),
            pg_pool: self.pg_pool,
            pg_wait: self.pg_wait,
            mc: self.mc.clone(),
            mc_pool: self.mc_pool,
            http: self.http_backend.clone(),
            ..BackendConfig::default()
        }
    }
}

pub(crate) fn pg_url(s: &str) -> Result<String, String> {
    iolab_backends::check_pg_url(s).map(|_| s.to_string())
}

pub(crate) fn mc_addr(s: &str) -> Result<String, String> {
    iolab_backends::check_mc_addr(s).map(|_| s.to_string())
}

pub(crate) fn http_url(s: &str) -> Result<String, String> {
    iolab_backends::check_http_url(s).map(|_| s.trim_end_matches('/').to_string())
}

fn duration(s: &str) -> Result<Duration, String> {
    iolab_model::units::parse_duration(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        b: BackendFlags,
    }

    #[test]
    fn defaults_match_hikaricp_and_e4() {
        let c = T::try_parse_from(["t"]).unwrap().b.config();
        assert_eq!(c.pg_pool, 10);
        assert_eq!(c.pg_wait, Duration::from_secs(30));
        assert_eq!(c.mc_pool, 1);
    }

    #[test]
    fn flags_become_the_config_and_bad_addresses_are_refused() {
        let t = T::try_parse_from([
            "t",
            "--pg",
            "postgres://postgres@127.0.0.1:5432/postgres",
            "--pg-pool",
            "3",
            "--pg-wait",
            "100ms",
            "--mc",
            "127.0.0.1:11211",
            "--mc-pool",
            "8",
            "--http-backend",
            "http://127.0.0.1:9000/",
        ])
        .unwrap();
        let c = t.b.config();
        assert_eq!(c.pg_pool, 3);
        assert_eq!(c.pg_wait, Duration::from_millis(100));
        assert_eq!(c.mc_pool, 8);
        assert_eq!(c.http.as_deref(), Some("http://127.0.0.1:9000"));
        for bad in [
            ["--mc", "nowhere"],
            ["--pg", "mysql://x"],
            ["--http-backend", "ftp://x"],
            ["--pg-pool", "0"],
            ["--pg-wait", "30"],
        ] {
            assert!(T::try_parse_from(["t", bad[0], bad[1]]).is_err(), "{bad:?}");
        }
    }
}
