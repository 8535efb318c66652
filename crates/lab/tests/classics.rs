//! The classic experiments' checks (issue 9), on the presets themselves at a
//! small time-scale and with shortened runs: each test loads `presets/eN-*.toml`,
//! keeps the runs a check needs, runs them through the lab runner against the
//! real `iolab serve` targets, and checks the shape the article reported.
//! Margins are wide (the machine is shared): these check behaviour, not speed.
//!
//! The targets are served by the `iolab` binary of the same build
//! (`target/<profile>/iolab`, built by `cargo test --workspace`; or `IOLAB_BIN`).
//! E4 needs memcached (`IOLAB_MC`, exported by scripts/test).

mod common;

use common::iolab_bin;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

use iolab_lab::preset::{parse_plan, Overrides};
use iolab_lab::{run, RunOptions, Silent};
use iolab_model::attack::AttackResult;
use iolab_model::experiment::{ExperimentPlan, Work, WorkBody};
use iolab_model::runs::{Outcome, RunsFile};
use iolab_model::Driver;

/// One experiment at a time: two at once on two cores would measure each other.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The preset file `presets/NAME.toml` at time-scale `scale`, keeping the
/// runs `keep` accepts.
fn preset(name: &str, scale: f64, keep: impl Fn(&str) -> bool) -> ExperimentPlan {
    let path = format!("{}/../../presets/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let over = Overrides {
        scale: Some(scale),
        ..Overrides::default()
    };
    let mut plan = parse_plan(&text, &format!("presets/{name}.toml"), over).unwrap();
    // The built-in runs: the original-runtime rows (runtime = "scala", "play")
    // are checked by their runtime folders' own tests.
    plan.runs.retain(|r| r.runtime.is_rust() && keep(&r.name));
    assert!(!plan.runs.is_empty(), "{name}: no run kept");
    plan
}

/// Cut every open-loop run to `length` (scaled time), keeping its rate.
fn shorten(plan: &mut ExperimentPlan, length: Duration) {
    for r in &mut plan.runs {
        if let Work::Http(w) = &mut r.work {
            if let Driver::Open { phases, .. } = &mut w.driver {
                for p in phases {
                    p.duration = length;
                }
            }
        }
    }
}

fn execute(plan: &ExperimentPlan) -> RunsFile {
    let tmp = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        exe: Some(iolab_bin()),
        // The shared vectors have their own tests; here every second counts.
        verify: false,
        ..RunOptions::new(tmp.path().join("res"))
    };
    let file = run(plan, &opts, &Silent).unwrap();
    for r in &file.runs {
        assert_eq!(r.outcome, Outcome::Completed, "{}: {:?}", r.name, r.outcome);
    }
    file
}

fn attack<'a>(file: &'a RunsFile, name: &str) -> &'a AttackResult {
    file.runs
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no run '{name}'"))
        .attack
        .as_ref()
        .unwrap_or_else(|| panic!("run '{name}' has no attack result"))
}

/// Accounting holds whatever the result: planned = sent + not sent, and
/// every answer is an ok or an error.
fn accounted(name: &str, a: &AttackResult) {
    let r = &a.requests;
    assert_eq!(r.planned, r.sent + r.not_sent, "{name}: {r:?}");
    assert!(r.ok <= r.sent, "{name}: {r:?}");
}

fn summary(name: &str, a: &AttackResult) -> String {
    format!(
        "{name}: {} of {} ok ({:.0}%), goodput {:.0}/s of {:.0}/s offered, p99 {:.0} ms",
        a.requests.ok,
        a.requests.planned,
        100.0 * a.success_ratio(),
        a.throughput_rps.goodput,
        a.throughput_rps.offered,
        a.latency_ms.p99
    )
}

/// E2: Tomcat's 200 threads cannot hold 450 sleeping requests a second, so
/// successes fall far below what is offered (3,400 of 27,000 in the
/// article), while the non-blocking delay serves nearly everything.
/// Time-scale 0.2 (the preset's default: 200 ms sleeps at 2,250 req/s, 2 s
/// timeout), runs cut to 4 s; keep-alive, as the corrected variant.
#[test]
fn e2_pool_goodput_collapses_and_loop_async_serves_all() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let keep = [
        "mvc-sleep-connections=keep-alive",
        "webflux-delay-connections=keep-alive",
    ];
    let mut plan = preset("e2-spring", 0.2, |n| keep.contains(&n));
    shorten(&mut plan, Duration::from_secs(4));
    let file = execute(&plan);
    let (pool, delay) = (attack(&file, keep[0]), attack(&file, keep[1]));
    let said = format!("{}\n{}", summary(keep[0], pool), summary(keep[1], delay));
    eprintln!("{said}");
    accounted(keep[0], pool);
    accounted(keep[1], delay);
    // 200 threads x 5/s = 1,000/s of 2,250/s offered; the first ~3,240
    // succeed before the queue outgrows the timeout: ~36% of 9,000.
    assert!(pool.success_ratio() < 0.6, "pool should collapse:\n{said}");
    assert!(pool.requests.ok > 0, "the pool serves some:\n{said}");
    assert!(
        delay.success_ratio() > 0.95,
        "loop-async should serve ~all:\n{said}"
    );
    assert!(
        delay.throughput_rps.goodput > 1.5 * pool.throughput_rps.goodput,
        "{said}"
    );
}

/// E5 at 10 req/s (time-scale 0.5: 20 req/s, 100+250+150 ms, 1.5 s timeout,
/// 5 s): 8 threads at 1 s a request cannot keep up (< 100%; about 80 of 100
/// by the arithmetic), and three blocked threads per request on a pool of 7
/// do worse still (about 50).
#[test]
fn e5_sync_blocking_falls_short_and_async_blocking_falls_further() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let keep = ["sync-blocking-rate=10", "async-blocking-rate=10"];
    let plan = preset("e5-fanout", 0.5, |n| keep.contains(&n));
    let file = execute(&plan);
    let (sync, blocking) = (attack(&file, keep[0]), attack(&file, keep[1]));
    let said = format!("{}\n{}", summary(keep[0], sync), summary(keep[1], blocking));
    eprintln!("{said}");
    accounted(keep[0], sync);
    accounted(keep[1], blocking);
    assert!(sync.success_ratio() < 1.0, "{said}");
    assert!(sync.success_ratio() > 0.3, "{said}");
    assert!(blocking.success_ratio() < sync.success_ratio(), "{said}");
}

/// E5 at 1,000 req/s on timers, at full scale (500 ms of parallel waits),
/// cut to 3 s: every request succeeds, p99 under 1.1 x 500 ms.
#[test]
fn e5_async_non_blocking_serves_1000_per_second_in_500_ms() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let name = "async-non-blocking-rate=1000";
    let mut plan = preset("e5-fanout", 1.0, |n| n == name);
    shorten(&mut plan, Duration::from_secs(3));
    let file = execute(&plan);
    let a = attack(&file, name);
    let said = summary(name, a);
    eprintln!("{said}");
    accounted(name, a);
    assert_eq!(a.requests.ok, a.requests.planned, "{said}");
    assert!(a.requests.planned >= 2900, "{said}");
    assert!(a.latency_ms.p99 < 1.1 * 500.0, "{said}");
    assert!(
        a.latency_ms.p50 >= 500.0,
        "the waits ran in parallel, not skipped: {said}"
    );
}

/// E4: 170 clients asking for a 1 MB memcached value, answered back to the
/// client (`body = "value"`): an event loop pushing every value through ONE
/// memcached connection (the original's set-up) is slower than the same loop
/// with a pool of 8.
///
/// On loopback a 1 MB get takes a fraction of a millisecond and two cores
/// are the bottleneck whichever the connections (the saved e4 results show
/// it), so here memcached sits behind a proxy that holds each request 5 ms,
/// as a network would: one connection then carries at most 200 gets a second
/// whatever the CPU, eight carry eight times that. The cost of the single
/// connection is what is checked, not the machine. Needs memcached
/// (IOLAB_MC); the value is stored here, under a key of this test's own.
#[test]
fn e4_one_memcached_connection_is_slower_than_a_pool() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mc = std::env::var("IOLAB_MC").unwrap_or_else(|_| {
        panic!(
            "IOLAB_MC is not set: run the tests with scripts/test, or first \
             eval \"$(scripts/services up)\" to start the real services"
        )
    });
    let key = "iolab-classics-e4";
    iolab_backends::mc::set(&mc, key, &vec![b'x'; 1_024_000]).unwrap();
    let keep = ["async-1conn", "async-8conn"];
    let mut plan = preset("e4-memcached", 1.0, |n| keep.contains(&n));
    for r in &mut plan.runs {
        let Work::Http(w) = &mut r.work else {
            unreachable!()
        };
        assert_eq!(w.body, WorkBody::Value, "the preset answers the value");
        w.steps = iolab_model::steps::parse(&format!("mc:{key}")).unwrap();
    }
    // The targets the runner starts find memcached in IOLAB_MC. Only this
    // test runs now (the lock above), so nothing else reads the variable.
    let proxy = delay_proxy(mc.clone(), Duration::from_millis(5));
    std::env::set_var("IOLAB_MC", &proxy);
    let file = std::panic::catch_unwind(|| execute(&plan));
    std::env::set_var("IOLAB_MC", &mc);
    let file = file.unwrap_or_else(|e| std::panic::resume_unwind(e));
    let (one, pooled) = (attack(&file, keep[0]), attack(&file, keep[1]));
    let said = format!("{}\n{}", summary(keep[0], one), summary(keep[1], pooled));
    eprintln!("{said}");
    for (name, a) in [(keep[0], one), (keep[1], pooled)] {
        accounted(name, a);
        assert_eq!(a.requests.ok, 1000, "every value arrives: {said}");
    }
    assert!(
        one.throughput_rps.goodput < 250.0,
        "one connection, 5 ms a get: {said}"
    );
    assert!(
        pooled.throughput_rps.goodput > 1.5 * one.throughput_rps.goodput,
        "{said}"
    );
}

/// A TCP proxy on loopback in front of `upstream` that holds every chunk
/// sent to it for `delay` before passing it on (answers flow back at once):
/// a network's round trip, for a client that waits for each answer.
fn delay_proxy(upstream: String, delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || pump(client, server, delay));
            std::thread::spawn(move || pump(s2, c2, Duration::ZERO));
        }
    });
    addr
}

fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let mut buf = vec![0u8; 256 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) => {
                std::thread::sleep(delay);
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

/// E3 at n = 100: the five executors of the preset take 100 / 13 / 7 / 1 / 1
/// service times (ceil(n / P) for a pool of P), within 10%; at time-scale
/// 0.2 (S = 200 ms), so scheduling noise stays small beside S. The two
/// one-round executors get 25% above: starting 100 threads (or timers) is an
/// absolute cost, paid once, that a loaded machine stretches.
/// (crates/batch tests each executor's formula; this checks the preset.)
#[test]
fn e3_totals_follow_ceil_n_over_p() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut plan = preset("e3-futures", 0.2, |n| n.ends_with("-n=100"));
    assert_eq!(plan.runs.len(), 5, "five executors at n = 100");
    plan.runs.sort_by(|a, b| a.name.cmp(&b.name));
    let file = execute(&plan);
    let service_s = 0.2;
    let expected = [
        ("fixed-pool-8-n=100", 13.0),
        ("global-blocking-n=100", 1.0),
        ("global-pool-16-n=100", 7.0),
        ("scheduled-n=100", 1.0),
        ("sequential-n=100", 100.0),
    ];
    let mut said = String::new();
    for (name, rounds) in expected {
        let r = file.runs.iter().find(|r| r.name == name).unwrap();
        let total = r.batch.as_ref().unwrap().total_s;
        said.push_str(&format!(
            "{name}: {total:.3} s = {:.2} x S (expected {rounds})\n",
            total / service_s
        ));
    }
    eprint!("{said}");
    for (name, rounds) in expected {
        let r = file.runs.iter().find(|r| r.name == name).unwrap();
        let ratio = r.batch.as_ref().unwrap().total_s / service_s / rounds;
        let most = if rounds == 1.0 { 1.25 } else { 1.1 };
        assert!((0.9..=most).contains(&ratio), "{name}:\n{said}");
    }
}
