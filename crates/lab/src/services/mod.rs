//! The real backends an experiment needs, ready before its first run: the
//! Rust twin of `scripts/services up`, scoped to one `iolab run`.
//!
//! For each backend the plan's steps call ([`Needs`]): if its `IOLAB_*`
//! variable names one that answers, use it; otherwise start its
//! [`Service`] (each backend's own, `iolab_backends::<kind>::service`) for
//! the experiment. [`Services`] is the guard: dropping it (end of the
//! experiment, an error, Ctrl-C) stops what it started, and nothing else.
//! Targets get the addresses as `--pg/--mc/--http-backend` flags
//! ([`Addresses`]).

pub mod needs;

use iolab_backends::{backend, Service, Started};
use iolab_model::environment::ServiceInfo;
use iolab_model::steps::BackendKind;

pub use iolab_backends::Addresses;
pub use needs::Needs;

/// The service behind `kind`, if it is one the lab can start.
pub fn service(kind: BackendKind) -> Option<&'static dyn Service> {
    backend(kind).service()
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
    started: Vec<Box<dyn Started>>,
}

impl Services {
    /// What was used, for `environment.json`.
    pub fn info(&self) -> &[ServiceInfo] {
        &self.info
    }

    /// Process ids of the service processes started (memcached, postgres).
    pub fn pids(&self) -> Vec<u32> {
        self.started.iter().filter_map(|s| s.pid()).collect()
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
    // Decide first and find the programs, then start: a missing program
    // fails before anything runs.
    let mut plan = Vec::new();
    for kind in needs.kinds() {
        let Some(svc) = service(kind) else { continue };
        let reuse = given.get(kind).filter(|a| svc.answers(a));
        if let (None, Some(a)) = (reuse, given.get(kind)) {
            say(&format!(
                "services: {}={a} does not answer; starting one for this experiment",
                kind.def().env
            ));
        }
        let program = match reuse {
            Some(_) => None,
            None => svc
                .find()
                .map_err(|e| ServiceError::Missing(e.to_string()))?,
        };
        plan.push((kind, svc, reuse.map(str::to_string), program));
    }
    let mut s = Services::default();
    for (kind, svc, reuse, program) in plan {
        let (address, origin, version, mut notes) = match reuse {
            Some(a) => {
                say(&format!(
                    "services: {} {a} (from {})",
                    svc.label(),
                    kind.def().env
                ));
                let v = svc.version(&a);
                (a, "environment", v, Vec::new())
            }
            None => {
                let started = svc
                    .start(program.as_deref())
                    .map_err(|e| ServiceError::Failed(e.to_string()))?;
                let (a, v, n) = (started.address(), started.version(), started.notes());
                let about: Vec<&str> = v.iter().chain(n.first()).map(String::as_str).collect();
                say(&format!(
                    "services: started {} on {a} ({})",
                    svc.label(),
                    about.join(", ")
                ));
                s.started.push(started);
                (a, "started", v, n)
            }
        };
        let prepared = svc
            .prepare(&address, &needs.keys(kind))
            .map_err(|e| ServiceError::Failed(e.to_string()))?;
        for n in &prepared {
            say(&format!("services: {} {address}: {n}", svc.label()));
        }
        notes.splice(0..0, prepared);
        s.info.push(ServiceInfo {
            kind: kind.as_str().into(),
            address: address.clone(),
            origin: origin.into(),
            version,
            notes,
        });
        s.addresses.set(kind, Some(address));
    }
    // environment.json lists them by name.
    s.info.sort_by(|a, b| a.kind.cmp(&b.kind));
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_needed_starts_nothing() {
        let s = start(&Needs::default(), &Addresses::default(), &|_| {}).unwrap();
        assert!(s.info().is_empty() && s.pids().is_empty());
    }
}
