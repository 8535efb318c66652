//! Queueing formulas and a discrete-event simulation of every model: what a
//! run will do, said before running it (`iolab predict`), and shown beside the
//! measurement in reports.
//!
//! - [`closed_form`]: Little's law, capacity c/S, first-timeout time, batches.
//! - [`sim`]: the event simulation (one file per model's server behaviour).
//! - [`fit`]: the queueing model read from a measured capacity curve: the
//!   service as a network of resources, named by the one that binds
//!   ([`binding`]); [`whatif`]: what a change to one of them would buy;
//!   [`usl`]: the Universal Scalability Law fitted to a closed-loop sweep.
//! - [`predict_run`] / [`predict_plan`] / [`predict_batch`]: a [`Prediction`]
//!   per run, with a sentence that explains it from the numbers.
//! - [`predict_spans`]: who will hold what for a run's span sample.

pub mod batch;
pub mod binding;
pub mod calibration;
pub mod closed_form;
mod explain;
pub mod fit;
pub mod held;
pub mod sim;
pub mod spans;
pub mod usl;
pub mod whatif;

use iolab_model::concurrency::Host;
use iolab_model::driver::Driver;
use iolab_model::experiment::{ExperimentPlan, HttpWork, RunSpec, Work};
use iolab_model::predict::{PredictedLatency, Prediction};
use iolab_model::ModelKind;

pub use batch::predict_batch;
use iolab_model::runtime::RuntimeKnobs;
use sim::{simulate, Scheduler, Shape, SimInput, SimOutcome};
pub use spans::predict_spans;

/// Predict one run on `host` (a core count, or cores and the runtime's
/// interpreter lock); `None` when the run's model or work has no simulation.
pub fn predict_run(spec: &RunSpec, host: impl Into<Host>) -> Option<Prediction> {
    let host = host.into();
    let mut knobs = RuntimeKnobs::built_in(spec.model, &spec.params, host.cores);
    knobs.runtime = spec.runtime.clone();
    predict_run_with(spec, host, &knobs)
}

/// [`predict_run`] with the knobs as the run's runtime names and defaults
/// them (`spec.params` already holds those defaults), for its sentence.
pub fn predict_run_with(
    spec: &RunSpec,
    host: impl Into<Host>,
    knobs: &RuntimeKnobs,
) -> Option<Prediction> {
    let host = host.into();
    let mut p = match &spec.work {
        Work::Http(
            h @ HttpWork {
                held: Some(load), ..
            },
        ) => held::predict_held(spec.model, &spec.params, h, load, host),
        // Past the simulation's bound: no prediction, rather than a hang.
        Work::Http(h) if check_size(h).is_err() => return None,
        Work::Http(h) => predict_http_on(spec.model, &spec.params, h, host, knobs),
        Work::Batch(b) => predict_batch(b, spec.model, &spec.params, host),
    };
    p.name = spec.name.clone();
    Some(p)
}

/// Predict every run of a plan, in order.
pub fn predict_plan(plan: &ExperimentPlan, host: impl Into<Host>) -> Vec<Prediction> {
    let host = host.into();
    plan.runs
        .iter()
        .filter_map(|r| predict_run(r, host))
        .collect()
}

/// The most requests simulating `work` can take: an open loop's plan; a
/// closed loop's clients x duration over one request's unloaded time (its
/// `requests` bound if lower).
pub fn simulated_requests(work: &HttpWork) -> u64 {
    match &work.driver {
        Driver::Open { .. } => work.driver.planned().unwrap_or(0),
        Driver::Closed {
            concurrency,
            requests,
            duration,
        } => {
            let one = sim::program::Program::compile(&work.steps, true)
                .unloaded_ns()
                .max(1_000);
            let by_time = duration.map_or(u64::MAX, |d| {
                let each = d.as_nanos() / u128::from(one) + 1;
                u64::try_from(each.saturating_mul(u128::from(*concurrency))).unwrap_or(u64::MAX)
            });
            by_time.min(requests.unwrap_or(u64::MAX))
        }
    }
}

/// A run past what the simulation takes on: the requests it would simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the run would simulate about {:.1e} requests; predict simulates at most {} per run (shorten the duration, or lower the rate or clients)", *.0 as f64, iolab_model::limits::thousands(iolab_model::limits::MAX_SIMULATED_REQUESTS))]
pub struct TooLarge(pub u64);

/// One line when `work` is past what the simulation takes on
/// ([`MAX_SIMULATED_REQUESTS`](iolab_model::limits::MAX_SIMULATED_REQUESTS)).
pub fn check_size(work: &HttpWork) -> Result<(), TooLarge> {
    let n = simulated_requests(work);
    if n > iolab_model::limits::MAX_SIMULATED_REQUESTS {
        return Err(TooLarge(n));
    }
    Ok(())
}

/// Simulate one HTTP run on the built-in runtime and say what it means.
pub fn predict_http(
    model: ModelKind,
    params: &iolab_model::ModelParams,
    work: &HttpWork,
    host: impl Into<Host>,
) -> Prediction {
    let host = host.into();
    let knobs = RuntimeKnobs::built_in(model, params, host.cores);
    predict_http_on(model, params, work, host, &knobs)
}

/// [`predict_http`] as a runtime serves the model (its scheduler's order),
/// its knobs named as `knobs` names them.
pub fn predict_http_on(
    model: ModelKind,
    params: &iolab_model::ModelParams,
    work: &HttpWork,
    host: impl Into<Host>,
    knobs: &RuntimeKnobs,
) -> Prediction {
    let runtime = &knobs.runtime;
    let shape = model.shape(params, &host.into());
    let out = simulate(&SimInput {
        shape: &shape,
        steps: &work.steps,
        driver: &work.driver,
        connections: work.connections,
        timeout: work.timeout,
        pg_pool: params.pg_pool(),
        scheduler: Scheduler::of(model, params, runtime),
        noise: None,
    });
    prediction_from(&shape, work, &out, params.pg_pool(), knobs)
}

fn prediction_from(
    shape: &Shape,
    work: &HttpWork,
    out: &SimOutcome,
    pg_pool: u32,
    knobs: &RuntimeKnobs,
) -> Prediction {
    let bind = closed_form::binding(shape, out.unloaded_ns, out.work_ns, pg_pool);
    let capacity = bind.map(|b| b.rps());
    let service_s = out.unloaded_ns as f64 / 1e9;
    let first_timeout = match (work.driver.peak_rate(), capacity) {
        (Some(rate), Some(cap)) => {
            closed_form::first_timeout_s(rate, cap, service_s, work.timeout.as_secs_f64())
        }
        _ => None,
    };
    let q = |x: f64| out.latency.quantile(x) as f64 / 1e3;
    let mut p = Prediction {
        name: String::new(),
        model: shape.model.as_str().to_string(),
        offered: out.offered,
        ok: out.ok,
        success_ratio: if out.offered > 0 {
            out.ok as f64 / out.offered as f64
        } else {
            0.0
        },
        goodput_rps: out.goodput_rps(),
        throughput_rps: out.throughput_rps(),
        latency_ms: PredictedLatency {
            p50: q(0.5),
            p99: q(0.99),
        },
        peak_in_flight: out.peak_in_flight,
        peak_threads: Some(out.peak_threads),
        capacity_rps: capacity,
        first_timeout_s: first_timeout,
        explanation: String::new(),
        errors: out
            .errors
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        held: None,
        total_s: Some(out.window_s),
    };
    p.explanation = explain::http(shape, work, out, &p, knobs, bind);
    p
}
