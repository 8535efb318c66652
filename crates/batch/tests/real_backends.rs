//! IO tasks on real backends (E3's calls as `pg_sleep` and as calls to the
//! HTTP delay service), against the shared services `scripts/services up`
//! exports. The point: a pool of 10 PostgreSQL connections caps every
//! executor, the non-blocking one included, which the timer version hides.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use iolab_backends::{BackendConfig, Backends};
use iolab_batch::io::Io;
use iolab_model::batch::{BatchResult, BatchSpec, TaskMix};
use iolab_model::steps::BackendKind;
use iolab_model::{ModelKind, ModelParams};

static SERIAL: Mutex<()> = Mutex::new(());

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: run the tests with scripts/test, or first \
             eval \"$(scripts/services up)\" to start the real services"
        )
    })
}

fn io(kind: BackendKind, pg_pool: u32) -> Io {
    let config = BackendConfig {
        addresses: iolab_backends::Addresses::default()
            .with(BackendKind::Pg, env("IOLAB_PG"))
            .with(BackendKind::Http, env("IOLAB_HTTP_BACKEND")),
        ..BackendConfig::default()
    }
    .with_pool(iolab_model::steps::BackendKind::Pg, pg_pool);
    Io::new(kind, Arc::new(Backends::new(config))).unwrap()
}

fn calls(n: u64, ms: f64, model: ModelKind, params: ModelParams, io: &Io) -> BatchResult {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = BatchSpec {
        tasks: TaskMix::Calls { n, ms },
        master: None,
        seed: 1,
        io_backend: io.kind(),
    };
    iolab_batch::run_with_io(&spec, model, &params, io, &AtomicBool::new(false))
}

#[test]
fn pg_pool_of_10_caps_the_non_blocking_executor_too() {
    let url = env("IOLAB_PG");
    let before = iolab_backends::pg::sleep_calls(&url).unwrap();
    let pg = io(BackendKind::Pg, 10);
    // 40 calls of 100 ms: timers would take ~0.1 s; ten connections take 4 rounds.
    let r = calls(40, 100.0, ModelKind::LoopAsync, ModelParams::default(), &pg);
    assert_eq!((r.tasks, r.failed), (40, 0), "{r:?}");
    assert!((0.38..2.0).contains(&r.total_s), "{r:?}");
    assert_eq!(r.params["io"], "pg");
    assert_eq!(r.by_type["io"].count, 40);
    // PostgreSQL itself counted the calls (at least ours; other tests share it).
    let after = iolab_backends::pg::sleep_calls(&url).unwrap();
    assert!(
        after - before >= 40,
        "pg_stat_statements moved {}",
        after - before
    );

    // The same 40 on a pool of 8 threads: still capped near 10 at a time, by threads now.
    let params = ModelParams {
        threads: Some(8),
        ..Default::default()
    };
    let r = calls(40, 100.0, ModelKind::Pool, params, &pg);
    assert_eq!(r.failed, 0, "{r:?}");
    assert!((0.48..2.5).contains(&r.total_s), "{r:?}");
}

#[test]
fn http_delay_calls_overlap_on_an_event_loop_and_queue_on_a_small_pool() {
    let http = io(BackendKind::Http, 10);
    let r = calls(
        50,
        200.0,
        ModelKind::LoopAsync,
        ModelParams::default(),
        &http,
    );
    assert_eq!((r.tasks, r.failed), (50, 0), "{r:?}");
    assert!((0.19..1.0).contains(&r.total_s), "{r:?}");
    let params = ModelParams {
        threads: Some(5),
        ..Default::default()
    };
    let r = calls(20, 100.0, ModelKind::Pool, params, &http);
    assert_eq!(r.failed, 0, "{r:?}");
    // ceil(20 / 5) = 4 rounds of 100 ms.
    assert!((0.38..1.6).contains(&r.total_s), "{r:?}");
}

#[test]
fn a_dead_backend_fails_the_tasks_and_says_why() {
    let config = BackendConfig {
        // A port nothing listens on (reserved by binding, then released).
        addresses: iolab_backends::Addresses::default().with(
            BackendKind::Http,
            format!("http://127.0.0.1:{}", free_port()),
        ),
        ..BackendConfig::default()
    };
    let dead = Io::new(BackendKind::Http, Arc::new(Backends::new(config))).unwrap();
    let r = calls(6, 10.0, ModelKind::Pool, ModelParams::default(), &dead);
    assert_eq!((r.tasks, r.failed), (6, 6), "{r:?}");
    let why = r.failure.as_deref().unwrap_or_default();
    assert!(
        why.contains("6 of 6 tasks failed") && why.contains("http"),
        "{why}"
    );
}

#[test]
fn a_backend_without_an_address_is_refused_up_front() {
    let e = Io::new(BackendKind::Pg, Arc::new(Backends::sleep_only()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("--pg URL") && e.contains("IOLAB_PG"), "{e}");
    let e = Io::new(BackendKind::Mc, Arc::new(Backends::sleep_only()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("sleep, http, pg"), "{e}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
