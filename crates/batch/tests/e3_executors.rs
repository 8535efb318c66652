//! E3 (futures over a blocking service) at S = 100 ms: each executor's total
//! time follows its capacity. Margins are generous (the machine is shared);
//! tests run one at a time because they measure process-wide peaks.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use iolab_model::batch::{BatchResult, BatchSpec, TaskMix};
use iolab_model::{ModelKind, ModelParams};

static SERIAL: Mutex<()> = Mutex::new(());

fn calls(n: u64, model: ModelKind, params: ModelParams) -> BatchResult {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = BatchSpec {
        tasks: TaskMix::Calls { n, ms: 100.0 },
        master: None,
        seed: 1,
        io_backend: Default::default(),
    };
    let r = iolab_batch::run(&spec, model, &params, &AtomicBool::new(false));
    assert_eq!(r.tasks, n, "{r:?}");
    r
}

fn io_done(r: &BatchResult) -> u64 {
    r.by_type.get("io").map_or(0, |s| s.count)
}

fn in_service(r: &BatchResult) -> f64 {
    r.counters["peak_io_in_service"]
}

#[test]
fn sequential_takes_n_times_s() {
    let r = calls(20, ModelKind::Sequential, ModelParams::default());
    assert!((1.95..4.0).contains(&r.total_s), "{r:?}");
    assert_eq!((io_done(&r), r.failed), (20, 0));
    assert_eq!(in_service(&r), 1.0);
    // The last call waited for the 19 before it.
    let io = &r.by_type["io"];
    assert!(
        io.wait_p99_ms >= 1800.0 && io.service_mean_ms >= 99.0,
        "{io:?}"
    );
    assert!(r.failure.is_none());
}

#[test]
fn fixed_pool_of_8_takes_ceil_n_over_8_times_s() {
    let params = ModelParams {
        threads: Some(8),
        ..Default::default()
    };
    let r = calls(20, ModelKind::Pool, params);
    // ceil(20 / 8) = 3 rounds of 100 ms.
    assert!((0.29..0.6).contains(&r.total_s), "{r:?}");
    assert_eq!(in_service(&r), 8.0, "{r:?}");
    assert_eq!(r.params["threads"], 8);
    assert!(r.peak_threads >= 8, "{r:?}");
}

#[test]
fn thread_per_request_takes_about_s_for_100_calls() {
    let r = calls(100, ModelKind::ThreadPerRequest, ModelParams::default());
    assert!((0.099..0.35).contains(&r.total_s), "{r:?}");
    assert_eq!((io_done(&r), r.failed), (100, 0));
    assert_eq!(r.counters["threads_spawned"], 100.0);
    assert!(r.peak_threads >= 100, "{r:?}");
    assert!(r.counters["spawn_us_mean"] > 0.0);
}

#[test]
fn thread_per_request_with_a_cap_waits_and_records_the_cap() {
    let params = ModelParams {
        max_threads: Some(10),
        ..Default::default()
    };
    let r = calls(30, ModelKind::ThreadPerRequest, params);
    // 30 calls through at most 10 threads: 3 rounds.
    assert!((0.29..0.7).contains(&r.total_s), "{r:?}");
    assert_eq!(r.params["max_threads"], 10);
    assert_eq!(r.counters["peak_alive_threads"], 10.0);
    assert!(r.counters["cap_waits"] >= 1.0, "{r:?}");
    assert!(in_service(&r) <= 10.0);
}

#[test]
fn loop_async_takes_about_s_for_100_calls_on_two_threads() {
    let params = ModelParams {
        workers: Some(2),
        ..Default::default()
    };
    let r = calls(100, ModelKind::LoopAsync, params);
    assert!((0.099..0.35).contains(&r.total_s), "{r:?}");
    assert_eq!(in_service(&r), 100.0);
    // Two loop threads hold 100 waits: no thread per call.
    assert!(r.peak_threads < 20, "{r:?}");
}

#[test]
fn loop_blocking_is_capped_by_its_loop_threads() {
    let params = ModelParams {
        workers: Some(2),
        ..Default::default()
    };
    let r = calls(10, ModelKind::LoopBlocking, params);
    // 10 calls, 2 at a time.
    assert!((0.49..1.0).contains(&r.total_s), "{r:?}");
    assert!(in_service(&r) <= 2.0, "{r:?}");
}

#[test]
fn loop_offload_is_capped_by_its_pool() {
    let params = ModelParams {
        workers: Some(1),
        offload: Some(5),
        ..Default::default()
    };
    let r = calls(20, ModelKind::LoopOffload, params);
    assert!((0.39..0.8).contains(&r.total_s), "{r:?}");
    assert_eq!(in_service(&r), 5.0, "{r:?}");
    assert_eq!(r.params["offload"], 5);
}

#[test]
fn cancelled_batches_skip_and_say_so() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = BatchSpec {
        tasks: TaskMix::Calls { n: 50, ms: 100.0 },
        master: None,
        seed: 1,
        io_backend: Default::default(),
    };
    for model in ModelKind::built_in() {
        let r = iolab_batch::run(
            &spec,
            model,
            &ModelParams::default(),
            &AtomicBool::new(true),
        );
        assert!(r.total_s < 1.0, "{model}: {r:?}");
        assert_eq!(r.counters["skipped"], 50.0, "{model}: {r:?}");
        assert!(
            r.failure.as_deref().unwrap_or("").contains("cancelled"),
            "{model}: {r:?}"
        );
    }
}

#[test]
fn virtual_is_refused_as_data() {
    let r = calls(5, ModelKind::Virtual, ModelParams::default());
    assert_eq!(r.failed, 5);
    assert!(r.failure.unwrap().contains("not built in"));
}
