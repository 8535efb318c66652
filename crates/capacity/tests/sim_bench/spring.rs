//! Issue 50 on the simulated bench: services shaped like Spring Boot
//! (Tomcat's threads, HikariCP's pool, a database call) exporting the
//! actuator's gauges, searched with the default series: the resource named
//! right with high confidence, and the what-if for the change a team makes
//! (its own knob) within 15% of that change made to the service. A remote
//! one (its series, no PID) is named from its series alone; with nothing
//! to name it, no what-if gives a number.

use std::time::Duration;

use iolab_model::capacity::{Confidence, Resource, Search, Slo};
use iolab_model::ModelKind;

use iolab_capacity::sim::{network as net, truth, work, Dial, Exports, Service, SimBench};
use iolab_capacity::step_length;
use iolab_predict::fit::network;
use iolab_predict::whatif::{changes, foreign, slo_capacity, Replay};

/// Tomcat of `threads`, HikariCP of `pool`, each request 0.5 ms of CPU,
/// `pg` ms on a pooled connection and the rest of 50 ms elsewhere.
fn spring(threads: u64, pool: u64, pg: f64, remote: bool) -> Service {
    let n = net(
        ModelKind::Pool,
        &[("threads", threads), ("pg_pool", pool)],
        work(0.5, pg, 49.5 - pg),
        2,
    );
    let mut s = Service::of(n);
    s.exports = Exports::Spring;
    s.remote = remote;
    s
}

fn slo() -> Slo {
    "p99<250ms,success>=99%".parse().unwrap()
}

const TIMEOUT: Duration = Duration::from_secs(1);

fn search(s: &Service) -> (Search, SimBench) {
    let bench = SimBench::new(s.clone(), Dial::quiet(50), TIMEOUT);
    (bench.search(&slo()), bench)
}

/// The what-if whose words contain `needle`, and the same change made to
/// the service, searched on the simulation: (predicted, measured).
fn against_truth(s: &Service, found: &Search, bench: &SimBench, needle: &str) -> (f64, f64) {
    let fit = found.fit.as_ref().unwrap();
    let (i, change) = changes(fit)
        .into_iter()
        .enumerate()
        .find(|(_, c)| c.change.contains(needle))
        .unwrap_or_else(|| panic!("{needle}: {:#?}", found.what_if));
    let predicted = found.what_if[i].slo_capacity_rps.unwrap();
    let rates: Vec<f64> = found.steps.iter().map(|s| s.rate_rps).collect();
    let cap = found.capacity_rps.unwrap();
    let o = bench.options();
    let replay = Replay {
        rates: &rates,
        step: step_length(&slo(), TIMEOUT, fit.service_ms, &o, cap),
        timeout: TIMEOUT,
        slo: &slo(),
    };
    let real = truth::changed(&change.network, &network(fit), &s.network);
    let measured = slo_capacity(&real, &foreign(), &replay).unwrap();
    eprintln!(
        "{}: {}/s found; '{}' predicted {predicted:.0}/s, made {measured:.0}/s",
        fit.binding.resource, cap, change.change
    );
    (predicted, measured)
}

fn within(p: f64, m: f64, share: f64) -> bool {
    (p - m).abs() <= share * m
}

#[test]
fn r50_21_spring_pool_binds_named_high_and_a_bigger_pool_predicted() {
    let s = spring(200, 10, 48.0, false);
    let (found, bench) = search(&s);
    let b = &found.fit.as_ref().unwrap().binding;
    assert_eq!(
        (b.resource, b.confidence),
        (Resource::Pool, Confidence::High),
        "{b:#?}"
    );
    assert!(
        b.sentence
            .starts_with("is limited by HikariCP's 10 connections"),
        "{}",
        b.sentence
    );
    let (p, m) = against_truth(&s, &found, &bench, "maximum-pool-size 10 -> 20");
    assert!(within(p, m, 0.15), "predicted {p:.0}, measured {m:.0}");
}

#[test]
fn r50_22_spring_threads_bind_beside_a_pool_that_caps_more_threads() {
    let s = spring(40, 50, 45.0, false);
    let (found, bench) = search(&s);
    let b = &found.fit.as_ref().unwrap().binding;
    assert_eq!(
        (b.resource, b.confidence),
        (Resource::Threads, Confidence::High),
        "{b:#?}"
    );
    assert!(
        b.sentence.contains("HikariCP's 50 connections"),
        "{}",
        b.sentence
    );
    let (p, m) = against_truth(&s, &found, &bench, "server.tomcat.threads.max 40 -> 80");
    assert!(within(p, m, 0.15), "predicted {p:.0}, measured {m:.0}");
    // The pool, not the threads, caps the change: 50 / 45 ms = 1,111/s.
    assert!(p < 1.1 * 50.0 / 0.045, "{p}");
}

#[test]
fn r50_23_spring_threads_and_pool_within_ten_percent_are_both_named() {
    // Threads at 40 / 50 ms = 800/s, the pool at 41 / 47.5 ms = 863/s.
    let s = spring(40, 41, 47.5, false);
    let (found, bench) = search(&s);
    let b = &found.fit.as_ref().unwrap().binding;
    assert_eq!(b.resource, Resource::Threads, "{b:#?}");
    assert!(
        b.sentence.contains("two resources near saturation"),
        "{}",
        b.sentence
    );
    let (p, m) = against_truth(&s, &found, &bench, "server.tomcat.threads.max 40 -> 80");
    assert!(within(p, m, 0.15), "predicted {p:.0}, measured {m:.0}");
}

#[test]
fn r50_24_a_remote_spring_pool_is_named_from_its_series_alone() {
    let s = spring(50, 10, 48.0, true);
    let (found, _) = search(&s);
    let f = found.fit.as_ref().unwrap();
    assert!(found.steps.iter().all(|st| st.signals.is_none()));
    assert_eq!(f.binding.resource, Resource::Pool, "{:#?}", f.binding);
    // Nothing exported, nothing from /proc: no number for any change.
    let mut bare = s.clone();
    bare.exports = Exports::Nothing;
    let (found, _) = search(&bare);
    let w = &found.what_if;
    assert!(w.len() > 1);
    for c in w.iter().filter(|c| !c.fitted) {
        assert!(
            c.slo_capacity_rps.is_none() && c.cannot_say.is_some(),
            "{c:#?}"
        );
    }
}
