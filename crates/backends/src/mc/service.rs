//! memcached for `mc:KEY` steps, as `scripts/services` starts it: loopback
//! only, a free port, no UDP, 256 MB, 4096 connections and items up to 8 MB
//! (E4's value is 1 MB, memcached's default cap), as the `memcache` user
//! (else `nobody`) when iolab runs as root. Also: storing the values the
//! steps read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::service::child::{self, ServiceChild, WaitError};
use crate::service::{Service, StartError, Started};

/// memcached as a [`Service`].
pub struct MemcachedService;

/// The one instance.
pub static MEMCACHED: MemcachedService = MemcachedService;

impl Service for MemcachedService {
    fn label(&self) -> &'static str {
        "memcached"
    }

    fn answers(&self, address: &str) -> bool {
        version(address).is_some()
    }

    fn version(&self, address: &str) -> Option<String> {
        version(address)
    }

    fn find(&self) -> Result<Option<PathBuf>, StartError> {
        find().map(Some)
    }

    fn start(&self, program: Option<&Path>) -> Result<Box<dyn Started>, StartError> {
        let bin = program.ok_or(StartError::NoProgram("memcached program"))?;
        Ok(Box::new(start(bin)?))
    }

    fn prepare(&self, address: &str, keys: &[String]) -> Result<Vec<String>, StartError> {
        fill(address, keys)
    }
}

impl Started for Memcached {
    fn address(&self) -> String {
        self.addr.clone()
    }

    fn version(&self) -> Option<String> {
        self.version.clone()
    }

    fn notes(&self) -> Vec<String> {
        vec![format!("pid {}", self.child.pid())]
    }

    fn pid(&self) -> Option<u32> {
        Some(self.child.pid())
    }
}

/// Bytes stored under a key the steps read and nobody filled: E4's value,
/// and `iolab backend mc-fill`'s default.
pub const FILL_BYTES: usize = 1_024_000;

/// A memcached this experiment started.
#[derive(Debug)]
pub struct Memcached {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// `memcached 1.6.18`.
    pub version: Option<String>,
    /// The process (stopped when dropped).
    pub child: ServiceChild,
}

/// The memcached binary on `PATH`, or the one-line fix.
pub fn find() -> Result<PathBuf, StartError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("memcached"))
        .find(|p| p.is_file())
        .ok_or(StartError::McMissing)
}

/// Start memcached on a free loopback port (a few tries: a port may be
/// taken between choosing and binding it).
pub fn start(bin: &std::path::Path) -> Result<Memcached, StartError> {
    let user = if child::is_root() {
        Some(
            child::user_ids("memcache")
                .or_else(|| child::user_ids("nobody"))
                .ok_or(StartError::NoUser(
                    "neither user 'memcache' nor 'nobody' exists",
                ))?,
        )
    } else {
        None
    };
    let mut last = WaitError::Timeout(Duration::ZERO);
    for _ in 0..3 {
        let port = child::free_port().map_err(StartError::NoPort)?;
        let mut cmd = Command::new(bin);
        cmd.args(["-l", "127.0.0.1", "-p", &port.to_string()])
            .args(["-U", "0", "-m", "256", "-c", "4096", "-I", "8m"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        child::prepare(&mut cmd, user);
        let mut c =
            ServiceChild::spawn(&mut cmd, libc::SIGTERM).map_err(|why| StartError::Spawn {
                program: bin.display().to_string(),
                why,
            })?;
        let addr = format!("127.0.0.1:{port}");
        match child::wait_ready(&mut c, Duration::from_secs(10), || {
            super::stats(&addr).is_ok()
        }) {
            Ok(()) => {
                return Ok(Memcached {
                    version: version(&addr),
                    addr,
                    child: c,
                })
            }
            Err(e) => last = e,
        }
    }
    Err(StartError::McNotReady(last))
}

/// `memcached X.Y.Z`, from its `stats`.
pub fn version(addr: &str) -> Option<String> {
    super::stats(addr)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == "version")
        .map(|(_, v)| format!("memcached {v}"))
}

/// Make sure every key is stored: keys already there are left as they are
/// (a user may have filled them with another size); missing ones get
/// [`FILL_BYTES`] bytes. Returns one note per key.
pub fn fill(addr: &str, keys: &[String]) -> Result<Vec<String>, StartError> {
    let mut notes = Vec::new();
    for key in keys {
        match super::get(addr, key) {
            Ok(Some(v)) => notes.push(format!("key '{key}' already stored ({} bytes)", v.len())),
            Ok(None) => {
                super::set(addr, key, &value(FILL_BYTES)).map_err(|why| StartError::McStore {
                    key: key.clone(),
                    addr: addr.to_string(),
                    why,
                })?;
                notes.push(format!("stored key '{key}' ({FILL_BYTES} bytes)"));
            }
            Err(why) => {
                return Err(StartError::McRead {
                    key: key.clone(),
                    addr: addr.to_string(),
                    why,
                })
            }
        }
    }
    Ok(notes)
}

/// The value `iolab backend mc-fill` stores: bytes cycling through a-z.
fn value(size: usize) -> Vec<u8> {
    (0..size).map(|i| b'a' + (i % 26) as u8).collect()
}
