//! Starting a searched target: a foreign one (its URL, or its command) with
//! its own request, else a built-in one sent `/work` with the run's steps,
//! and what its search watches (its PID, its Prometheus series).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iolab_model::experiment::{HttpWork, RunSpec};
use iolab_model::request::RequestSet;

use iolab_lab::targets::{foreign, Launch, StartOptions, Target};

/// Longest a target may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A target started for its search: what to send it, what to watch.
pub(super) struct Started {
    /// The URL attacked (the first request's).
    pub(super) url: String,
    /// A foreign target's own requests (empty for a built-in one).
    pub(super) request: RequestSet,
    /// A built-in target's base URL.
    pub(super) work_base: Option<String>,
    pub(super) pid: Option<u32>,
    /// Its Prometheus endpoint and the series to keep.
    pub(super) metrics: Option<(String, Vec<String>)>,
    /// The process iolab started, stopped after the search.
    pub(super) target: Option<Target>,
    /// Said in the search's record.
    pub(super) notes: Vec<String>,
}

/// Why a search's target did not start.
#[derive(Debug, thiserror::Error)]
pub(super) enum StartFault {
    /// Its runtime, model, knobs or command cannot be used.
    #[error(transparent)]
    Launch(#[from] iolab_lab::targets::TargetError),
    /// The target (its process, or a foreign service) did not start (its
    /// name first).
    #[error("{name}: {why}")]
    Start {
        /// The run.
        name: String,
        /// Why.
        why: iolab_lab::targets::StartError,
    },
}

/// Start a run's target: a foreign one (its URL, or its command) with its
/// own request, else a built-in one sent `/work` with the run's steps.
pub(super) fn start(
    spec: &RunSpec,
    w: &HttpWork,
    exe: &Path,
    opts: &StartOptions,
    cancel: &AtomicBool,
) -> Result<Started, StartFault> {
    if let Some(f) = &w.foreign {
        let r = foreign::start(spec, f, w.command.as_deref(), opts, START_TIMEOUT, cancel)
            .map_err(|why| StartFault::Start {
                name: spec.name.clone(),
                why,
            })?;
        return Ok(Started {
            url: r.url(f),
            request: r.requests(f),
            work_base: None,
            pid: r.pid,
            metrics: r.metrics(f),
            notes: vec![foreign::CONTRACT_SKIPPED.to_string()],
            target: r.target,
        });
    }
    let launch = Launch::of(spec)?;
    let cmd = launch.command(spec, opts, exe)?;
    let t = Target::start(&cmd, launch.start_timeout(START_TIMEOUT), cancel).map_err(|why| {
        StartFault::Start {
            name: spec.name.clone(),
            why,
        }
    })?;
    // iolab's own gauges, from the metrics listener when it has one.
    let metrics_base = t.metrics_url.clone().unwrap_or_else(|| t.url.clone());
    Ok(Started {
        url: w.body.work_url(&t.url, &w.steps),
        request: RequestSet::default(),
        work_base: Some(t.url.clone()),
        pid: Some(t.pid()),
        metrics: Some((
            format!("{metrics_base}/metrics"),
            vec![
                "iolab_requests_in_flight".to_string(),
                "iolab_requests_queued".to_string(),
            ],
        )),
        target: Some(t),
        notes: Vec::new(),
    })
}
