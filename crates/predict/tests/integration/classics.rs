//! The published classics, compared (not tuned): E2's 200-OK counts and E3's
//! batch times (REFERENCE.md). Run with `--nocapture` to see the numbers.

use crate::common;

use common::*;
use iolab_model::batch::{BatchSpec, TaskMix};
use iolab_model::{ModelKind, ModelParams};
use iolab_predict::predict_batch;

fn e2(model: ModelKind, params: ModelParams) -> iolab_model::predict::Prediction {
    // artillery: 450 arrivals/s for 60 s, a new connection each, 10 s timeout
    let w = work("sleep:1000", open(450.0, 60.0), FRESH, 10.0);
    let p = predict(model, &params, &w, 2);
    println!(
        "E2 {:<14} ok {:>6} of {} ({:?}); {}",
        p.model, p.ok, p.offered, p.errors, p.explanation
    );
    p
}

#[test]
fn e2_tomcat_200_threads_sleeping_a_second() {
    let p = e2(ModelKind::Pool, ModelParams::default());
    assert_eq!(p.offered, 27_000);
    // published: 3,400 ok (17,293 timed out, 5,965 reset)
    assert!((2_000..=5_000).contains(&p.ok), "predicted {} ok", p.ok);
    assert!(
        p.errors.get("reset").copied().unwrap_or(0) > 1_000,
        "{:?}",
        p.errors
    );
    assert!(near(p.throughput_rps, 200.0, 0.05), "{}", p.throughput_rps);
    assert!(near(p.first_timeout_s.unwrap(), 7.2, 1e-9));
}

#[test]
fn e2_the_other_servers() {
    // WebFlux, sleep on the loop: max(cores, 4) = 4 loop threads (published 76 ok)
    let on_loop = e2(
        ModelKind::LoopBlocking,
        ModelParams {
            workers: Some(4),
            ..Default::default()
        },
    );
    assert!(on_loop.ok < 300, "{}", on_loop.ok);
    // withContext(Dispatchers.IO): 64 threads (published 792 ok, ports ran out)
    let io = e2(
        ModelKind::LoopOffload,
        ModelParams {
            offload: Some(64),
            ..Default::default()
        },
    );
    assert!((300..=2_000).contains(&io.ok), "{}", io.ok);
    // delay(): nothing held (published 27,000 ok, p50 1,002 ms)
    let delay = e2(ModelKind::LoopAsync, ModelParams::default());
    assert_eq!(delay.ok, 27_000);
    assert!(near(delay.latency_ms.p50, 1_000.0, 0.01));
    // MVC with no IO: 27,000
    let w = work("cpu:1000", open(450.0, 60.0), FRESH, 10.0);
    assert_eq!(
        predict(ModelKind::Pool, &ModelParams::default(), &w, 2).ok,
        27_000
    );
}

#[test]
fn e3_hundred_calls_of_a_second() {
    let spec = BatchSpec {
        tasks: TaskMix::Calls { n: 100, ms: 1000.0 },
        master: None,
        seed: 1,
        io_backend: Default::default(),
    };
    let cases = [
        (
            ModelKind::Sequential,
            ModelParams::default(),
            100.0,
            100.122,
        ),
        (ModelKind::Pool, pool(8), 13.0, 13.057),
        (ModelKind::Pool, pool(16), 7.0, 7.057),
        (
            ModelKind::ThreadPerRequest,
            ModelParams {
                max_threads: Some(2 + 256),
                ..Default::default()
            },
            1.0,
            1.069,
        ),
        (ModelKind::LoopAsync, ModelParams::default(), 1.0, 1.044),
    ];
    for (model, params, want, published) in cases {
        let p = predict_batch(&spec, model, &params, 2);
        let t = p.total_s.unwrap();
        println!(
            "E3 {:<20} {:>6.1} s (published {published} s): {}",
            model.as_str(),
            t,
            p.explanation
        );
        assert_eq!(t, want, "{model}");
        assert!((t - published).abs() / published < 0.1);
        assert_eq!(p.ok, 100);
    }
}

#[test]
fn e3_on_postgres_is_capped_by_the_connection_pool() {
    let spec = BatchSpec {
        tasks: TaskMix::Calls { n: 100, ms: 1000.0 },
        master: None,
        seed: 1,
        io_backend: iolab_model::steps::BackendKind::Pg,
    };
    let with_pool = |pg_pool| ModelParams {
        pg_pool,
        ..Default::default()
    };
    // Ten connections (HikariCP's default): ten waves, timers or not.
    let p = predict_batch(&spec, ModelKind::LoopAsync, &with_pool(None), 2);
    assert_eq!(p.total_s, Some(10.0));
    assert!(
        p.explanation.contains("PostgreSQL connection"),
        "{}",
        p.explanation
    );
    // A pool of 8 threads is the tighter cap when there are 16 connections.
    let params = ModelParams {
        threads: Some(8),
        pg_pool: Some(16),
        ..Default::default()
    };
    assert_eq!(
        predict_batch(&spec, ModelKind::Pool, &params, 2).total_s,
        Some(13.0)
    );
    assert_eq!(
        predict_batch(&spec, ModelKind::LoopAsync, &with_pool(Some(100)), 2).total_s,
        Some(1.0)
    );
}

#[test]
fn e1_master_worker_totals() {
    use iolab_model::batch::{MasterSpec, WorkerKind};
    let mix = TaskMix::Mixed {
        cpu: 100,
        io: 100,
        cpu_terms: vec![
            308836549, 433275937, 505880809, 281779493, 346726528, 367281330, 497563398, 465600232,
            526508662, 662777539,
        ],
        io_ms: vec![5000.0, 5500.0, 6000.0, 6500.0, 7000.0],
    };
    let spec = |workers, worker, shared_pool| BatchSpec {
        tasks: mix.clone(),
        master: Some(MasterSpec {
            workers,
            worker,
            shared_pool,
        }),
        seed: 1,
        io_backend: Default::default(),
    };
    let cpu_s = 100.0 * 439.62e6 * iolab_predict::calibration::NS_PER_TERM / 1e9;
    let blocking = predict_batch(
        &spec(4, WorkerKind::Blocking, None),
        ModelKind::Pool,
        &ModelParams::default(),
        8,
    );
    let t = blocking.total_s.unwrap();
    println!("E1 W=4 blocking {t:.1} s: {}", blocking.explanation);
    assert!(near(t, (600.0 + cpu_s) / 4.0, 0.01), "{t}");
    let shared = predict_batch(
        &spec(4, WorkerKind::SharedPool, Some(24)),
        ModelKind::Pool,
        &ModelParams::default(),
        8,
    );
    let t2 = shared.total_s.unwrap();
    println!("E1 W=4 shared pool {t2:.1} s: {}", shared.explanation);
    assert!(t2 < t);
    let timer = predict_batch(
        &spec(22, WorkerKind::Timer, None),
        ModelKind::Pool,
        &ModelParams::default(),
        8,
    );
    assert!(near(timer.total_s.unwrap(), (cpu_s / 8.0).max(7.0), 0.01));
}
