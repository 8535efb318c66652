//! Issue 50 on real services (`crates/cli/tests/capacity_spring.rs`,
//! `capacity_python.rs`): each case named wrong or predicted wrong there,
//! recomputed here from the readings that run kept (its steps' rates,
//! service times, CPU and the scraped gauges' peaks).

use iolab_model::capacity::{Confidence, Fit, WhatIf};

use super::*;

/// A step with the scraped gauges' peaks `gauges`.
fn scraped(
    rate: f64,
    passed: bool,
    service_ms: f64,
    cpu: f64,
    gauges: &[(&str, f64)],
) -> StepRecord {
    let mut s = step(rate, passed, service_ms, Some(cpu));
    s.metrics = gauges.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    s
}

fn spring(
    active: f64,
    pending: f64,
    pool: f64,
    busy: f64,
    threads: f64,
) -> Vec<(&'static str, f64)> {
    vec![
        ("hikaricp_connections_active", active),
        ("hikaricp_connections_max", pool),
        ("hikaricp_connections_pending", pending),
        ("tomcat_threads_busy_threads", busy),
        ("tomcat_threads_config_max_threads", threads),
        ("jvm_threads_live_threads", threads + 20.0),
    ]
}

fn what_ifs(f: &Fit, rates: &[f64]) -> Vec<WhatIf> {
    let slo: Slo = "p99<250ms,success>=99%".parse().unwrap();
    what_if(f, &replay(rates, &slo))
}

/// Spring, Tomcat 200 beside HikariCP 10 (the run of 2026-11-29 04:35,
/// load 10 on 2 cores: each connection held 60 ms, 150/s): the pool,
/// and "more threads" read "server.tomcat.threads.max 20, the same pool",
/// fewer threads than the 200 it ran. Twice the configured ones now.
#[test]
fn r50_40_more_threads_beside_a_pool_are_twice_the_configured_ones() {
    let steps = [
        scraped(
            100.0,
            true,
            60.0,
            0.35,
            &spring(6.0, 0.0, 10.0, 11.0, 200.0),
        ),
        scraped(
            150.0,
            true,
            60.0,
            0.28,
            &spring(10.0, 7.0, 10.0, 22.0, 200.0),
        ),
        scraped(
            162.5,
            false,
            330.0,
            0.19,
            &spring(10.0, 17.0, 10.0, 32.0, 200.0),
        ),
        scraped(
            175.0,
            false,
            500.0,
            0.23,
            &spring(10.0, 52.0, 10.0, 64.0, 200.0),
        ),
    ];
    let f = fit(&steps, 150.0, 2).unwrap();
    let b = &f.binding;
    assert_eq!(
        (b.resource, b.name.as_deref(), b.size, b.confidence),
        (
            Resource::Pool,
            Some("hikaricp"),
            Some(10.0),
            Confidence::High
        ),
        "{b:#?}"
    );
    let w = what_ifs(&f, &[100.0, 150.0, 162.5, 175.0]);
    let more = w
        .iter()
        .find(|w| w.change == "server.tomcat.threads.max 200 -> 400, the same pool")
        .unwrap_or_else(|| panic!("{w:#?}"));
    // The pool binds whatever the threads: no more than as fitted.
    let fitted = w[0].slo_capacity_rps.unwrap();
    assert!(more.slo_capacity_rps.unwrap() <= 1.05 * fitted, "{w:#?}");
    let bigger = w
        .iter()
        .find(|w| w.change.contains("maximum-pool-size 10 -> 20"))
        .unwrap();
    assert!(bigger.slo_capacity_rps.unwrap() >= 1.7 * fitted, "{w:#?}");
}

/// Tomcat 20 beside HikariCP 50 (the run of 04:42, load 6): Tomcat 20 of
/// 20 at every pass from 300/s, HikariCP 19 of 50, nobody pending; the
/// cold first step set S at 67 ms, so Little's count read 25 and the
/// threads were named with medium confidence only. And Spring's idle
/// task executor (max 2147483647) was kept beside them as a pool.
fn tomcat20() -> Vec<StepRecord> {
    let executor = [
        ("executor_active_threads", 0.0),
        ("executor_pool_max_threads", 2_147_483_647.0),
        ("executor_queued_tasks", 0.0),
    ];
    let g = |active, busy| {
        let mut v = spring(active, 0.0, 50.0, busy, 20.0);
        v.extend(executor);
        v
    };
    vec![
        scraped(100.0, true, 67.3, 0.57, &g(6.0, 8.0)),
        scraped(200.0, true, 54.0, 0.44, &g(10.0, 13.0)),
        scraped(300.0, true, 53.2, 0.38, &g(19.0, 20.0)),
        scraped(350.0, true, 54.7, 0.36, &g(19.0, 20.0)),
        scraped(375.0, true, 56.3, 0.29, &g(19.0, 20.0)),
        scraped(400.0, false, 161.5, 0.59, &g(19.0, 20.0)),
    ]
}

#[test]
fn r50_41_an_unbounded_idle_executor_is_no_resource_beside() {
    let f = fit(&tomcat20(), 375.0, 2).unwrap();
    let b = &f.binding;
    assert!(
        b.also.iter().all(|l| l.name.as_deref() != Some("executor")),
        "{b:#?}"
    );
    assert!(
        b.evidence.iter().all(|e| !e.text.contains("executor")),
        "{b:#?}"
    );
    assert_eq!(b.also.len(), 1, "{b:#?}");
}

#[test]
fn r50_42_threads_at_their_max_where_it_passed_are_high_whatever_a_cold_s() {
    let f = fit(&tomcat20(), 375.0, 2).unwrap();
    let b = &f.binding;
    assert!(f.concurrency > 1.25 * 20.0, "{}", f.concurrency);
    assert_eq!(
        (b.resource, b.name.as_deref(), b.size, b.confidence),
        (
            Resource::Threads,
            Some("tomcat"),
            Some(20.0),
            Confidence::High
        ),
        "{b:#?}"
    );
    let w = what_ifs(&f, &[100.0, 200.0, 300.0, 350.0, 375.0, 400.0]);
    let more = w
        .iter()
        .find(|w| w.change == "server.tomcat.threads.max 20 -> 40, the same pool of 50")
        .unwrap_or_else(|| panic!("{w:#?}"));
    let p = more.slo_capacity_rps.unwrap();
    assert!((p - 750.0).abs() <= 0.1 * 750.0, "{w:#?}");
}

/// Tomcat 40 beside HikariCP 40 (the run of 04:50, load 9): 750/s, Tomcat
/// 40 of 40 from 600/s, HikariCP 39 of 40, nobody pending; the threads,
/// HikariCP beside within 15%, and 80 threads predicted 769/s (measured
/// 750/s). Had HikariCP's peak reached 40 (one scrape more), both gauges
/// were full and tied, and the table's order named the pool nobody waited
/// for: the full gauge with no one waiting now ranks after the other.
#[test]
fn r50_43_tomcat_40_beside_hikari_40_is_the_threads_both_named() {
    for hikari in [39.0, 40.0] {
        let steps = [
            scraped(
                400.0,
                true,
                54.1,
                0.67,
                &spring(22.0, 0.0, 40.0, 29.0, 40.0),
            ),
            scraped(
                600.0,
                true,
                54.0,
                0.65,
                &spring(38.0, 0.0, 40.0, 40.0, 40.0),
            ),
            scraped(
                700.0,
                true,
                52.1,
                0.58,
                &spring(hikari, 0.0, 40.0, 40.0, 40.0),
            ),
            scraped(
                750.0,
                true,
                50.9,
                0.26,
                &spring(hikari, 0.0, 40.0, 40.0, 40.0),
            ),
            scraped(
                800.0,
                false,
                171.6,
                0.65,
                &spring(hikari, 0.0, 40.0, 40.0, 40.0),
            ),
        ];
        let f = fit(&steps, 750.0, 2).unwrap();
        let b = &f.binding;
        assert_eq!(
            (b.resource, b.name.as_deref(), b.size, b.confidence),
            (
                Resource::Threads,
                Some("tomcat"),
                Some(40.0),
                Confidence::High
            ),
            "HikariCP {hikari}: {b:#?}"
        );
        let pool = b
            .also
            .iter()
            .find(|l| l.name.as_deref() == Some("hikaricp"));
        assert!(pool.unwrap().binds_at_rps <= 1.15 * 750.0, "{b:#?}");
        assert!(
            b.sentence.contains("two resources near saturation: the threads binds first, at 750/s, HikariCP's 40 connections would at ~"),
            "{}",
            b.sentence
        );
        let w = what_ifs(&f, &[400.0, 600.0, 700.0, 750.0, 800.0]);
        let more = w
            .iter()
            .find(|w| w.change == "server.tomcat.threads.max 40 -> 80, the same pool of 40")
            .unwrap_or_else(|| panic!("{w:#?}"));
        let p = more.slo_capacity_rps.unwrap();
        assert!(
            (p - 750.0).abs() <= 0.15 * 750.0,
            "HikariCP {hikari}: {p}: {w:#?}"
        );
    }
}
