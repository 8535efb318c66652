//! Issue 50: the user's own service, named from recorded scrapes shaped
//! like Spring Boot's `/actuator/prometheus` and a uvicorn app's
//! prometheus_client page (`scrapes/`), read as the capacity scraper
//! keeps them (each series summed over its label sets). Every sentence
//! checked is recomputed from the numbers beside it.

use iolab_model::capacity::gauges::default_series;
use iolab_model::capacity::{Confidence, Downstream, Fit, WhatIf};

use super::*;

/// A recorded scrape as the scraper keeps it: every default series found,
/// summed over its label sets.
fn scrape(text: &str) -> BTreeMap<String, f64> {
    let wanted = default_series();
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((key, v)) = line.rsplit_once(' ') else {
            continue;
        };
        let base = key.split('{').next().unwrap_or(key);
        if let (true, Ok(v)) = (wanted.iter().any(|w| w == base), v.parse::<f64>()) {
            *out.entry(base.to_string()).or_insert(0.0) += v;
        }
    }
    out
}

fn scraped(mut s: StepRecord, text: &str) -> StepRecord {
    s.metrics = scrape(text);
    s
}

fn what_ifs(f: &Fit, rates: &[f64]) -> Vec<WhatIf> {
    let slo: Slo = "p99<500ms,success>=99%".parse().unwrap();
    what_if(f, &replay(rates, &slo))
}

fn row<'a>(w: &'a [WhatIf], needle: &str) -> &'a WhatIf {
    w.iter()
        .find(|w| w.change.contains(needle))
        .unwrap_or_else(|| panic!("{needle}: {w:#?}"))
}

/// A JVM of 75 threads holding 50 connections to PostgreSQL (HikariCP
/// opens its whole pool).
fn spring_proc(connections: u64) -> Signals {
    Signals {
        threads: Some(threads(75.0, 1, &[(ThreadState::Futex, 60.0)])),
        downstream: vec![Downstream {
            endpoint: "127.0.0.1:5432".into(),
            connections,
        }],
        ..Signals::default()
    }
}

/// Finding 1: HikariCP at 9 of 10 at the last pass and 10 of 10 with 39
/// waiting one step above, from the default series: the pool, high.
#[test]
fn r50_11_hikaricp_full_one_step_above_the_knee_is_the_pool_high() {
    let steps = [
        step(50.0, true, 56.0, Some(0.05)),
        scraped(
            step(180.0, true, 57.0, Some(0.18)),
            include_str!("scrapes/pool10_knee.prom"),
        ),
        scraped(
            step(210.0, false, 900.0, Some(0.2)),
            include_str!("scrapes/pool10_over.prom"),
        ),
    ];
    let f = fit(&steps, 180.0, 2).unwrap();
    let b = &f.binding;
    assert_eq!(
        (b.resource, b.confidence, b.size),
        (Resource::Pool, Confidence::High, Some(10.0)),
        "{b:#?}"
    );
    assert!(b.configured);
    let c = 180.0 * 56.0 / 1000.0;
    let want = format!(
        "is limited by HikariCP's 10 connections (Little's count {c:.0}): hikaricp_connections_active reached its max of 10 at 210/s with 39 waiting (hikaricp_connections_pending)"
    );
    assert!(b.sentence.starts_with(&want), "{}\n{want}", b.sentence);
    assert!(b.settle.is_none(), "{b:#?}");
}

/// Finding 2: Tomcat 40 busy of 40, HikariCP 39 of 50 with none waiting,
/// the kernel showing 50 connections open: the threads, and more of them
/// help up to where the pool binds, 50 / (39 / 800/s) = 1,026/s.
#[test]
fn r50_12_tomcat_full_beside_an_open_hikari_pool_is_the_threads() {
    let steps = [
        step(100.0, true, 52.0, Some(0.05)),
        with(
            scraped(
                step(800.0, true, 55.0, Some(0.4)),
                include_str!("scrapes/threads40_knee.prom"),
            ),
            spring_proc(50),
        ),
        scraped(
            step(900.0, false, 700.0, Some(0.45)),
            include_str!("scrapes/threads40_over.prom"),
        ),
    ];
    let f = fit(&steps, 800.0, 2).unwrap();
    let b = &f.binding;
    assert_eq!(
        (b.resource, b.confidence, b.size),
        (Resource::Threads, Confidence::High, Some(40.0)),
        "{b:#?}"
    );
    let pool = 50.0 / (39.0 / 800.0);
    assert_eq!(n(pool), "1026");
    assert!(
        b.sentence.contains(&format!(
            "more threads, or a model that does not hold one while waiting, would raise it; relieving it would help up to where HikariCP's 50 connections binds, at ~{}/s",
            n(pool)
        )),
        "{}",
        b.sentence
    );
    assert!(!b.sentence.contains("would not help"), "{}", b.sentence);
    // Without the series, 50 connections at c = 41.6 are no full pool.
    let bare = [
        steps[0].clone(),
        with(step(800.0, true, 55.0, Some(0.4)), spring_proc(50)),
        step(900.0, false, 700.0, Some(0.45)),
    ];
    let f = fit(&bare, 800.0, 2).unwrap();
    assert_eq!(f.binding.resource, Resource::Threads, "{:#?}", f.binding);
    assert_eq!(f.binding.also.len(), 1, "{:#?}", f.binding);
    // The gauges read below their max are evidence whatever names it.
    let f = fit(&steps, 800.0, 2).unwrap();
    let said: Vec<&str> = f.binding.evidence.iter().map(|e| e.text.as_str()).collect();
    assert!(
        said.contains(&"hikaricp_connections_active 40 of hikaricp_connections_max 50 at its highest around the knee"),
        "{said:#?}"
    );
}

fn n(v: f64) -> String {
    format!("{v:.0}")
}

/// Finding 3: the pool of 50 stays in the fitted network, so 80 threads
/// (measured 960/s), virtual threads and non-blocking are all capped by it.
#[test]
fn r50_13_the_pool_beside_the_threads_caps_every_what_if() {
    let steps = [
        step(100.0, true, 52.0, Some(0.05)),
        scraped(
            step(800.0, true, 55.0, Some(0.4)),
            include_str!("scrapes/threads40_knee.prom"),
        ),
        scraped(
            step(900.0, false, 700.0, Some(0.45)),
            include_str!("scrapes/threads40_over.prom"),
        ),
    ];
    let f = fit(&steps, 800.0, 2).unwrap();
    assert!(f.model.contains("pg_pool=50"), "{}", f.model);
    let w = what_ifs(&f, &[100.0, 800.0, 900.0]);
    let fitted = row(&w, "as fitted").slo_capacity_rps.unwrap();
    assert!((fitted - 800.0).abs() <= 0.06 * 800.0, "{w:#?}");
    let more = row(
        &w,
        "server.tomcat.threads.max 40 -> 80, the same pool of 50",
    );
    let more = more.slo_capacity_rps.unwrap();
    assert!(
        (more - 960.0).abs() <= 0.15 * 960.0 && more <= 1026.0,
        "{w:#?}"
    );
    for other in [
        "spring.threads.virtual.enabled=true",
        "non-blocking (WebFlux)",
    ] {
        let cap = row(&w, other).slo_capacity_rps.unwrap();
        assert!(cap <= 1026.0, "{other}: {w:#?}");
    }
}

/// Finding 4: a remote Spring service (no PID): HikariCP at 10 of 10 with
/// requests waiting names the pool from its series alone; with nothing
/// naming it, no what-if gives a number.
#[test]
fn r50_14_a_remote_pool_is_named_from_its_series_alone() {
    let steps = [
        step(50.0, true, 50.0, None),
        scraped(
            step(200.0, true, 51.0, None),
            include_str!("scrapes/pool10_over.prom"),
        ),
        step(220.0, false, 900.0, None),
    ];
    let f = fit(&steps, 200.0, 2).unwrap();
    let b = &f.binding;
    assert_eq!(
        (b.resource, b.confidence),
        (Resource::Pool, Confidence::High)
    );
    let w = what_ifs(&f, &[50.0, 200.0, 220.0]);
    let bigger = row(
        &w,
        "a pool of 20: spring.datasource.hikari.maximum-pool-size 10 -> 20",
    );
    assert!(bigger.slo_capacity_rps.is_some() && bigger.cannot_say.is_none());
    assert!(w.iter().all(|w| !w.change.contains("virtual")), "{w:#?}");
}

#[test]
fn r50_15_an_unknown_binding_says_cannot_say_never_a_number() {
    let steps = [
        step(50.0, true, 50.0, None),
        step(200.0, true, 51.0, None),
        step(220.0, false, 900.0, None),
    ];
    let f = fit(&steps, 200.0, 2).unwrap();
    assert_eq!(f.binding.confidence, Confidence::Low);
    let w = what_ifs(&f, &[50.0, 200.0, 220.0]);
    assert!(w[0].fitted && w[0].slo_capacity_rps.is_some(), "{w:#?}");
    for c in &w[1..] {
        assert_eq!((c.slo_capacity_rps, c.capacity_rps), (None, None), "{c:#?}");
        let why = c.cannot_say.as_deref().unwrap();
        assert!(
            why.starts_with("cannot say: no signal names what binds; its PID (--pid N)"),
            "{why}"
        );
    }
}

/// Finding 5: Tomcat's 20 threads at 400/s with 6 ms of S outside them:
/// Little's count 22 beside the configured 20, a what-if in the knob, and
/// the fitted network holds a thread 20 / 400 = 50 ms, not S.
#[test]
fn r50_16_sizes_as_configured_with_littles_count_beside() {
    let steps = [
        step(100.0, true, 56.0, Some(0.05)),
        scraped(
            step(400.0, true, 58.0, Some(0.2)),
            include_str!("scrapes/threads20_knee.prom"),
        ),
        step(440.0, false, 900.0, Some(0.22)),
    ];
    let f = fit(&steps, 400.0, 2).unwrap();
    let b = &f.binding;
    let c = 400.0 * 56.0 / 1000.0;
    assert!(
        b.sentence.starts_with(&format!(
            "is limited by Tomcat's 20 threads (Little's count {c:.0})"
        )),
        "{}",
        b.sentence
    );
    assert!((b.hold_ms - 20.0 / 400.0 * 1000.0).abs() < 1e-9);
    let w = what_ifs(&f, &[100.0, 400.0, 440.0]);
    let fitted = row(&w, "as fitted").slo_capacity_rps.unwrap();
    assert!((fitted - 400.0).abs() <= 0.05 * 400.0, "{w:#?}");
    let twice = row(&w, "server.tomcat.threads.max 20 -> 40")
        .slo_capacity_rps
        .unwrap();
    assert!((twice - 800.0).abs() <= 0.1 * 800.0, "{w:#?}");
    assert!(w.iter().all(|w| !w.change.contains("twice the threads")));
}

/// Finding 6: a FastAPI app on uvicorn whose anyio limiter is full: its
/// own knob, `async def`, more uvicorn workers; no virtual threads.
#[test]
fn r50_17_a_uvicorn_service_gets_its_own_knobs_and_no_virtual_threads() {
    let steps = [
        step(100.0, true, 50.0, Some(0.1)),
        scraped(
            step(800.0, true, 52.0, Some(0.6)),
            include_str!("scrapes/uvicorn_knee.prom"),
        ),
        step(880.0, false, 900.0, Some(0.66)),
    ];
    let f = fit(&steps, 800.0, 2).unwrap();
    let b = &f.binding;
    assert_eq!(
        (b.resource, b.size),
        (Resource::Threads, Some(40.0)),
        "{b:#?}"
    );
    assert!(
        b.sentence
            .starts_with("is limited by anyio's thread limiter's 40 threads"),
        "{}",
        b.sentence
    );
    let w = what_ifs(&f, &[100.0, 800.0, 880.0]);
    row(&w, "anyio's total_tokens 40 -> 80");
    row(&w, "async def handlers");
    row(&w, "uvicorn --workers 2, 40 threads each");
    assert!(
        w.iter()
            .all(|w| !w.change.contains("virtual") && !w.change.contains("gunicorn")),
        "{w:#?}"
    );
}

/// Finding 2, the close case: Tomcat full at 800/s while HikariCP's 45
/// would be at 45 / (40 / 800) = 900/s: both named, in order.
#[test]
fn r50_18_two_resources_near_saturation_are_named_in_order() {
    let steps = [
        step(100.0, true, 50.0, Some(0.05)),
        scraped(
            step(800.0, true, 52.0, Some(0.4)),
            include_str!("scrapes/both_knee.prom"),
        ),
        step(880.0, false, 900.0, Some(0.45)),
    ];
    let f = fit(&steps, 800.0, 2).unwrap();
    let b = &f.binding;
    assert_eq!(b.resource, Resource::Threads);
    let at = 45.0 / (40.0 / 800.0);
    let want = format!(
        "two resources near saturation: the threads binds first, at 800/s, HikariCP's 45 connections would at ~{}/s",
        n(at)
    );
    assert!(b.sentence.contains(&want), "{}\n{want}", b.sentence);
}

/// Finding 6: 0.78 and 0.82 of a core read differently; both say the
/// figure and both readings.
#[test]
fn r50_19_a_cpu_figure_near_the_line_says_both_readings() {
    for (busy, named, side) in [
        (0.78, Resource::Threads, "just under"),
        (0.82, Resource::Cpu, "just over"),
    ] {
        let t = busy / 780.0; // cores per req/s
        let steps = [
            step(200.0, true, 3.0, Some(200.0 * t)),
            step(780.0, true, 3.2, Some(busy)),
            step(860.0, false, 400.0, Some(0.86 * 1.02)),
        ];
        let f = fit(&steps, 780.0, 1).unwrap();
        let b = &f.binding;
        assert_eq!(b.resource, named, "{b:#?}");
        let want = format!(
            "the CPU, {busy:.2} of 1 cores busy ({:.0}%), is {side} the 80% line it is read as binding at: read both ways",
            busy * 100.0
        );
        assert!(b.sentence.contains(&want), "{}\n{want}", b.sentence);
    }
}

/// Finding 6: Python's series alone (no anyio gauges) do not say which of
/// its thread knobs a team turns: both are named, neither is "virtual".
#[test]
fn r50_27_python_threads_without_anyio_gauges_name_both_knobs() {
    let mut at = with(
        step(800.0, true, 52.0, Some(0.6)),
        Signals {
            threads: Some(threads(44.0, 1, &[(ThreadState::Futex, 40.0)])),
            ..Signals::default()
        },
    );
    at.metrics.insert("python_info".into(), 1.0);
    let steps = [
        step(100.0, true, 50.0, Some(0.1)),
        at,
        step(880.0, false, 900.0, Some(0.66)),
    ];
    let f = fit(&steps, 800.0, 2).unwrap();
    assert_eq!(f.binding.resource, Resource::Threads, "{:#?}", f.binding);
    let c = (800.0_f64 * 50.0 / 1000.0).round() as u64;
    let w = what_ifs(&f, &[100.0, 800.0, 880.0]);
    row(
        &w,
        &format!(
            "about {c} -> {} threads (Little's count; the configured size unread): gunicorn --threads (gthread) or anyio's total_tokens (uvicorn, def handlers)",
            2 * c
        ),
    );
    assert!(w.iter().all(|w| !w.change.contains("virtual")), "{w:#?}");
}

/// A CPU-bound Spring service (0.95 ms a request on its one core, 1,000/s,
/// 5 held at once) fills its 200 Tomcat threads one step up, the queue
/// moving into them: the CPU, not the threads.
#[test]
fn r50_28_threads_filled_only_under_overload_far_from_littles_count_do_not_bind() {
    let full = "tomcat_threads_busy_threads 200\ntomcat_threads_config_max_threads 200\n";
    let calm = "tomcat_threads_busy_threads 9\ntomcat_threads_config_max_threads 200\n";
    let steps = [
        step(250.0, true, 5.0, Some(0.2375)),
        scraped(step(1000.0, true, 5.0, Some(0.95)), calm),
        scraped(step(1100.0, false, 900.0, Some(1.0)), full),
    ];
    let f = fit(&steps, 1000.0, 1).unwrap();
    assert_eq!(f.binding.resource, Resource::Cpu, "{:#?}", f.binding);
}
