//! Predicted timelines: who will hold what for the same sample a run records
//! (its spec's `spans = N`), so the report can set the prediction beside the
//! measurement. A served run is simulated ([`sim::simulate_spans`]); a batch
//! of calls is laid out in closed form (call i runs in wave i / P on thread
//! i mod P); E1's master/worker has no predicted timeline.

use iolab_model::batch::{BatchSpec, TaskMix};
use iolab_model::concurrency::Host;
use iolab_model::experiment::{RunSpec, Work};
use iolab_model::spans::{
    ms, Lane, SampleRule, Span, SpanRequest, SpanSource, SpanState, Timeline,
};
use iolab_model::steps::BackendKind;
use iolab_model::{ModelKind, ModelParams};

use crate::sim::{self, SimInput};

/// The predicted timeline of `spec`'s sample on `host`; `None` when the run
/// records no spans or its work has no predicted timeline.
pub fn predict_spans(spec: &RunSpec, host: impl Into<Host>) -> Option<Timeline> {
    let size = spec.spans?;
    let host = host.into();
    match &spec.work {
        Work::Http(w) => {
            let shape = spec.model.shape(&spec.params, &host);
            Some(sim::simulate_spans(
                &SimInput {
                    shape: &shape,
                    steps: &w.steps,
                    driver: &w.driver,
                    connections: w.connections,
                    timeout: w.timeout,
                    pg_pool: spec.params.pg_pool(),
                    scheduler: sim::Scheduler::of(spec.model, &spec.params, &spec.runtime),
                    noise: None,
                },
                size,
            ))
        }
        Work::Batch(b) => batch_calls(b, spec.model, &spec.params, host, size),
    }
}

/// E3's picture in closed form: `n` calls of `ms`, `P` at a time.
fn batch_calls(
    spec: &BatchSpec,
    model: ModelKind,
    params: &ModelParams,
    host: Host,
    size: u32,
) -> Option<Timeline> {
    let (TaskMix::Calls { n, ms: call_ms }, None) = (&spec.tasks, &spec.master) else {
        return None;
    };
    let mut p = model.shape(params, &host).parallelism();
    if spec.io_backend == BackendKind::Pg {
        p = p.min(u64::from(params.pg_pool()));
    }
    let p = p.clamp(1, (*n).max(1));
    let s_ns = (call_ms * 1e6).round() as u64;
    let held = model.blocks_threads();
    let mut t = Timeline::new(SpanSource::Simulation, size, SampleRule::First);
    let sampled = (*n).min(u64::from(size));
    let lanes = if held { p.min(sampled) } else { 0 };
    let name = match model {
        ModelKind::Pool => "pool",
        ModelKind::ThreadPerRequest => "request",
        _ => "thread",
    };
    t.lanes = (0..lanes as u32)
        .map(|id| Lane {
            id,
            name: name.to_string(),
        })
        .collect();
    for i in 0..sampled {
        let (wave, req) = (i / p, i as u32);
        let (from, to) = (wave * s_ns, (wave + 1) * s_ns);
        if from > 0 {
            t.spans.push(span(req, SpanState::Queued, None, 0, from));
        }
        let (state, lane) = if held {
            (SpanState::IoHeld, Some((i % p) as u32))
        } else {
            (SpanState::IoFree, None)
        };
        t.spans.push(span(req, state, lane, from, to));
        t.requests.push(SpanRequest {
            req,
            accepted_ms: 0.0,
            done_ms: Some(ms(to)),
            status: None,
        });
    }
    t.sample.taken = sampled as u32;
    t.sort();
    Some(t)
}

fn span(req: u32, state: SpanState, lane: Option<u32>, from: u64, to: u64) -> Span {
    Span {
        req,
        state,
        lane,
        from_ms: ms(from),
        to_ms: ms(to),
    }
}
