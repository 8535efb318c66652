//! What `iolab run` starts for a backend when no running one is given: a
//! [`Service`] per backend (its module's `service.rs`: the delay service in
//! process, memcached and a throwaway PostgreSQL cluster as child
//! processes tied to iolab's life, [`child`]). Deciding which to reuse and
//! which to start for an experiment is the lab's (`iolab_lab::services`).

pub mod child;

use std::fmt::Debug;
use std::path::{Path, PathBuf};

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
    fn find(&self) -> Result<Option<PathBuf>, String>;
    /// Start one for this experiment.
    fn start(&self, program: Option<&Path>) -> Result<Box<dyn Started>, String>;
    /// Ready it for the steps: store the `keys` they read (keyed kinds such
    /// as `mc:KEY`); notes to record.
    fn prepare(&self, _address: &str, _keys: &[String]) -> Result<Vec<String>, String> {
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
