//! A replayed mix's per-endpoint books, against a real server on both
//! engines: every request counted under its endpoint (the counts add up
//! to the run's and follow the recorded shares exactly under a constant
//! arrival), each with a latency histogram that decodes; a plan whose mix
//! does not match its list is refused before any load.

mod common;

use common::{echo, open, run};
use iolab_loadgen::replay::{self, Options};
use iolab_model::attack::Engine;
use iolab_model::replay::ReplayMix;
use iolab_model::request::RequestSet;

/// A plan replaying a log of three GETs of orders to one of health, to `server`.
fn plan(server: &echo::Echo, engine: Engine) -> iolab_model::attack::AttackPlan {
    let dir = tempfile::tempdir().unwrap();
    let line = |path: &str| {
        format!("127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] \"GET {path} HTTP/1.1\" 200 2 \"-\" \"curl/8\" 0.002\n")
    };
    let log: String = ["/orders/1", "/orders/2", "/health", "/orders/3"]
        .iter()
        .map(|p| line(p))
        .collect();
    std::fs::write(dir.path().join("a.log"), log).unwrap();
    let loaded = replay::load(&dir.path().join("a.log"), &Options::default()).unwrap();
    let (mut list, of) = loaded.mix.weighted(4);
    for t in &mut list {
        t.url = server.url(&t.url);
    }
    let mut plan = open(&list[0].url, 80.0, 0.5);
    plan.engine = engine;
    plan.request = RequestSet {
        list,
        mix: Some(ReplayMix {
            endpoints: loaded.mix.endpoints,
            of_request: of,
        }),
        ..RequestSet::default()
    };
    plan
}

#[test]
fn each_request_is_counted_under_its_endpoint_on_both_engines() {
    let server = echo::spawn(false);
    let mut engines = vec![Engine::Epoll];
    if iolab_loadgen::io_uring_available().is_ok() {
        engines.push(Engine::IoUring);
    }
    for engine in engines {
        let r = run(&plan(&server, engine)).result;
        let eps = &r.endpoints;
        let got: Vec<(&str, u64, u64)> = eps
            .iter()
            .map(|e| (e.template.as_str(), e.sent, e.ok))
            .collect();
        assert_eq!(
            got,
            [("/orders/{id}", 30, 30), ("/health", 10, 10)],
            "{engine:?}"
        );
        assert_eq!(eps.iter().map(|e| e.sent).sum::<u64>(), r.requests.sent);
        for e in eps {
            e.check_accounting().unwrap();
            assert!((e.recorded_service_ms.unwrap() - 2.0).abs() < 1e-9);
            let h =
                iolab_loadgen::shard::hist::decode_base64(e.histogram.as_ref().unwrap()).unwrap();
            assert_eq!(
                h.len(),
                e.ok,
                "{engine:?}: the histogram holds every answer"
            );
        }
    }
    let seen = server.seen();
    assert!(seen
        .iter()
        .all(|s| s.path.starts_with("/orders/") || s.path == "/health"));
}

#[test]
fn a_plan_without_a_mix_writes_no_endpoints_and_a_wrong_mix_is_refused() {
    let server = echo::spawn(false);
    let mut p = plan(&server, Engine::Epoll);
    p.request.mix = None;
    let r = run(&p).result;
    assert!(r.endpoints.is_empty());
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("\"endpoints\""), "absent when empty");
    let mut p = plan(&server, Engine::Epoll);
    p.request.mix.as_mut().unwrap().of_request.pop();
    let e = iolab_loadgen::validate(&p).unwrap_err().to_string();
    assert!(
        e.contains("replay mix names 3 requests, the list has 4"),
        "{e}"
    );
}
