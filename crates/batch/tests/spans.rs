//! `--spans N` on the batch executors: E3's pictures from real runs (20
//! calls of 20 ms): a pool of 4 runs them in waves on 4 lanes while the rest
//! queue; thread-per-request gives each call a lane; the timer holds none.

use std::sync::atomic::AtomicBool;

use iolab_batch::io::Io;
use iolab_model::batch::{BatchSpec, TaskMix};
use iolab_model::spans::{SpanSource, SpanState, Timeline};
use iolab_model::{ModelKind, ModelParams};

fn traced(model: ModelKind, params: ModelParams, spans: u32) -> Timeline {
    let spec = BatchSpec {
        tasks: TaskMix::Calls { n: 20, ms: 20.0 },
        master: None,
        seed: 1,
        io_backend: Default::default(),
    };
    let io = Io::sleep();
    let r = iolab_batch::run_traced(
        &spec,
        model,
        &params,
        &io,
        Some(spans),
        &AtomicBool::new(false),
    );
    assert_eq!((r.tasks, r.failed), (20, 0), "{r:?}");
    r.spans.expect("spans were asked for")
}

fn of(t: &Timeline, state: SpanState) -> Vec<&iolab_model::spans::Span> {
    t.spans.iter().filter(|s| s.state == state).collect()
}

#[test]
fn a_pool_of_four_runs_the_calls_in_waves() {
    let params = ModelParams {
        threads: Some(4),
        ..Default::default()
    };
    let t = traced(ModelKind::Pool, params, 20);
    assert_eq!(t.source, SpanSource::Batch);
    assert_eq!((t.sample.size, t.sample.taken, t.sample.lost), (20, 20, 0));
    assert_eq!(t.lanes.len(), 4, "{t:#?}");
    assert_eq!(of(&t, SpanState::IoHeld).len(), 20);
    // The 16 that did not start at once queued, the last ones about 4 waves.
    let queued = of(&t, SpanState::Queued);
    assert!(queued.len() >= 15, "{t:#?}");
    let longest = queued.iter().map(|s| s.to_ms).fold(0.0, f64::max);
    assert!(longest >= 4.0 * 19.0, "{t:#?}");
    // Each lane ran its calls one after another.
    for lane in 0..4 {
        let mut on: Vec<_> = t.spans.iter().filter(|s| s.lane == Some(lane)).collect();
        on.sort_by(|a, b| a.from_ms.total_cmp(&b.from_ms));
        assert!(
            on.windows(2).all(|w| w[0].to_ms <= w[1].from_ms + 0.01),
            "{on:#?}"
        );
    }
}

#[test]
fn a_thread_per_call_and_a_timer_that_holds_none() {
    let t = traced(ModelKind::ThreadPerRequest, ModelParams::default(), 20);
    assert_eq!(t.lanes.len(), 20, "{t:#?}");
    assert_eq!(of(&t, SpanState::IoHeld).len(), 20);
    let t = traced(ModelKind::LoopAsync, ModelParams::default(), 10);
    assert!(t.lanes.is_empty(), "{t:#?}");
    let free = of(&t, SpanState::IoFree);
    assert_eq!((free.len(), t.sample.taken), (10, 10), "only tasks 0..10");
    assert!(
        free.iter().all(|s| s.to_ms - s.from_ms >= 19.0),
        "{free:#?}"
    );
    assert_eq!(t.requests.len(), 10);
}
