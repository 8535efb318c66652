//! A throwaway PostgreSQL cluster for `pg:MS` steps, as `scripts/services`
//! makes it: `initdb` in a temporary folder (as the `postgres` user when
//! iolab runs as root; trust auth, no fsync), listening on 127.0.0.1 only on
//! a free port, `max_connections = 500`, `pg_stat_statements` loaded and
//! created (what `iolab verify` and `runs.json` count). At the end: an
//! immediate shutdown (SIGQUIT, what `pg_ctl stop -m immediate` sends) and
//! the folder removed.
//!
//! The server runs as iolab's child (`postgres -D ...`, not `pg_ctl start`,
//! which detaches it), so it dies with iolab even when iolab is killed.

use std::fs;
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::service::child::{self, ServiceChild, User, WaitError};
use crate::service::{Service, StartError, Started};

/// What `scripts/services` uses unless `IOLAB_PG_BIN` says otherwise.
pub(crate) const DEFAULT_BIN: &str = "/usr/lib/postgresql/15/bin";

/// A cluster this experiment started.
#[derive(Debug)]
pub struct Cluster {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
    /// `PostgreSQL 15.x`.
    pub version: Option<String>,
    // Declared before `dir`: the server stops before its folder goes.
    server: ServiceChild,
    dir: PathBuf,
}

impl Cluster {
    /// The postmaster's process id.
    pub fn pid(&self) -> u32 {
        self.server.pid()
    }

    /// Its folder (data, logs), removed when it stops.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// PostgreSQL as a [`Service`].
pub struct Postgres;

/// The one instance.
pub static POSTGRES: Postgres = Postgres;

impl Service for Postgres {
    fn label(&self) -> &'static str {
        "PostgreSQL"
    }

    fn answers(&self, url: &str) -> bool {
        reachable(url)
    }

    fn find(&self) -> Result<Option<PathBuf>, StartError> {
        find().map(Some)
    }

    fn start(&self, program: Option<&Path>) -> Result<Box<dyn Started>, StartError> {
        let bin = program.ok_or(StartError::NoProgram("PostgreSQL programs"))?;
        Ok(Box::new(start(bin)?))
    }
}

impl Started for Cluster {
    fn address(&self) -> String {
        self.url.clone()
    }

    fn version(&self) -> Option<String> {
        self.version.clone()
    }

    fn notes(&self) -> Vec<String> {
        vec![
            format!("pid {}", self.pid()),
            format!("data {}", self.dir().display()),
        ]
    }

    fn pid(&self) -> Option<u32> {
        Some(self.server.pid())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.server.stop(Duration::from_secs(10));
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The folder with `initdb`, `postgres` and `psql`: `IOLAB_PG_BIN`, else
/// PostgreSQL 15's, else the newest under `/usr/lib/postgresql`; or the
/// one-line fix.
pub fn find() -> Result<PathBuf, StartError> {
    let has_all = |d: &Path| {
        ["initdb", "postgres", "psql"]
            .iter()
            .all(|b| d.join(b).is_file())
    };
    if let Some(dir) = std::env::var_os("IOLAB_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if has_all(&dir) {
            Ok(dir)
        } else {
            Err(StartError::PgBinEnv(dir))
        };
    }
    let mut candidates = vec![PathBuf::from(DEFAULT_BIN)];
    if let Ok(entries) = fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<(u32, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
                Some((v, e.path().join("bin")))
            })
            .collect();
        versions.sort();
        candidates.extend(versions.into_iter().rev().map(|(_, p)| p));
    }
    (candidates.into_iter().find(|d| has_all(d))).ok_or(StartError::PgMissing {
        looked_in: DEFAULT_BIN,
    })
}

/// Make and start a cluster.
pub fn start(bin: &Path) -> Result<Cluster, StartError> {
    let user = if child::is_root() {
        Some(child::user_ids("postgres").ok_or(StartError::NoUser(
            "there is no 'postgres' user to run PostgreSQL as (initdb refuses root)",
        ))?)
    } else {
        None
    };
    let dir = make_dir(user)?;
    match init_and_run(bin, &dir, user) {
        Ok((server, url)) => Ok(Cluster {
            url,
            version: child::version_line(&bin.join("postgres"), "--version")
                .map(|v| v.replace("postgres (PostgreSQL)", "PostgreSQL")),
            server,
            dir,
        }),
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            Err(e)
        }
    }
}

/// A fresh folder under the temp dir, owned by the server's user.
fn make_dir(user: Option<User>) -> Result<PathBuf, StartError> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "iolab-pg-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|why| StartError::Create {
        path: dir.clone(),
        why,
    })?;
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).map_err(|why| StartError::Chown {
            path: dir.clone(),
            why,
        })?;
    }
    Ok(dir)
}

fn log_file(path: &Path) -> Result<fs::File, StartError> {
    fs::File::create(path).map_err(|why| StartError::Create {
        path: path.to_path_buf(),
        why,
    })
}

fn init_and_run(
    bin: &Path,
    dir: &Path,
    user: Option<User>,
) -> Result<(ServiceChild, String), StartError> {
    let data = dir.join("data");
    let initdb_log = dir.join("initdb.log");
    let log = log_file(&initdb_log)?;
    let mut cmd = Command::new(bin.join("initdb"));
    cmd.arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    child::prepare(&mut cmd, user);
    let status = cmd.status().map_err(|why| StartError::Run {
        program: "initdb",
        why,
    })?;
    if !status.success() {
        let tail = fs::read_to_string(&initdb_log).unwrap_or_default();
        let last = tail.lines().last().unwrap_or("").trim().to_string();
        return Err(StartError::Initdb { status, last });
    }
    let conf = format!(
        "\n# iolab throwaway cluster (iolab run)\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nmax_connections = 500\nshared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n",
        dir.display()
    );
    fs::OpenOptions::new()
        .append(true)
        .open(data.join("postgresql.conf"))
        .and_then(|mut f| f.write_all(conf.as_bytes()))
        .map_err(StartError::Configure)?;

    let server_log = dir.join("server.log");
    // Each try that fails sets these (three tries: a port may be taken
    // between choosing and binding it).
    let (mut why, mut last) = (WaitError::Timeout(Duration::ZERO), String::new());
    for _ in 0..3 {
        let port = child::free_port().map_err(StartError::NoPort)?;
        let log = log_file(&server_log)?;
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string()])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        child::prepare(&mut cmd, user);
        // SIGQUIT: immediate shutdown, as `pg_ctl stop -m immediate`.
        let mut server =
            ServiceChild::spawn(&mut cmd, libc::SIGQUIT).map_err(|why| StartError::Spawn {
                program: "postgres".into(),
                why,
            })?;
        let psql = bin.join("psql");
        let ready = child::wait_ready(&mut server, Duration::from_secs(30), || {
            create_extension(&psql, port)
        });
        match ready {
            Ok(()) => {
                return Ok((
                    server,
                    format!("postgres://postgres@127.0.0.1:{port}/postgres"),
                ))
            }
            Err(e) => {
                server.stop(Duration::from_secs(5));
                let tail = fs::read_to_string(&server_log).unwrap_or_default();
                (why, last) = (e, tail.lines().last().unwrap_or("").trim().to_string());
            }
        }
    }
    Err(StartError::PgNotReady { why, log: last })
}

/// `CREATE EXTENSION pg_stat_statements`; false until the server accepts it.
fn create_extension(psql: &Path, port: u16) -> bool {
    Command::new(psql)
        .args(["-X", "-q", "-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-U", "postgres", "-d", "postgres"])
        .args(["-c", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"])
        .env("PGCONNECT_TIMEOUT", "2")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
/// Something accepts connections at the URL's host and port.
fn reachable(url: &str) -> bool {
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
}
