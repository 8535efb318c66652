//! A foreign target: a user's own HTTP service (a Spring app, a FastAPI
//! app, a gateway), measured with a request of their own
//! ([`ForeignSpec`]) instead of `/work?steps=`. It does not speak the
//! target contract, so the verify gate is skipped (and the run says so);
//! it is up when its health path answers (its request path answering
//! anything but a 5xx when none is named); its `/proc` telemetry comes from
//! the PID iolab started it as, or the `pid` given; its own Prometheus
//! endpoint is scraped when named.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iolab_model::experiment::RunSpec;
use iolab_model::request::{ForeignSpec, RequestSet};

use super::child::{StartError, TargetCommand};
use super::process::{Health, Target};
use super::StartOptions;

pub use iolab_model::request::CONTRACT_SKIPPED;

/// A foreign service ready to be loaded: started by iolab, or already running.
#[derive(Debug)]
pub struct Running {
    /// Base URL, e.g. `http://127.0.0.1:8080`.
    pub base: String,
    /// Its PID, when known.
    pub pid: Option<u32>,
    /// The process iolab started (stopped when dropped).
    pub target: Option<Target>,
}

impl Running {
    /// The requests every send makes.
    pub fn requests(&self, f: &ForeignSpec) -> RequestSet {
        f.requests(&self.base)
    }

    /// The first request's URL.
    pub fn url(&self, f: &ForeignSpec) -> String {
        ForeignSpec::join(&self.base, &f.request.url)
    }

    /// Its Prometheus endpoint and the series to keep, when named.
    pub fn metrics(&self, f: &ForeignSpec) -> Option<(String, Vec<String>)> {
        f.metrics
            .as_ref()
            .map(|m| (ForeignSpec::join(&self.base, m), f.series()))
    }
}

/// How a foreign target's readiness is checked.
pub fn health(f: &ForeignSpec) -> Health {
    match &f.health {
        Some(p) => Health::Path(p.clone()),
        None => Health::Answers(f.request.url.clone()),
    }
}

/// Start `spec`'s command (a `{port}` placeholder gets a free port) and
/// wait until it is healthy, or take the running service at its `url`.
pub fn start(
    spec: &RunSpec,
    f: &ForeignSpec,
    command: Option<&[String]>,
    opts: &StartOptions,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<Running, StartError> {
    if let Some(url) = &f.url {
        return Ok(Running {
            base: url.clone(),
            pid: f.pid,
            target: None,
        });
    }
    let argv = command.ok_or_else(|| StartError("a foreign target needs url or command".into()))?;
    let (argv, port) =
        super::custom::argv(argv, spec, &opts.backends).map_err(|e| StartError(e.to_string()))?;
    let cmd = TargetCommand {
        argv,
        port,
        cpus: opts.cpus.clone(),
        dir: None,
    };
    let target = Target::start_with_health(&cmd, health(f), timeout, cancel)?;
    Ok(Running {
        base: target.url.clone(),
        pid: Some(target.pid()),
        target: Some(target),
    })
}
