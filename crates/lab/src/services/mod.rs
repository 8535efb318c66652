//! The real backends an experiment needs, ready before its first run: the
//! Rust twin of `scripts/services up`, scoped to one `iolab run`.
//!
//! For each backend the plan's steps call ([`Needs`]): if `IOLAB_PG`,
//! `IOLAB_MC` or `IOLAB_HTTP_BACKEND` names one that answers, use it;
//! otherwise start one for the experiment — the HTTP delay service in
//! process, memcached ([`memcached`]) and a throwaway PostgreSQL cluster
//! ([`postgres`]) as child processes ([`child`]). [`Services`] is the guard:
//! dropping it (end of the experiment, an error, Ctrl-C) stops what it
//! started, and nothing else. Keys the `mc:` steps read are stored if
//! missing ([`memcached::fill`]). Targets get the addresses as
//! `--pg/--mc/--http-backend` flags ([`Addresses`]).

pub mod child;
pub mod memcached;
pub mod needs;
pub mod postgres;

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use iolab_backends::delay::DelayService;
use iolab_model::environment::ServiceInfo;

pub use needs::Needs;

/// Where the backends are, as targets are told (`None` = not needed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Addresses {
    /// PostgreSQL URL.
    pub pg: Option<String>,
    /// memcached `HOST:PORT`.
    pub mc: Option<String>,
    /// Delay service base URL.
    pub http: Option<String>,
}

impl Addresses {
    /// `IOLAB_PG`, `IOLAB_MC`, `IOLAB_HTTP_BACKEND` (empty = unset).
    pub fn from_env() -> Addresses {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Addresses {
            pg: var("IOLAB_PG"),
            mc: var("IOLAB_MC"),
            http: var("IOLAB_HTTP_BACKEND").map(|u| u.trim_end_matches('/').to_string()),
        }
    }

    /// The `iolab serve` flags that point a target at these backends.
    pub fn serve_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (flag, v) in [
            ("--pg", &self.pg),
            ("--mc", &self.mc),
            ("--http-backend", &self.http),
        ] {
            if let Some(v) = v {
                out.push(flag.to_string());
                out.push(v.clone());
            }
        }
        out
    }

    /// The addresses of only the backends `needs` calls (for counters).
    pub fn only(&self, needs: &Needs) -> Addresses {
        Addresses {
            pg: self.pg.clone().filter(|_| needs.pg),
            mc: self.mc.clone().filter(|_| needs.mc()),
            http: self.http.clone().filter(|_| needs.http),
        }
    }

    /// As a backend configuration (default pool sizes).
    pub fn config(&self) -> iolab_backends::BackendConfig {
        iolab_backends::BackendConfig {
            pg: self.pg.clone(),
            mc: self.mc.clone(),
            http: self.http.clone(),
            ..Default::default()
        }
    }
}

/// Why the backends could not be made ready.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// A program is missing; nothing was started. The message is the fix.
    #[error("{0}")]
    Missing(String),
    /// A service did not start; what had started is stopped again.
    #[error("{0}")]
    Failed(String),
}

/// The backends of one experiment; dropping it stops the ones it started.
#[derive(Debug, Default)]
pub struct Services {
    /// Where they are.
    pub addresses: Addresses,
    info: Vec<ServiceInfo>,
    pg: Option<postgres::Cluster>,
    mc: Option<memcached::Memcached>,
    http: Option<DelayService>,
}

impl Services {
    /// What was used, for `environment.json`.
    pub fn info(&self) -> &[ServiceInfo] {
        &self.info
    }

    /// Process ids of the service processes started (memcached, postgres).
    pub fn pids(&self) -> Vec<u32> {
        let mut v = Vec::new();
        if let Some(m) = &self.mc {
            v.push(m.child.pid());
        }
        if let Some(p) = &self.pg {
            v.push(p.pid());
        }
        v
    }

    /// Stop what was started (also done on drop).
    pub fn stop(self) {
        drop(self);
    }
}

/// Make every backend in `needs` ready: reuse `given` ones that answer,
/// start the others. `say` gets one line per backend (progress output).
pub fn start(
    needs: &Needs,
    given: &Addresses,
    say: &dyn Fn(&str),
) -> Result<Services, ServiceError> {
    let mut s = Services::default();
    if needs.is_empty() {
        return Ok(s);
    }
    // Decide first, check programs, then start: a missing program fails
    // before anything runs.
    let reuse_pg = needs.pg && given.pg.as_deref().is_some_and(pg_reachable);
    let reuse_mc = needs.mc()
        && given
            .mc
            .as_deref()
            .is_some_and(|a| memcached::version(a).is_some());
    let reuse_http = needs.http && given.http.as_deref().is_some_and(http_reachable);
    let mc_bin = (needs.mc() && !reuse_mc)
        .then(memcached::find)
        .transpose()
        .map_err(ServiceError::Missing)?;
    let pg_bin: Option<PathBuf> = (needs.pg && !reuse_pg)
        .then(postgres::find)
        .transpose()
        .map_err(ServiceError::Missing)?;
    for (needed, reused, var, value) in [
        (needs.pg, reuse_pg, "IOLAB_PG", &given.pg),
        (needs.mc(), reuse_mc, "IOLAB_MC", &given.mc),
        (needs.http, reuse_http, "IOLAB_HTTP_BACKEND", &given.http),
    ] {
        if let (true, false, Some(v)) = (needed, reused, value) {
            say(&format!(
                "services: {var}={v} does not answer; starting one for this experiment"
            ));
        }
    }

    if needs.http {
        if reuse_http {
            let url = given.http.clone().expect("checked");
            say(&format!(
                "services: delay service {url} (from IOLAB_HTTP_BACKEND)"
            ));
            s.info.push(info("http", &url, "environment", None, vec![]));
            s.addresses.http = Some(url);
        } else {
            let d = DelayService::start(SocketAddr::from(([127, 0, 0, 1], 0))).map_err(|e| {
                ServiceError::Failed(format!("cannot start the HTTP delay service: {e}"))
            })?;
            let url = d.url().to_string();
            say(&format!(
                "services: started the delay service on {url} (in process)"
            ));
            s.info.push(info(
                "http",
                &url,
                "started",
                Some(format!("iolab {} (in process)", env!("CARGO_PKG_VERSION"))),
                vec![],
            ));
            s.addresses.http = Some(url);
            s.http = Some(d);
        }
    }
    if needs.mc() {
        let keys: Vec<String> = needs.mc_keys.iter().cloned().collect();
        let (addr, origin, version) = if reuse_mc {
            let a = given.mc.clone().expect("checked");
            let v = memcached::version(&a);
            say(&format!("services: memcached {a} (from IOLAB_MC)"));
            (a, "environment", v)
        } else {
            let bin = mc_bin.expect("found above");
            let m = memcached::start(&bin).map_err(ServiceError::Failed)?;
            say(&format!(
                "services: started {} on {} (pid {})",
                m.version.as_deref().unwrap_or("memcached"),
                m.addr,
                m.child.pid()
            ));
            let out = (m.addr.clone(), "started", m.version.clone());
            s.mc = Some(m);
            out
        };
        let mut notes = memcached::fill(&addr, &keys).map_err(ServiceError::Failed)?;
        for n in &notes {
            say(&format!("services: memcached {addr}: {n}"));
        }
        if let Some(m) = &s.mc {
            notes.push(format!("pid {}", m.child.pid()));
        }
        s.info.push(info("mc", &addr, origin, version, notes));
        s.addresses.mc = Some(addr);
    }
    if needs.pg {
        if reuse_pg {
            let url = given.pg.clone().expect("checked");
            say(&format!("services: PostgreSQL {url} (from IOLAB_PG)"));
            s.info.push(info("pg", &url, "environment", None, vec![]));
            s.addresses.pg = Some(url);
        } else {
            let bin = pg_bin.expect("found above");
            say("services: starting a throwaway PostgreSQL cluster (initdb, a few seconds)");
            let c = postgres::start(&bin).map_err(ServiceError::Failed)?;
            say(&format!(
                "services: started {} on {} (pid {})",
                c.version.as_deref().unwrap_or("PostgreSQL"),
                c.url,
                c.pid()
            ));
            let notes = vec![
                format!("pid {}", c.pid()),
                format!("data {}", c.dir().display()),
            ];
            s.info
                .push(info("pg", &c.url, "started", c.version.clone(), notes));
            s.addresses.pg = Some(c.url.clone());
            s.pg = Some(c);
        }
    }
    Ok(s)
}

fn info(
    kind: &str,
    address: &str,
    origin: &str,
    version: Option<String>,
    notes: Vec<String>,
) -> ServiceInfo {
    ServiceInfo {
        kind: kind.into(),
        address: address.into(),
        origin: origin.into(),
        version,
        notes,
    }
}

/// The delay service answers `/health`.
fn http_reachable(url: &str) -> bool {
    crate::http::get(&format!("{url}/health"), Duration::from_secs(1))
        .is_ok_and(|r| r.status == 200)
}

/// Something accepts connections at the URL's host and port.
fn pg_reachable(url: &str) -> bool {
    let Some((host, port)) = pg_host_port(url) else {
        return false;
    };
    (host.as_str(), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok())
}

/// Host and port of `postgres://[user[:pw]@]host[:port][/db][?..]`.
fn pg_host_port(url: &str) -> Option<(String, u16)> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (h, p.parse().ok()?),
        _ => (hostport, 5432),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_urls_give_host_and_port() {
        assert_eq!(
            pg_host_port("postgres://postgres@127.0.0.1:41234/postgres"),
            Some(("127.0.0.1".into(), 41234))
        );
        assert_eq!(
            pg_host_port("postgresql://u:pw@localhost/db"),
            Some(("localhost".into(), 5432))
        );
        assert_eq!(pg_host_port("nonsense"), None);
    }

    #[test]
    fn flags_name_only_what_is_set() {
        let a = Addresses {
            pg: None,
            mc: Some("127.0.0.1:1".into()),
            http: Some("http://127.0.0.1:2".into()),
        };
        assert_eq!(
            a.serve_flags(),
            [
                "--mc",
                "127.0.0.1:1",
                "--http-backend",
                "http://127.0.0.1:2"
            ]
        );
        let only = a.only(&Needs {
            http: true,
            ..Needs::default()
        });
        assert_eq!(only.mc, None);
        assert_eq!(only.http.as_deref(), Some("http://127.0.0.1:2"));
    }

    #[test]
    fn nothing_needed_starts_nothing() {
        let s = start(&Needs::default(), &Addresses::default(), &|_| {}).unwrap();
        assert!(s.info().is_empty() && s.pids().is_empty());
    }
}
