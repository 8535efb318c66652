//! The real runs' regressions replayed on the simulated bench, each named
//! after the one it replays, and what the bench itself promises (the same
//! seed, the same search).

use std::time::Duration;

use iolab_model::capacity::usl::Closer;
use iolab_model::capacity::{CpuSource, Resource, SearchStage, StepRecord};
use iolab_model::ModelKind;
use iolab_predict::fit::fit;

use super::super::{truth, Jit};
use super::*;
use crate::whatif::holds::Holds;
use crate::Bench;

/// One worker, one request at a time, 50 ms each: 20 req/s at most.
fn one_worker() -> SimBench {
    let n = net(
        ModelKind::Prefork,
        &[("processes", 1)],
        work(0.5, 0.0, 49.5),
        1,
    );
    SimBench::new(Service::of(n), Dial::quiet(22), Duration::from_secs(1))
}

/// s15: a full-size Spring copy failed 7,682/s, then 3,841, 1,920 and
/// 960/s back to back, each on the backlog of the last, and B was held to
/// 720/s where its search then passed 4,800. Held at 60/s, the one-worker
/// server is left a second's backlog; a hold at 5/s just after it passes
/// only when the copy recovered first.
#[test]
fn r31_22_a_copy_recovers_after_a_failed_hold_before_the_next() {
    let slo: Slo = "p99<300ms,success>=99%".parse().unwrap();
    let hold = Duration::from_secs(1);
    let bench = one_worker();
    let holds = Holds::new(&slo, 1e5, &bench, hold, CpuSource::Process);
    let over = holds.again(60.0, 1).unwrap();
    assert!(!over[0].met, "60/s on a 20/s server met {slo}");
    let under = holds.again(5.0, 1).unwrap();
    assert!(under[0].met, "5/s after the failed hold: {under:?}");
    // Not recovered, the same hold fails on the backlog.
    let bench = one_worker();
    let first = bench.step(&slo, 60.0, hold, SearchStage::Ramp).unwrap();
    let next = bench.step(&slo, 5.0, hold, SearchStage::Ramp).unwrap();
    assert!(!first.passed && !next.passed, "{}", next.verdict);
}

/// Tomcat's 10 threads x (2 ms of CPU + 103 ms), one core, a JIT burning
/// `cores` through its first `requests` answered.
fn compiling(cores: f64, requests: f64) -> Service {
    let n = net(
        ModelKind::Pool,
        &[("threads", 10)],
        work(2.0, 0.0, 103.0),
        1,
    );
    let mut s = Service::of(n);
    s.other_threads = 20;
    s.jit = Some(Jit { cores, requests });
    s
}

/// pt1/ci19/s12: a Spring pool of 10 threads, its JIT compiling through
/// the light steps, was named "limited by CPU" (11 ms a request, the
/// median over the steps); a hold's cost counted the compiler threads'
/// CPU as the handler's. Read apart (`compiler_cores`), the search names
/// the threads and reads the handler's 2 ms; read together, as before,
/// the same steps cost several times that.
#[test]
fn r31_18_r31_19_a_jit_burning_through_the_light_steps_is_left_out() {
    let service = compiling(0.6, 1500.0);
    let slo: Slo = "p99<400ms,success>=99%".parse().unwrap();
    let (s, _) = search(&service, &Dial::quiet(18), &slo, Duration::from_secs(2));
    let f = s.fit.as_ref().expect("a fit");
    assert_eq!(
        f.binding.resource,
        Resource::Threads,
        "{}",
        f.binding.sentence
    );
    let ms = f.cpu_per_request_ms.unwrap();
    assert!((ms - 2.0).abs() < 0.3, "{ms} ms a request, not 2");
    assert!(s.steps.iter().any(|st| st.compiler_cores.is_some()));
    // The same steps with the compiler threads' CPU counted as the handler's.
    let together: Vec<StepRecord> = s
        .steps
        .iter()
        .map(|st| StepRecord {
            compiler_cores: None,
            ..st.clone()
        })
        .collect();
    let g = fit(&together, s.capacity_rps.unwrap(), 1).unwrap();
    assert!(g.cpu_per_request_ms.unwrap() > 2.0 * ms, "{g:?}");
}

/// r31_03/r31_14: gunicorn, 4 sync workers x (2.2 ms of CPU + 20 ms) on
/// one core under iolab's python runtime, ran 7 single-threaded processes
/// (a wrapper script, the launcher, the master): its 4 workers bind,
/// found within 5% of the truth.
#[test]
fn r31_14_gunicorns_supervisor_processes_are_not_workers() {
    let n = net(
        ModelKind::Prefork,
        &[("processes", 4)],
        work(2.2, 0.0, 20.0),
        1,
    );
    let mut service = Service::of(n);
    service.supervisors = 3;
    let slo: Slo = "p99<100ms,success>=99%".parse().unwrap();
    let timeout = Duration::from_secs(1);
    let dial = Dial {
        spread: 0.1,
        ..Dial::quiet(14)
    };
    let (s, _) = search(&service, &dial, &slo, timeout);
    let f = s.fit.as_ref().expect("a fit");
    assert_eq!(
        f.binding.resource,
        Resource::Workers,
        "{}",
        f.binding.sentence
    );
    assert_eq!(f.binding.size, Some(4.0), "{}", f.binding.sentence);
    let found = s.capacity_rps.unwrap();
    let step = Duration::from_secs_f64(s.steps.last().unwrap().duration_s);
    let truth = truth::capacity(&service, &dial, &slo, timeout, step);
    assert!(
        (found - truth).abs() <= 0.05 * truth,
        "{found} against {truth}"
    );
}

/// The bench is a function of its seed: the same seed, the same search;
/// another seed, other draws.
#[test]
fn the_same_seed_gives_the_same_search() {
    let n = net(ModelKind::Pool, &[("threads", 8)], work(2.0, 0.0, 40.0), 2);
    let slo: Slo = "p99<150ms,success>=99%".parse().unwrap();
    let run = |seed| {
        let dial = Dial {
            spread: 0.2,
            ..Dial::quiet(seed)
        };
        let (s, _) = search(&Service::of(n.clone()), &dial, &slo, Duration::from_secs(1));
        s.steps
            .iter()
            .map(|s| (s.rate_rps, s.p99_ms))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

/// A loop computing 5 ms a request on one core (200/s), its objective and
/// timeout.
fn one_cpu_loop() -> (Service, Slo, Duration) {
    let n = net(
        ModelKind::LoopAsync,
        &[("workers", 1)],
        work(5.0, 0.0, 5.0),
        1,
    );
    let slo = "p99<60ms,success>=99%".parse().unwrap();
    (Service::of(n), slo, Duration::from_secs(1))
}

/// A slower CPU for a while: a loop computing 5 ms a request on one core
/// (200/s), its CPU 1.5 times slower from `from_s` on. Slow through the
/// search, it holds what the slow CPU holds and costs what the slow CPU
/// takes; slow from the middle of its search on, it is found between the
/// two.
#[test]
fn a_slower_cpu_for_a_while_is_read_as_the_cpu_the_steps_ran_on() {
    let (service, slo, timeout) = one_cpu_loop();
    let slow_from = |from_s: f64| Dial {
        slow: Some(super::super::SlowCpu {
            from_s,
            for_s: 1e6,
            factor: 1.5,
        }),
        ..Dial::quiet(5)
    };
    let step = Duration::from_secs(1);
    let fast = truth::capacity(&service, &Dial::quiet(5), &slo, timeout, step);
    let slow = truth::capacity(&service, &slow_from(0.0), &slo, timeout, step);
    assert!(slow < 0.7 * fast, "{slow} against {fast}");
    let (s, bench) = search(&service, &slow_from(0.0), &slo, timeout);
    let found = s.capacity_rps.unwrap();
    assert!(
        (found - slow).abs() <= 0.05 * slow,
        "{found} against {slow}"
    );
    let ms = s.fit.as_ref().and_then(|f| f.cpu_per_request_ms).unwrap();
    assert!((ms - 7.5).abs() < 0.75, "{ms} ms a request, not 7.5");
    // Slow all through, the CPU did not move: the machine was steady.
    let m = s.machine.clone().expect("the bench's machine is watched");
    assert_eq!(m.moved_pct(), Some(0.0), "{m:?}");
    assert!(m.allows(), "{m:?}");
    let (s, _) = search(&service, &slow_from(bench.now_s() / 2.0), &slo, timeout);
    let found = s.capacity_rps.unwrap();
    assert!(
        found >= 0.95 * slow && found <= 1.05 * fast,
        "{found}: {slow}..{fast}"
    );
    // Slow from the middle on: the speed moved 50%, more than the 5% asked
    // allows; the interval reaches a quarter of the answer either side
    // (issue 51: noise named and the interval widened, never a tight number).
    let m = s.machine.clone().unwrap();
    assert!((m.moved_pct().unwrap() - 50.0).abs() < 1e-9, "{m:?}");
    assert!(!m.allows(), "{m:?}");
    let i = s.interval.unwrap();
    assert!(
        i.low_rps <= 0.75 * found && i.high_rps >= 1.25 * found,
        "{i:?} around {found}"
    );
}

/// r51_14: a neighbour on the target's core (a busy loop pinned beside
/// it, scripts/bench-repeat's HOG) taking half of it: through the whole
/// search of the 200/s loop above, the capacity read is about half the
/// loop's own; the neighbour is read as the real reader reads one (others
/// ran half of each second, the loop's thread waited half of it) and the
/// interval reaches up by what it took, p / (1 - p) = twice the rate, far
/// enough to hold the quiet capacity, and never down. Through the first
/// half only, it reaches as far though the answer was not moved: the
/// reader cannot tell which steps the neighbour met.
#[test]
fn r51_14_a_neighbour_on_the_targets_core_widens_the_interval_up_to_the_quiet_truth() {
    let (service, slo, timeout) = one_cpu_loop();
    let (quiet, bench) = search(&service, &Dial::quiet(5), &slo, timeout);
    assert_eq!(quiet.machine.as_ref().and_then(|m| m.neighbours), None);
    let truth = quiet.capacity_rps.unwrap();
    for (for_s, moved) in [(1e6, true), (bench.now_s() / 2.0, false)] {
        let hog = Dial {
            neighbour: Some(super::super::Neighbour {
                from_s: 0.0,
                for_s,
                share: 0.5,
            }),
            ..Dial::quiet(5)
        };
        let (s, _) = search(&service, &hog, &slo, timeout);
        let found = s.capacity_rps.unwrap();
        let m = s.machine.clone().expect("the bench's machine is watched");
        let seen = m.neighbours.expect("the neighbour read");
        assert!((seen.took_pct - 50.0).abs() < 1e-9, "{seen:?}");
        assert!(!m.allows(), "{m:?}");
        let i = s.interval.unwrap();
        eprintln!(
            "quiet {truth:.0}/s; a neighbour for {for_s:.0} s: {found:.0}/s ({:.0}-{:.0}), others {:.0}% on average",
            i.low_rps, i.high_rps, seen.mean_pct
        );
        assert_eq!(found < 0.7 * truth, moved, "{found} against {truth}");
        assert!(i.high_rps >= 2.0 * found * 0.999, "{i:?} around {found}");
        assert!(
            i.low_rps <= truth && truth <= i.high_rps,
            "{i:?} misses {truth}"
        );
        assert!(i.low_rps <= found, "{i:?}: never widened down past {found}");
    }
}

/// `--sweep` on the bench: closed-loop levels up to 8 clients against a
/// pool of 4 threads x 20 ms (200/s); at 16 it holds its 200/s (the
/// threads bind; more clients only queue), which the queueing fit
/// predicts and the law, fitted to a curve that stops at a hard limit,
/// reads as a decline: the check says the queueing fit is the closer.
#[test]
fn a_sweep_on_the_bench_is_predicted_at_twice_its_clients() {
    let n = net(ModelKind::Pool, &[("threads", 4)], work(1.0, 0.0, 19.0), 2);
    let bench = SimBench::new(Service::of(n), Dial::quiet(9), Duration::from_secs(2));
    let slo: Slo = "p99<100ms,success>=99%".parse().unwrap();
    let o = crate::Options {
        sweep: Some(crate::SweepOptions {
            max: 8,
            step: Duration::from_secs(2),
        }),
        ..bench.options()
    };
    let s = crate::run("sim", &bench, &slo, &o, Vec::new(), &|_: &StepRecord| {});
    let sweep = s.sweep.expect("a sweep");
    let twice = sweep.twice.expect("a check at twice N");
    assert_eq!(twice.concurrency, 16);
    let measured = twice.measured.throughput_rps;
    assert!((measured - 200.0).abs() < 10.0, "{measured}");
    let queueing = twice.queueing_rps.unwrap();
    assert!(
        (queueing - measured).abs() <= 0.05 * measured,
        "{queueing} against {measured}"
    );
    assert_eq!(twice.closer, Some(Closer::Queueing), "{twice:?}");
}
