//! What `iolab run` starts for a backend when no running one is given: a
//! [`Service`] per backend (its module's `service.rs`: the delay service in
//! process, memcached and a throwaway PostgreSQL cluster as child
//! processes tied to iolab's life, [`child`]). Deciding which to reuse and
//! which to start for an experiment is the lab's (`iolab_lab::services`).

pub mod child;

use std::fmt::Debug;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use child::{describe, WaitError};

/// Why a service could not be found, started or readied. [`Service::find`]'s
/// faults are missing programs (the message is the fix); the others a start
/// that failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `IOLAB_PG_BIN` points at a folder without the programs.
    #[error("IOLAB_PG_BIN={} has no initdb, postgres and psql: point it at PostgreSQL's bin folder", .0.display())]
    PgBinEnv(PathBuf),
    /// PostgreSQL is not installed.
    #[error("the preset's pg: steps need PostgreSQL, not found in {looked_in}: install PostgreSQL 15 (apt-get install postgresql-15), set IOLAB_PG_BIN to its bin folder, or set IOLAB_PG to a running server")]
    PgMissing {
        /// Where it was looked for.
        looked_in: &'static str,
    },
    /// memcached is not installed.
    #[error("the preset's mc: steps need memcached, which is not installed: run `scripts/install-deps memcached` (or set IOLAB_MC to a running one)")]
    McMissing,
    /// `start` was called without the program `find` gave.
    #[error("no {0}")]
    NoProgram(&'static str),
    /// Running as root with no user to run the server as.
    #[error("running as root and {0}")]
    NoUser(&'static str),
    /// A file or folder could not be made.
    #[error("cannot create {}: {why}", path.display())]
    Create {
        /// Which.
        path: PathBuf,
        /// Why.
        why: io::Error,
    },
    /// The cluster's folder could not be handed to its user.
    #[error("cannot hand {} to the postgres user: {why}", path.display())]
    Chown {
        /// The folder.
        path: PathBuf,
        /// Why.
        why: io::Error,
    },
    /// A log file handle could not be shared.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A setup program could not be run.
    #[error("cannot run {program}: {why}")]
    Run {
        /// Which: `initdb`.
        program: &'static str,
        /// Why.
        why: io::Error,
    },
    /// `initdb` failed; `last` is the last line of its own log (the tool's
    /// words, kept as text).
    #[error("initdb failed ({}): {last}", describe(*status))]
    Initdb {
        /// How it ended.
        status: ExitStatus,
        /// Its log's last line.
        last: String,
    },
    /// `postgresql.conf` could not be appended to.
    #[error("cannot configure the cluster: {0}")]
    Configure(io::Error),
    /// No loopback port to listen on.
    #[error("no free port: {0}")]
    NoPort(io::Error),
    /// The server process could not be spawned.
    #[error("cannot start {program}: {why}")]
    Spawn {
        /// The program, as named in messages.
        program: String,
        /// Why.
        why: io::Error,
    },
    /// PostgreSQL did not come up; `log` is the last line of its server log
    /// (the server's words, kept as text).
    #[error("PostgreSQL did not start: {why}: {log}")]
    PgNotReady {
        /// Exited or timed out.
        why: WaitError,
        /// Its log's last line.
        log: String,
    },
    /// memcached did not come up.
    #[error("memcached did not start: {0}")]
    McNotReady(WaitError),
    /// The in-process delay service could not bind.
    #[error("cannot start the HTTP delay service: {0}")]
    Delay(io::Error),
    /// A key the steps read could not be stored.
    #[error("cannot store '{key}' in memcached at {addr}: {why}")]
    McStore {
        /// The key.
        key: String,
        /// memcached's address.
        addr: String,
        /// Why.
        why: io::Error,
    },
    /// A key the steps read could not be looked up.
    #[error("cannot read '{key}' from memcached at {addr}: {why}")]
    McRead {
        /// The key.
        key: String,
        /// memcached's address.
        addr: String,
        /// Why.
        why: io::Error,
    },
}

/// A real backend the lab can reuse or start.
pub trait Service: Sync {
    /// What it is, for messages: `memcached`.
    fn label(&self) -> &'static str;
    /// Something answers at `address`.
    fn answers(&self, address: &str) -> bool;
    /// Its version at `address`, when it says.
    fn version(&self, _address: &str) -> Option<String> {
        None
    }
    /// The program starting one needs (`None`: nothing outside iolab), or
    /// the one-line fix; checked before anything starts.
    fn find(&self) -> Result<Option<PathBuf>, StartError>;
    /// Start one for this experiment.
    fn start(&self, program: Option<&Path>) -> Result<Box<dyn Started>, StartError>;
    /// Ready it for the steps: store the `keys` they read (keyed kinds such
    /// as `mc:KEY`); notes to record.
    fn prepare(&self, _address: &str, _keys: &[String]) -> Result<Vec<String>, StartError> {
        Ok(Vec::new())
    }
}

/// A backend this experiment started; dropping it stops it.
pub trait Started: Send + Debug {
    /// Where targets reach it.
    fn address(&self) -> String;
    /// Its version, when known.
    fn version(&self) -> Option<String>;
    /// Where it runs, for messages and the environment: `pid 123`, `in process`.
    fn notes(&self) -> Vec<String>;
    /// Its process, if it has one of its own.
    fn pid(&self) -> Option<u32>;
}
