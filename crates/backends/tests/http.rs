//! The HTTP delay service and both its clients.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_backends::delay::DelayService;
use iolab_backends::{http::delay_hits, BackendConfig, Backends};
use iolab_model::steps::BackendKind;

fn backends(url: String) -> Arc<Backends> {
    Arc::new(Backends::new(BackendConfig {
        addresses: iolab_backends::Addresses::default()
            .with(iolab_model::steps::BackendKind::Http, url),
        ..BackendConfig::default()
    }))
}

#[test]
fn the_shared_delay_service_answers_both_clients_after_the_delay() {
    let b = backends(support::env("IOLAB_HTTP_BACKEND"));
    let call = BackendKind::Http.timed_call(100_000).unwrap();
    let t = Instant::now();
    b.call_blocking(&call).unwrap();
    assert!(t.elapsed() >= Duration::from_millis(100));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = Instant::now();
    rt.block_on(b.call_async(&call)).unwrap();
    assert!(t.elapsed() >= Duration::from_millis(100));
}

#[test]
fn a_hundred_concurrent_delays_overlap_and_are_counted() {
    let svc = DelayService::start("127.0.0.1:0".parse().unwrap()).unwrap();
    let b = backends(svc.url().to_string());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..100)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move {
                    b.call_async(&BackendKind::Http.timed_call(200_000).unwrap())
                        .await
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
    });
    // Serially this would take 20 s.
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    let threads: Vec<_> = (0..20)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || {
                b.call_blocking(&BackendKind::Http.timed_call(10_000).unwrap())
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap().unwrap();
    }
    assert_eq!(svc.hits(), 120);
    assert_eq!(delay_hits(svc.url()).unwrap(), 120);
}

#[test]
fn the_delay_service_going_away_is_a_503_and_its_return_is_noticed() {
    let svc = DelayService::start("127.0.0.1:0".parse().unwrap()).unwrap();
    let url = svc.url().to_string();
    let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let b = backends(url);
    let call = BackendKind::Http.timed_call(1_000).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    b.call_blocking(&call).unwrap();
    rt.block_on(b.call_async(&call)).unwrap();
    drop(svc);
    let e = b.call_blocking(&call).unwrap_err();
    assert_eq!((e.status(), e.class()), (503, "backend_unavailable"), "{e}");
    let e = rt.block_on(b.call_async(&call)).unwrap_err();
    assert_eq!(e.class(), "backend_unavailable", "{e}");
    let _back = DelayService::start(addr).unwrap();
    b.call_blocking(&call).unwrap();
    rt.block_on(b.call_async(&call)).unwrap();
}
