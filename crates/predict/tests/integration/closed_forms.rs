//! The simulation agrees with the closed forms where they are exact:
//! deterministic queues (D/D/c) below and above capacity, closed loops.

use crate::common;

use common::*;
use iolab_model::ModelKind;
use iolab_predict::closed_form;

#[test]
fn dd_c_below_capacity_every_request_takes_exactly_s() {
    // 10 threads x 100 ms = 100 req/s capacity; 50 req/s offered.
    let w = work("sleep:100", open(50.0, 10.0), KEEP, 1.0);
    let p = predict(ModelKind::Pool, &pool(10), &w, 2);
    assert_eq!(p.offered, 500);
    assert_eq!(p.ok, 500);
    assert!(near(p.latency_ms.p50, 100.0, 0.01), "{p:?}");
    assert!(near(p.latency_ms.p99, 100.0, 0.01), "{p:?}");
    // Little: 50 req/s x 0.1 s = 5 in flight
    assert!((5..=6).contains(&p.peak_in_flight), "{p:?}");
    assert_eq!(p.capacity_rps, Some(100.0));
    assert_eq!(p.first_timeout_s, None);
    assert!(
        p.explanation.contains("capacity is 100 req/s"),
        "{}",
        p.explanation
    );
}

#[test]
fn dd_c_above_capacity_queue_grows_and_timeouts_start_on_time() {
    // 200 req/s on 100 req/s of capacity: queue +100 req/s;
    // first timeout for requests sent after (T - S) / (rho - 1) = 0.9 s.
    let w = work("sleep:100", open(200.0, 10.0), KEEP, 1.0);
    let out = sim(ModelKind::Pool, &pool(10), &w, 2);
    let expected = closed_form::first_timeout_s(200.0, 100.0, 0.1, 1.0).unwrap();
    assert!((expected - 0.9).abs() < 1e-9);
    // Threads are taken in whole waves of c, so the simulation may be later
    // than the fluid formula by at most one wave: S / (rho - 1) = 0.1 s.
    let first = out.first_timeout_sent_s.expect("timeouts happen");
    assert!(
        first >= expected - 0.01 && first <= expected + 0.11,
        "first timeout sent at {first}"
    );
    let ok_cf = closed_form::ok_under_overload(200.0, 100.0, 0.1, 1.0, 10.0);
    assert_eq!(ok_cf, 180.0);
    assert!((178..=202).contains(&out.ok), "ok {} vs {ok_cf}", out.ok);
    // the server keeps working on abandoned requests: throughput = capacity
    assert!(
        near(out.throughput_rps(), 100.0, 0.02),
        "{}",
        out.throughput_rps()
    );
    assert!(out.goodput_rps() < 20.0);
    // in the server at the end: (200 - 100) x 10 s queued + 10 running
    assert!(
        near(out.peak_in_flight as f64, 1_010.0, 0.03),
        "{}",
        out.peak_in_flight
    );
    assert_eq!(
        out.errors.get("timeout").copied(),
        Some(out.offered - out.ok)
    );
}

#[test]
fn closed_loop_gives_min_n_c_over_s() {
    for (clients, threads) in [(5u32, 10u32), (20, 10), (10, 10)] {
        let w = work("sleep:100", closed(clients, 10.0), KEEP, 5.0);
        let out = sim(ModelKind::Pool, &pool(threads), &w, 2);
        let x = closed_form::closed_loop_rps(clients, threads, 0.1);
        assert!(
            near(out.throughput_rps(), x, 0.02),
            "N={clients} c={threads}: {} vs {x}",
            out.throughput_rps()
        );
        // Little: latency = N / X
        let lat_ms = out.latency.quantile(0.5) as f64 / 1e3;
        assert!(
            near(lat_ms, clients as f64 / x * 1e3, 0.02),
            "N={clients}: p50 {lat_ms}"
        );
    }
}

#[test]
fn poisson_arrivals_add_waiting_below_capacity() {
    // rho 0.9 on 10 threads: a D/D/c queue never waits, an M/D/c one does.
    let w = work("sleep:100", poisson(90.0, 60.0, 42), KEEP, 10.0);
    let out = sim(ModelKind::Pool, &pool(10), &w, 2);
    assert!(near(out.offered as f64, 5_400.0, 0.05), "{}", out.offered);
    assert_eq!(out.ok, out.offered);
    assert!(
        out.latency.quantile(0.99) > 120_000,
        "p99 {}",
        out.latency.quantile(0.99)
    );
    assert!(out.latency.quantile(0.5) >= 99_000);
}

#[test]
fn non_blocking_io_holds_no_thread() {
    let w = work("sleep:1000", open(5_000.0, 5.0), KEEP, 10.0);
    let p = predict(ModelKind::LoopAsync, &Default::default(), &w, 2);
    assert_eq!(p.ok, 25_000);
    assert!(near(p.latency_ms.p99, 1_000.0, 0.01));
    assert_eq!(p.capacity_rps, None);
    // Little: 5,000 req/s x 1 s
    assert!(
        near(p.peak_in_flight as f64, 5_000.0, 0.01),
        "{}",
        p.peak_in_flight
    );
    assert_eq!(p.peak_threads, Some(2));
}

#[test]
fn par_overlaps_only_where_no_thread_blocks() {
    let steps = "par(sleep:200,sleep:500,sleep:300)";
    let w = work(steps, open(10.0, 5.0), KEEP, 3.0);
    let a = predict(ModelKind::LoopAsync, &Default::default(), &w, 2);
    assert!(near(a.latency_ms.p50, 500.0, 0.01), "{a:?}");
    let b = predict(ModelKind::Pool, &pool(16), &w, 2);
    assert!(near(b.latency_ms.p50, 1_000.0, 0.01), "{b:?}");
    // offload: three blocked threads per request, 10 req/s x 1 s of IO = 10 busy
    let off = iolab_model::ModelParams {
        offload: Some(64),
        ..Default::default()
    };
    let c = predict(ModelKind::LoopOffload, &off, &w, 2);
    assert!(near(c.latency_ms.p50, 500.0, 0.01), "{c:?}");
    assert!(c.peak_threads.unwrap() >= 2 + 3);
    // a small offload pool is the cap: 3 threads / 1 s of IO per request = 3 req/s
    let tiny = iolab_model::ModelParams {
        offload: Some(3),
        ..Default::default()
    };
    let d = predict(ModelKind::LoopOffload, &tiny, &w, 2);
    assert_eq!(d.capacity_rps, Some(3.0));
    assert!(d.ok < d.offered / 2, "{d:?}");
}

#[test]
fn pg_pool_caps_concurrency_and_its_wait_fails_requests() {
    // 10 connections x 100 ms = 100 req/s, whatever the 50 threads could do.
    let w = work("pg:100", open(200.0, 40.0), KEEP, 60.0);
    let out = sim(ModelKind::Pool, &pool(50), &w, 2);
    assert!(
        near(out.throughput_rps(), 100.0, 0.03),
        "{}",
        out.throughput_rps()
    );
    // async: the queue for connections grows 100/s; waits pass 30 s at t = 30 s
    let a = sim(ModelKind::LoopAsync, &Default::default(), &w, 2);
    let backend = a.errors.get("backend").copied().unwrap_or(0);
    assert!(backend > 500, "{a:?}");
    assert!(
        near(a.throughput_rps(), 100.0, 0.03),
        "{}",
        a.throughput_rps()
    );
}

#[test]
fn capped_thread_per_request_answers_503() {
    let params = iolab_model::ModelParams {
        max_threads: Some(100),
        ..Default::default()
    };
    let w = work("sleep:1000", open(200.0, 10.0), KEEP, 5.0);
    let out = sim(ModelKind::ThreadPerRequest, &params, &w, 2);
    assert!(near(out.ok as f64, 1_000.0, 0.02), "{out:?}");
    assert!(near(out.errors["rejected"] as f64, 1_000.0, 0.02));
    assert_eq!(out.peak_threads, 100);
}

#[test]
fn sequential_fills_its_backlog_then_resets() {
    let w = work("sleep:100", open(50.0, 10.0), FRESH, 60.0);
    let out = sim(ModelKind::Sequential, &Default::default(), &w, 2);
    // 10 req/s served; 1 running + 100 in the backlog; the rest reset:
    // the backlog is full after 100 / 40 = 2.5 s, then 40 req/s are reset.
    let resets = out.errors.get("reset").copied().unwrap_or(0);
    assert!(near(resets as f64, 40.0 * 7.5, 0.05), "{out:?}");
    assert_eq!(out.peak_in_flight, 101);
    assert_eq!(out.peak_threads, 1);
}

#[test]
fn cpu_steps_share_the_cores() {
    // 1,000,000 terms x NS_PER_TERM each on 2 cores
    let s = iolab_predict::calibration::cpu_ns(1_000_000) as f64 / 1e9;
    let cap = 2.0 / s;
    let w = work("cpu:1000000", open(cap * 0.5, 5.0), KEEP, 10.0);
    let p = predict(ModelKind::LoopAsync, &Default::default(), &w, 2);
    assert!(near(p.capacity_rps.unwrap(), cap, 1e-9));
    assert_eq!(p.ok, p.offered);
    let w = work("cpu:1000000", open(cap * 2.0, 5.0), KEEP, 1.0);
    let q = sim(ModelKind::LoopAsync, &Default::default(), &w, 2);
    assert!(
        near(q.throughput_rps(), cap, 0.02),
        "{} vs {cap}",
        q.throughput_rps()
    );
}

#[test]
fn ramps_and_phases_are_followed() {
    use iolab_model::driver::{Arrival, Driver, Phase};
    use std::time::Duration;
    let d = Driver::Open {
        phases: vec![
            Phase {
                duration: Duration::from_secs(10),
                from_rps: 0.0,
                to_rps: 100.0,
            },
            Phase::hold(100.0, Duration::from_secs(10)),
        ],
        arrival: Arrival::Constant,
    };
    let w = work("sleep:10", d, KEEP, 1.0);
    let out = sim(ModelKind::LoopAsync, &Default::default(), &w, 2);
    assert_eq!(out.offered, 1_500);
    assert_eq!(out.ok, 1_500);
}
