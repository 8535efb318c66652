//! E1 (actor master/worker, 100 CPU + 100 IO tasks) at scale 0.01: blocking
//! workers lose to timer workers at W = 4 and the gap closes as W grows;
//! shared-pool workers are capped by their pool of D threads.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use iolab_model::batch::{BatchResult, BatchSpec, MasterSpec, TaskMix, WorkerKind};
use iolab_model::{ModelKind, ModelParams};

static SERIAL: Mutex<()> = Mutex::new(());

fn e1(mix: TaskMix, workers: u32, worker: WorkerKind, shared_pool: Option<u32>) -> BatchResult {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = BatchSpec {
        tasks: mix.scaled(0.01),
        master: Some(MasterSpec {
            workers,
            worker,
            shared_pool,
        }),
        seed: 42,
        io_backend: Default::default(),
    };
    let r = iolab_batch::run(
        &spec,
        ModelKind::Pool,
        &ModelParams::default(),
        &AtomicBool::new(false),
    );
    assert_eq!(r.failed, 0, "{r:?}");
    assert!(r.failure.is_none(), "{r:?}");
    r
}

/// E1's mix with CPU series 20x shorter than at the same scale, so an
/// unoptimised test build (Leibniz ~50x slower than release) keeps E1's shape
/// (IO-heavy at few workers) instead of becoming all CPU.
fn e1_light_cpu() -> TaskMix {
    match TaskMix::e1() {
        TaskMix::Mixed {
            cpu,
            io,
            cpu_terms,
            io_ms,
        } => TaskMix::Mixed {
            cpu,
            io,
            cpu_terms: cpu_terms.iter().map(|t| t / 20).collect(),
            io_ms,
        },
        calls => calls,
    }
}

#[test]
fn blocking_loses_to_timer_at_4_workers_and_converges() {
    let b4 = e1(e1_light_cpu(), 4, WorkerKind::Blocking, None);
    let t4 = e1(e1_light_cpu(), 4, WorkerKind::Timer, None);
    let b24 = e1(e1_light_cpu(), 24, WorkerKind::Blocking, None);
    let t24 = e1(e1_light_cpu(), 24, WorkerKind::Timer, None);
    for r in [&b4, &t4, &b24, &t24] {
        assert_eq!(r.by_type["cpu"].count + r.by_type["io"].count, 200, "{r:?}");
    }
    // IO alone needs 100 x 60 ms / 4 = 1.5 s of blocked workers at W = 4.
    assert!(b4.total_s > 1.4, "{b4:?}");
    assert!(
        b4.total_s > 1.3 * t4.total_s,
        "blocking {} vs timer {}",
        b4.total_s,
        t4.total_s
    );
    let (gap4, gap24) = (b4.total_s / t4.total_s, b24.total_s / t24.total_s);
    assert!(gap24 < gap4, "gap at W=4 {gap4:.2}, at W=24 {gap24:.2}");
    // Blocking workers hold at most W IO tasks; timers hold far more.
    assert!(b4.counters["peak_io_in_service"] <= 4.0);
    assert!(t4.counters["peak_io_in_service"] > 4.0, "{t4:?}");
    assert_eq!(b4.params["workers"], 4);
    assert_eq!(t4.params["worker"], "timer");
}

#[test]
fn shared_pool_is_capped_by_its_pool() {
    // 40 IO tasks of 5 s, i.e. 50 ms each at scale 0.01.
    let io_only = TaskMix::Mixed {
        cpu: 0,
        io: 40,
        cpu_terms: vec![],
        io_ms: vec![5000.0],
    };
    let shared = e1(io_only.clone(), 8, WorkerKind::SharedPool, Some(2));
    let timer = e1(io_only, 8, WorkerKind::Timer, None);
    // 40 x 50 ms through 2 pool threads = 1 s, although Ready came at once.
    assert!(shared.total_s > 0.9, "{shared:?}");
    assert_eq!(shared.counters["peak_io_in_service"], 2.0, "{shared:?}");
    assert_eq!(shared.params["shared_pool"], 2);
    assert!(timer.total_s < 0.5 * shared.total_s, "{timer:?}");
    assert!(timer.counters["peak_io_in_service"] > 8.0, "{timer:?}");
}
