//! `--pg`, `--mc`, `--http-backend`: where each real backend is, one flag per
//! backend generated from its definition (`BackendKind::def`: flag, its
//! environment variable, what an address looks like), checked while the
//! flags are parsed, so a typo is a usage error (exit 2) naming the flag,
//! not a stream of 503s. The pool sizes are knobs (`--pg-pool`, `--mc-pool`).

use std::time::Duration;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use iolab_backends::{Addresses, BackendConfig};
use iolab_model::steps::BackendKind;
use iolab_model::ModelParams;

/// Backend addresses and the longest wait for a pooled connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendFlags {
    /// Where each backend is.
    pub addresses: Addresses,
    /// Longest wait for a pooled PostgreSQL connection before a 503 `pool_timeout`.
    pub pg_wait: Duration,
}

impl Default for BackendFlags {
    fn default() -> Self {
        BackendFlags {
            addresses: Addresses::default(),
            pg_wait: PG_WAIT,
        }
    }
}

/// HikariCP's connection timeout.
const PG_WAIT: Duration = iolab_backends::POOL_WAIT;

impl BackendFlags {
    /// The clients' configuration, pools sized by `params`.
    pub fn config(&self, params: &ModelParams) -> BackendConfig {
        BackendConfig::new(self.addresses.clone(), params).with_wait(BackendKind::Pg, self.pg_wait)
    }
}

fn id(kind: BackendKind) -> &'static str {
    kind.def().flag.trim_start_matches('-')
}

impl Args for BackendFlags {
    fn augment_args(cmd: Command) -> Command {
        let cmd = cmd.next_help_heading("Backends");
        let cmd = BackendKind::real().fold(cmd, |cmd, kind| {
            let def = kind.def();
            cmd.arg(
                Arg::new(id(kind))
                    .long(id(kind))
                    .env(def.env)
                    .value_name(def.value_name)
                    .help(format!(
                        "Where `{}:...` steps go: {} ({}).",
                        def.name, def.address, def.about
                    ))
                    .value_parser(move |s: &str| {
                        iolab_backends::check_address(kind, s).map(|()| s.to_string())
                    }),
            )
        });
        cmd.arg(
            Arg::new("pg-wait")
                .long("pg-wait")
                .value_name("DURATION")
                .default_value("30s")
                .help(
                    "Longest wait for a pooled PostgreSQL connection before a 503 `pool_timeout`.",
                )
                .value_parser(|s: &str| {
                    iolab_model::units::parse_duration(s).map_err(|e| e.to_string())
                }),
        )
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for BackendFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut addresses = Addresses::default();
        for kind in BackendKind::real() {
            addresses.set(kind, m.get_one::<String>(id(kind)).cloned());
        }
        Ok(BackendFlags {
            addresses,
            pg_wait: m.get_one::<Duration>("pg-wait").copied().unwrap_or(PG_WAIT),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
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
    fn defaults_match_hikaricp() {
        let b = T::try_parse_from(["t"]).unwrap().b;
        assert_eq!(b.pg_wait, Duration::from_secs(30));
        let c = b.config(&ModelParams::default());
        let size = |k| c.pool(k).size;
        assert_eq!((size(BackendKind::Pg), size(BackendKind::Mc)), (10, 1));
    }

    #[test]
    fn flags_become_the_config_and_bad_addresses_are_refused() {
        let t = T::try_parse_from([
            "t",
            "--pg",
            "postgres://postgres@127.0.0.1:5432/postgres",
            "--pg-wait",
            "100ms",
            "--mc",
            "127.0.0.1:11211",
            "--http-backend",
            "http://127.0.0.1:9000/",
        ])
        .unwrap();
        assert_eq!(t.b.pg_wait, Duration::from_millis(100));
        let a = &t.b.addresses;
        assert_eq!(a.get(BackendKind::Http), Some("http://127.0.0.1:9000"));
        assert_eq!(a.get(BackendKind::Mc), Some("127.0.0.1:11211"));
        for bad in [
            ["--mc", "nowhere"],
            ["--pg", "mysql://x"],
            ["--http-backend", "ftp://x"],
            ["--pg-wait", "30"],
        ] {
            assert!(T::try_parse_from(["t", bad[0], bad[1]]).is_err(), "{bad:?}");
        }
    }
}
