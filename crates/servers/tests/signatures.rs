//! Each model shows its signature: how long 8 concurrent `sleep:300`
//! requests take, how `par(...)` runs, and that 10x overload leaves it alive.
//! Real servers on 127.0.0.1:0, real sockets, real threads; margins are wide
//! (0.8x..2x) because the machine is shared: these check behaviour, not speed.

use std::time::{Duration, Instant};

use iolab_model::{ModelKind, ModelParams};
use iolab_servers::{start, Running, ServeConfig};
use iolab_verify::client::{Endpoint, HttpResponse};

fn serve(model: ModelKind, params: ModelParams) -> Running {
    let mut config = ServeConfig::new(model);
    config.params = params;
    config.grace = Duration::from_secs(2);
    start(config, "127.0.0.1:0".parse().unwrap()).expect("server starts")
}

fn target(r: &Running) -> Endpoint {
    Endpoint::parse(&r.url()).unwrap()
}

/// Send `n` requests at once, each on its own connection; all answers and
/// the wall time until the last one.
fn burst(t: &Endpoint, path: &str, n: usize) -> (Vec<HttpResponse>, Duration) {
    let started = Instant::now();
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let (t, path) = (t.clone(), path.to_string());
            std::thread::spawn(move || t.get(&path, Duration::from_secs(20)).expect("an answer"))
        })
        .collect();
    let answers = handles.into_iter().map(|h| h.join().unwrap()).collect();
    (answers, started.elapsed())
}

fn assert_about(what: &str, took: Duration, expected_ms: u64) {
    let ms = took.as_secs_f64() * 1e3;
    let (lo, hi) = (expected_ms as f64 * 0.8, expected_ms as f64 * 2.0);
    assert!(
        (lo..=hi).contains(&ms),
        "{what}: took {ms:.0} ms, expected about {expected_ms} ms ({lo:.0}..{hi:.0})"
    );
}

fn signature(model: ModelKind, params: ModelParams, expected_ms: u64) {
    let server = serve(model, params);
    let (answers, took) = burst(&target(&server), "/work?steps=sleep:300", 8);
    for a in &answers {
        assert_eq!(a.status, 200, "{model}: {}", a.body);
        assert!(a
            .body
            .starts_with(&format!("{{\"ok\":true,\"model\":\"{model}\",\"steps\":1,")));
    }
    assert_about(&format!("{model}: 8 x sleep:300"), took, expected_ms);
    server.stop().unwrap();
}

fn p() -> ModelParams {
    ModelParams::default()
}

#[test]
fn pool_of_4_takes_two_rounds() {
    signature(
        ModelKind::Pool,
        ModelParams {
            threads: Some(4),
            ..p()
        },
        600,
    );
}

#[test]
fn loop_async_holds_all_at_once() {
    signature(ModelKind::LoopAsync, p(), 300);
}

#[test]
fn loop_blocking_with_one_worker_serializes() {
    signature(
        ModelKind::LoopBlocking,
        ModelParams {
            workers: Some(1),
            ..p()
        },
        2400,
    );
}

#[test]
fn loop_offload_is_capped_by_its_pool() {
    let params = ModelParams {
        workers: Some(2),
        offload: Some(2),
        ..p()
    };
    signature(ModelKind::LoopOffload, params, 1200);
}

#[test]
fn sequential_serves_one_at_a_time() {
    signature(ModelKind::Sequential, p(), 2400);
}

#[test]
fn thread_per_request_holds_all_at_once() {
    signature(ModelKind::ThreadPerRequest, p(), 300);
}

/// `par(sleep:300,sleep:300,sleep:300)` alone: concurrent where the model
/// can, in sequence where it cannot.
#[test]
fn par_runs_the_way_each_model_can() {
    let cases = [
        (ModelKind::Sequential, p(), 900),
        (
            ModelKind::LoopBlocking,
            ModelParams {
                workers: Some(1),
                ..p()
            },
            900,
        ),
        (
            ModelKind::Pool,
            ModelParams {
                threads: Some(4),
                ..p()
            },
            300,
        ),
        // One thread: the parent takes back the children nobody started, no deadlock.
        (
            ModelKind::Pool,
            ModelParams {
                threads: Some(1),
                ..p()
            },
            900,
        ),
        (ModelKind::ThreadPerRequest, p(), 300),
        (
            ModelKind::LoopOffload,
            ModelParams {
                offload: Some(2),
                ..p()
            },
            600,
        ),
        (ModelKind::LoopAsync, p(), 300),
    ];
    let servers: Vec<_> = cases
        .into_iter()
        .map(|(m, params, ms)| (m, serve(m, params), ms))
        .collect();
    let handles: Vec<_> = servers
        .iter()
        .map(|(m, s, ms)| {
            let (t, m, ms) = (target(s), *m, *ms);
            std::thread::spawn(move || {
                let a = t
                    .get(
                        "/work?steps=par(sleep:300,sleep:300,sleep:300)",
                        Duration::from_secs(20),
                    )
                    .unwrap();
                assert_eq!(a.status, 200, "{m}: {}", a.body);
                assert_about(&format!("{m}: par of 3 x sleep:300"), a.elapsed, ms);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for (_, s, _) in servers {
        s.stop().unwrap();
    }
}

fn metric(t: &Endpoint, name: &str) -> f64 {
    let m = t.get("/metrics", Duration::from_secs(5)).unwrap();
    let line = m
        .body
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} missing from {}", m.body));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Ten times more concurrent requests than the model has threads for:
/// every request gets an answer (200, or 503 where the model refuses), the
/// counters account for each, and `/health` answers afterwards.
#[test]
fn ten_x_overload_leaves_every_model_alive() {
    let cases = [
        (ModelKind::Sequential, p(), 10),
        (
            ModelKind::Pool,
            ModelParams {
                threads: Some(4),
                ..p()
            },
            40,
        ),
        (
            ModelKind::ThreadPerRequest,
            ModelParams {
                max_threads: Some(4),
                ..p()
            },
            40,
        ),
        (
            ModelKind::LoopBlocking,
            ModelParams {
                workers: Some(1),
                ..p()
            },
            10,
        ),
        (
            ModelKind::LoopOffload,
            ModelParams {
                workers: Some(1),
                offload: Some(4),
                ..p()
            },
            40,
        ),
        (
            ModelKind::LoopAsync,
            ModelParams {
                workers: Some(1),
                ..p()
            },
            400,
        ),
    ];
    for (model, params, n) in cases {
        let server = serve(model, params);
        let t = target(&server);
        let (answers, _) = burst(&t, "/work?steps=sleep:100", n);
        let ok = answers.iter().filter(|a| a.status == 200).count();
        let refused = answers.iter().filter(|a| a.status == 503).count();
        assert_eq!(
            ok + refused,
            n,
            "{model}: every request answered 200 or 503"
        );
        assert!(ok >= 1, "{model}: some requests served");
        if model != ModelKind::ThreadPerRequest {
            assert_eq!(refused, 0, "{model} queues rather than refuses");
        }
        assert_eq!(
            metric(&t, "iolab_requests_completed_total") as usize,
            ok,
            "{model}"
        );
        assert_eq!(
            metric(&t, "iolab_requests_rejected_total") as usize,
            refused,
            "{model}"
        );
        assert_eq!(metric(&t, "iolab_requests_in_flight"), 0.0, "{model}");
        let health = t.get("/health", Duration::from_secs(5)).unwrap();
        assert_eq!(health.status, 200, "{model}: /health after overload");
        server.stop().unwrap();
    }
}

/// The pool at `--max-connections` stops accepting; the next connections
/// wait in the kernel backlog and are served once a slot frees.
#[test]
fn pool_at_max_connections_leaves_the_rest_in_the_backlog() {
    let params = ModelParams {
        threads: Some(2),
        max_connections: Some(2),
        ..p()
    };
    let server = serve(ModelKind::Pool, params);
    let (answers, took) = burst(&target(&server), "/work?steps=sleep:300", 4);
    assert!(answers.iter().all(|a| a.status == 200));
    assert_about("pool, 2 connections, 4 requests", took, 600);
    server.stop().unwrap();
}

/// Shutdown stops accepting but lets a request in flight finish.
#[test]
fn shutdown_finishes_in_flight_work() {
    for model in [
        ModelKind::Pool,
        ModelKind::ThreadPerRequest,
        ModelKind::LoopAsync,
        ModelKind::LoopOffload,
    ] {
        let server = serve(model, p());
        let t = target(&server);
        let inflight =
            std::thread::spawn(move || t.get("/work?steps=sleep:400", Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(150));
        let t = target(&server);
        server.stop().unwrap();
        let a = inflight
            .join()
            .unwrap()
            .expect("in-flight request answered");
        assert_eq!(a.status, 200, "{model}: {}", a.body);
        assert!(
            t.get("/health", Duration::from_secs(1)).is_err(),
            "{model}: stopped accepting"
        );
    }
}
