//! Real services for the backend tests: the shared ones `scripts/services up`
//! exports (IOLAB_PG, IOLAB_MC, IOLAB_HTTP_BACKEND), and private memcached /
//! PostgreSQL instances for tests that must stop a server, each on a free
//! port and killed when dropped, so tests never disturb each other.
//!
//! A missing service or binary FAILS the test with the fix, never skips it.

#![allow(dead_code)] // each test binary uses a different part of this

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The address a shared service was exported under.
pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run the tests with scripts/test, or first \
             eval \"$(scripts/services up)\" to start the real services"
        )
    })
}

/// A port free right now on loopback.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < limit,
            "{what} did not come up within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn need(bin: &str) -> PathBuf {
    let path = PathBuf::from(bin);
    if path.is_absolute() {
        assert!(
            path.exists(),
            "{bin} not found: run scripts/test (scripts/install-deps installs it)"
        );
        return path;
    }
    let found = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(bin))
                .find(|f| f.exists())
        })
        .unwrap_or(None);
    found.unwrap_or_else(|| {
        panic!("{bin} not found on PATH: run scripts/test (scripts/install-deps installs it)")
    })
}

/// A private memcached on a free port.
pub struct Memcached {
    pub port: u16,
    child: Option<Child>,
}

impl Memcached {
    pub fn start() -> Self {
        let mut m = Memcached {
            port: free_port(),
            child: None,
        };
        m.restart();
        m
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Start (again) on the same port.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "memcached already running");
        let mut cmd = Command::new(need("memcached"));
        if is_root() {
            cmd.args(["-u", "nobody"]);
        }
        cmd.args([
            "-l",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "0",
            "-m",
            "64",
            "-I",
            "8m",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        self.child = Some(cmd.spawn().expect("cannot start memcached"));
        let addr = self.addr();
        wait_until("memcached", Duration::from_secs(10), || {
            TcpStream::connect(&addr).is_ok()
        });
    }

    /// Kill it (SIGKILL: the harshest stop a backend can suffer).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        self.stop();
    }
}

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

fn pg_bin(name: &str) -> String {
    let dir = std::env::var("IOLAB_PG_BIN").unwrap_or_else(|_| PG_BIN.into());
    need(&format!("{dir}/{name}")).display().to_string()
}

/// Run a PostgreSQL tool, as the `postgres` user when we are root.
fn pg_tool(name: &str, args: &[&str]) -> std::process::Output {
    let bin = pg_bin(name);
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", &bin]);
        c
    } else {
        Command::new(&bin)
    };
    cmd.args(args).stdin(Stdio::null());
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

/// A private throwaway PostgreSQL cluster on a free port.
pub struct Postgres {
    pub port: u16,
    dir: tempfile::TempDir,
    running: bool,
}

impl Postgres {
    pub fn start() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("iolab-pg-")
            .tempdir()
            .unwrap();
        let data = dir.path().join("data");
        if is_root() {
            let ok = Command::new("chown")
                .args(["postgres:", &dir.path().display().to_string()])
                .status()
                .unwrap()
                .success();
            assert!(ok, "cannot chown the test cluster folder to postgres");
        }
        let out = pg_tool(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             max_connections = 50\nfsync = off\n",
            dir.path().display()
        );
        let conf_path = data.join("postgresql.conf");
        let mut all = std::fs::read_to_string(&conf_path).unwrap();
        all.push_str(&conf);
        std::fs::write(&conf_path, all).unwrap();
        let mut pg = Postgres {
            port,
            dir,
            running: false,
        };
        pg.restart();
        pg
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Start (again) on the same port.
    pub fn restart(&mut self) {
        let log = self.dir.path().join("server.log").display().to_string();
        let out = pg_tool(
            "pg_ctl",
            &["-D", &self.data(), "-l", &log, "-w", "-t", "60", "start"],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.running = true;
    }

    /// Stop it the way an operator would (`-m fast`: sessions are cut).
    pub fn stop(&mut self) {
        if self.running {
            let _ = pg_tool("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
            self.running = false;
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let _ = pg_tool(
                "pg_ctl",
                &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
            );
        }
    }
}
