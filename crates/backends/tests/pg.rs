//! PostgreSQL through both clients, against the shared real server (IOLAB_PG).
//! Tests here run one at a time (they share pg_stat_statements).

mod support;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use iolab_backends::{BackendConfig, Backends};
use iolab_model::steps::{BackendKind, IoCall};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn backends(pool: u32, wait: Duration) -> Arc<Backends> {
    Arc::new(Backends::new(
        BackendConfig {
            addresses: iolab_backends::Addresses::default().with(
                iolab_model::steps::BackendKind::Pg,
                support::env("IOLAB_PG"),
            ),
            ..BackendConfig::default()
        }
        .with_pool(iolab_model::steps::BackendKind::Pg, pool)
        .with_wait(iolab_model::steps::BackendKind::Pg, wait),
    ))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn pg_200() -> IoCall {
    BackendKind::Pg.timed_call(200_000).unwrap()
}

#[test]
fn blocking_pool_of_10_runs_20_calls_in_two_waves() {
    let _s = serial();
    let b = backends(10, Duration::from_secs(30));
    let t = Instant::now();
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || b.call_blocking(&pg_200()))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let took = t.elapsed();
    // Two waves of 200 ms; 20 at once would be ~200 ms, one at a time 4 s.
    assert!(
        took >= Duration::from_millis(390),
        "pool did not cap: {took:?}"
    );
    assert!(
        took < Duration::from_millis(2_000),
        "pool did not run in parallel: {took:?}"
    );
    assert_eq!(b.calls()[2].1, 20);
}

#[test]
fn async_pool_of_10_runs_20_calls_in_two_waves() {
    let _s = serial();
    let b = backends(10, Duration::from_secs(30));
    let rt = runtime();
    let t = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move { b.call_async(&pg_200()).await })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
    });
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(390),
        "pool did not cap: {took:?}"
    );
    assert!(
        took < Duration::from_millis(2_000),
        "pool did not run in parallel: {took:?}"
    );
}

#[test]
fn blocking_call_works_on_a_thread_inside_a_runtime() {
    // The loop-blocking model makes blocking calls on its event-loop thread.
    let _s = serial();
    let b = backends(1, Duration::from_secs(30));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = Instant::now();
    rt.block_on(async { b.call_blocking(&BackendKind::Pg.timed_call(50_000).unwrap()) })
        .unwrap();
    assert!(t.elapsed() >= Duration::from_millis(50));
}

#[test]
fn a_full_pool_times_out_with_a_503_pool_timeout() {
    let _s = serial();
    let b = backends(1, Duration::from_millis(100));
    // Connect first, so the timing below is only about the pool.
    b.call_blocking(&BackendKind::Pg.timed_call(1_000).unwrap())
        .unwrap();
    let results: Vec<_> = (0..2)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || {
                b.call_blocking(&BackendKind::Pg.timed_call(500_000).unwrap())
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "{results:?}");
    assert_eq!(
        (errors[0].status(), errors[0].class()),
        (503, "pool_timeout")
    );
    assert_eq!(b.errors()[2].1, [0, 0, 1, 0]);
}

#[test]
fn a_full_async_pool_times_out_with_a_503_pool_timeout() {
    let _s = serial();
    let b = backends(1, Duration::from_millis(100));
    let (r1, r2) = runtime().block_on(async {
        b.call_async(&BackendKind::Pg.timed_call(1_000).unwrap())
            .await
            .unwrap();
        let call = BackendKind::Pg.timed_call(500_000).unwrap();
        tokio::join!(b.call_async(&call), b.call_async(&call))
    });
    let errors: Vec<_> = [&r1, &r2]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
        .collect();
    assert_eq!(errors.len(), 1, "{r1:?} {r2:?}");
    assert_eq!(errors[0].class(), "pool_timeout");
}

#[test]
fn pg_stat_statements_counts_every_call() {
    let _s = serial();
    let url = support::env("IOLAB_PG");
    let b = backends(4, Duration::from_secs(30));
    let before = iolab_backends::pg::sleep_calls(&url).unwrap();
    for _ in 0..5 {
        b.call_blocking(&BackendKind::Pg.timed_call(1_000).unwrap())
            .unwrap();
    }
    runtime().block_on(async {
        for _ in 0..4 {
            b.call_async(&BackendKind::Pg.timed_call(1_000).unwrap())
                .await
                .unwrap();
        }
    });
    let after = iolab_backends::pg::sleep_calls(&url).unwrap();
    assert_eq!(after - before, 9);
}
