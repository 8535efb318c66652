//! Faults against real servers: stop memcached / PostgreSQL in the middle of
//! use, calls fail with `backend_unavailable` (503), start the server again and
//! the SAME `Backends` succeeds again (no target restart).

mod support;

use std::time::Duration;

use iolab_backends::{mc, BackendConfig, Backends};
use iolab_model::steps::BackendKind;

fn assert_unavailable(r: Result<(), iolab_backends::BackendError>) {
    let e = r.expect_err("a call to a stopped server succeeded");
    assert_eq!((e.status(), e.class()), (503, "backend_unavailable"), "{e}");
}

#[test]
fn memcached_stopped_and_started_again() {
    let mut server = support::Memcached::start();
    let fill = |addr: &str| mc::set(addr, "test", &vec![b'x'; 100_000]).unwrap();
    fill(&server.addr());
    let b = Backends::new(
        BackendConfig {
            addresses: iolab_backends::Addresses::default()
                .with(iolab_model::steps::BackendKind::Mc, server.addr()),
            ..BackendConfig::default()
        }
        .with_pool(iolab_model::steps::BackendKind::Mc, 2),
    );
    let call = BackendKind::Mc.keyed_call("test").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    b.call_blocking(&call).unwrap();
    rt.block_on(b.call_async(&call)).unwrap();

    server.stop();
    for _ in 0..3 {
        assert_unavailable(b.call_blocking(&call));
        assert_unavailable(rt.block_on(b.call_async(&call)));
    }

    server.restart();
    fill(&server.addr()); // a restarted memcached is empty
    for _ in 0..3 {
        b.call_blocking(&call).unwrap();
        rt.block_on(b.call_async(&call)).unwrap();
    }
    assert_eq!(b.errors()[3].1, [0, 6, 0, 0]);
}

#[test]
fn postgres_stopped_and_started_again() {
    let mut server = support::Postgres::start();
    let b = Backends::new(
        BackendConfig {
            addresses: iolab_backends::Addresses::default()
                .with(iolab_model::steps::BackendKind::Pg, server.url()),
            ..BackendConfig::default()
        }
        .with_pool(iolab_model::steps::BackendKind::Pg, 3)
        .with_wait(iolab_model::steps::BackendKind::Pg, Duration::from_secs(5)),
    );
    let call = BackendKind::Pg.timed_call(1_000).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    b.call_blocking(&call).unwrap();
    rt.block_on(b.call_async(&call)).unwrap();

    // Stop it while a call is running: that call fails too.
    let long = std::thread::scope(|s| {
        let running = s.spawn(|| b.call_blocking(&BackendKind::Pg.timed_call(5_000_000).unwrap()));
        std::thread::sleep(Duration::from_millis(300));
        server.stop();
        running.join().unwrap()
    });
    assert_unavailable(long);
    for _ in 0..3 {
        assert_unavailable(b.call_blocking(&call));
        assert_unavailable(rt.block_on(b.call_async(&call)));
    }

    server.restart();
    for _ in 0..3 {
        b.call_blocking(&call).unwrap();
        rt.block_on(b.call_async(&call)).unwrap();
    }
}
