//! memcached through both clients, against the shared real server (IOLAB_MC).

mod support;

use std::sync::Arc;
use std::time::Duration;

use iolab_backends::mc::{self, mc_get_hits};
use iolab_backends::{BackendConfig, Backends};
use iolab_model::steps::BackendKind;

fn backends(pool: u32) -> Arc<Backends> {
    Arc::new(Backends::new(
        BackendConfig {
            addresses: iolab_backends::Addresses::default().with(
                iolab_model::steps::BackendKind::Mc,
                support::env("IOLAB_MC"),
            ),
            ..BackendConfig::default()
        }
        .with_pool(iolab_model::steps::BackendKind::Mc, pool),
    ))
}

#[test]
fn a_1mb_value_round_trips_through_both_clients() {
    let addr = support::env("IOLAB_MC");
    let value: Vec<u8> = (0..1_024_000).map(|i| (i % 251) as u8).collect();
    mc::set(&addr, "iolab-test-1mb", &value).unwrap();
    assert_eq!(
        mc::get(&addr, "iolab-test-1mb").unwrap().as_deref(),
        Some(&value[..])
    );
    let b = backends(1);
    let call = BackendKind::Mc.keyed_call("iolab-test-1mb").unwrap();
    b.call_blocking(&call).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(b.call_async(&call)).unwrap();
    assert_eq!(b.calls()[3].1, 2);
}

#[test]
fn a_4mb_value_is_read_whole() {
    let addr = support::env("IOLAB_MC");
    let value = vec![7u8; 4 << 20];
    mc::set(&addr, "iolab-test-4mb", &value).unwrap();
    assert_eq!(
        mc::get(&addr, "iolab-test-4mb").unwrap().map(|v| v.len()),
        Some(4 << 20)
    );
    backends(1)
        .call_blocking(&BackendKind::Mc.keyed_call("iolab-test-4mb").unwrap())
        .unwrap();
}

#[test]
fn a_missing_key_is_a_502_that_says_how_to_store_it() {
    let b = backends(1);
    let call = BackendKind::Mc
        .keyed_call("iolab-test-never-stored")
        .unwrap();
    let e = b.call_blocking(&call).unwrap_err();
    assert_eq!((e.status(), e.class()), (502, "backend_failed"));
    assert!(e.to_string().contains("not found"), "{e}");
    assert!(e.to_string().contains("mc-fill"), "{e}");
    // The connection stays usable after a miss.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let e = rt.block_on(b.call_async(&call)).unwrap_err();
    assert_eq!(e.status(), 502);
}

#[test]
fn many_callers_share_one_connection_and_get_hits_moves_by_n() {
    let addr = support::env("IOLAB_MC");
    mc::set(&addr, "iolab-test-small", b"hello").unwrap();
    let b = backends(1);
    let before = mc_get_hits(&addr).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move {
                    b.call_async(&BackendKind::Mc.keyed_call("iolab-test-small").unwrap())
                        .await
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap().unwrap();
        }
    });
    let threads: Vec<_> = (0..10)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || {
                b.call_blocking(&BackendKind::Mc.keyed_call("iolab-test-small").unwrap())
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    // Other tests in this binary may hit other keys at the same time.
    let moved = mc_get_hits(&addr).unwrap() - before;
    assert!(
        moved >= 60,
        "get_hits moved by {moved}, expected at least 60"
    );
}

#[test]
fn a_pool_timeout_applies_to_memcached_too() {
    // A server that accepts but never answers holds the only connection.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = Arc::new(Backends::new(
        BackendConfig {
            addresses: iolab_backends::Addresses::default().with(
                iolab_model::steps::BackendKind::Mc,
                silent.local_addr().unwrap().to_string(),
            ),
            ..BackendConfig::default()
        }
        .with_pool(iolab_model::steps::BackendKind::Mc, 1)
        .with_wait(
            iolab_model::steps::BackendKind::Mc,
            Duration::from_millis(100),
        ),
    ));
    let first = {
        let b = b.clone();
        std::thread::spawn(move || b.call_blocking(&BackendKind::Mc.keyed_call("k").unwrap()))
    };
    std::thread::sleep(Duration::from_millis(200));
    let e = b
        .call_blocking(&BackendKind::Mc.keyed_call("k").unwrap())
        .unwrap_err();
    assert_eq!(e.class(), "pool_timeout");
    drop(silent);
    drop(first); // the first call ends when its read times out; not waited for here
}
