//! The grpcio test server (`scripts/foreign-services/grpc_server.py`,
//! grpcio being gRPC's reference implementation, not ours) on a free
//! loopback port, stopped on drop. Shared by the loadgen and CLI tests, as is
//! [`python`], the foreign services' interpreter.
//!
//! The server comes from `scripts/foreign-services/build` (a virtualenv
//! from PyPI), which `scripts/test` runs; without it a test says so and
//! passes only when `IOLAB_REQUIRE_FOREIGN` is unset (`scripts/test` sets it).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The folder of the server, its `.proto` and its virtualenv.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/foreign-services")
}

/// The foreign services' Python (their virtualenv's), or `None` when it is
/// missing and the test may skip (it says so); missing while
/// `IOLAB_REQUIRE_FOREIGN` is set, the test fails.
pub fn python() -> Option<PathBuf> {
    let python = dir().join(".venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("IOLAB_REQUIRE_FOREIGN").is_none(),
        "{} is missing: run scripts/foreign-services/build",
        python.display()
    );
    eprintln!(
        "SKIPPED: {} is missing (scripts/test installs it)",
        python.display()
    );
    None
}

/// `greeter.proto`: the service the server offers.
pub fn proto() -> PathBuf {
    dir().join("greeter.proto")
}

/// A running grpcio server.
pub struct Grpcio {
    child: Child,
    pub port: u16,
}

impl Grpcio {
    /// Start the server with `args` (e.g. `--no-reflection`); `None` when
    /// its virtualenv is missing and the test may skip.
    pub fn start(args: &[&str]) -> Option<Grpcio> {
        let python = python()?;
        let mut child = Command::new(python)
            .arg(dir().join("grpc_server.py"))
            .args(["--port", "0", "--workers", "8"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start grpc_server.py");
        let mut line = String::new();
        let out = child.stdout.take().expect("its stdout");
        BufReader::new(out)
            .read_line(&mut line)
            .expect("read its first line");
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("grpc_server.py did not start: {line:?}"));
        Some(Grpcio { child, port })
    }

    /// The server's process ID (the Python process itself).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `grpc://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }
}

impl Drop for Grpcio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
