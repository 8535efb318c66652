//! A replayed mix read by the fit.

use super::*;

/// A replayed mix's median is one endpoint's: Little's law reads the mean
/// of its endpoints' (a pool of 4 at 16.5 ms mean, 6.8 ms median, was
/// fitted as 2).
#[test]
fn r53_3_a_replayed_mix_is_fitted_on_its_mean_service_time() {
    let ep = |sent: u64, p50: f64| {
        let mut e = iolab_model::attack::EndpointResult {
            sent,
            ..Default::default()
        };
        e.latency_ms.p50 = p50;
        e
    };
    let mut steps = vec![step(100.0, true, 6.8, None), step(240.0, true, 6.8, None)];
    steps.push(step(260.0, false, 6.8, None));
    for s in &mut steps {
        s.attack.endpoints = vec![ep(50, 0.3), ep(30, 50.0), ep(20, 7.0)];
    }
    let f = fit(&steps, 240.0, 2).unwrap();
    assert!((f.service_ms - 16.55).abs() < 1e-9, "{}", f.service_ms);
    assert!((f.concurrency - 3.972).abs() < 1e-9, "{}", f.concurrency);
    // Without a mix the median stands.
    steps.iter_mut().for_each(|s| s.attack.endpoints.clear());
    assert_eq!(fit(&steps, 240.0, 2).unwrap().service_ms, 6.8);
}

/// Issue 53's pool-bound mix on an event loop pinned to CPU 0 (GET /health
/// 50%, HEAD /work 50 ms on a pool of 10 30%, GET /work 3 ms of CPU 20%)
/// held 650/s, the pool's; the fit read its core 0.58 busy (the slope of
/// the pinned core's busy time) and its threads 0.25 waiting for a CPU,
/// and named the CPU ("busy + wait >= 80% of the cores"), though the core
/// was idle 40% of the time: its own threads queueing behind each other on
/// it, not a want of more CPU. The wait counts only as far as other work
/// on the core explains it.
#[test]
fn r53_10_a_targets_own_threads_queueing_on_a_half_idle_core_is_not_the_cpu() {
    let ep = |sent: u64, p50: f64| {
        let mut e = iolab_model::attack::EndpointResult {
            sent,
            ..Default::default()
        };
        e.latency_ms.p50 = p50;
        e
    };
    // The process 0.73 ms a request, its core 0.9 ms (the kernel's work
    // for its packets, PostgreSQL's backends when they ran there).
    let at = |rate: f64, passed: bool, neighbours: f64, wait: f64| {
        let own = 0.02 + rate * 0.00073;
        let mut s = step(rate, passed, 0.3, Some(own));
        s.core_busy_cores = Some(0.05 + rate * 0.0009 + neighbours);
        s.attack.endpoints = vec![ep(50, 0.3), ep(30, 50.0), ep(20, 3.0)];
        let mut t = threads(
            3.0,
            1,
            &[(ThreadState::Running, 0.6), (ThreadState::Poll, 0.4)],
        );
        t.cpu_wait = Some(wait);
        t.hottest = Some(HotThread {
            name: "iolab-loop".into(),
            cores: own * 0.9,
        });
        with(
            s,
            Signals {
                threads: Some(t),
                downstream: vec![Downstream {
                    endpoint: "127.0.0.1:5432".into(),
                    connections: 10,
                }],
                ..Signals::default()
            },
        )
    };
    let steps = |neighbours: f64, wait: f64| {
        [
            at(200.0, true, neighbours, wait / 3.0),
            at(400.0, true, neighbours, wait / 2.0),
            at(650.0, true, neighbours, wait),
            at(700.0, false, neighbours, wait),
        ]
    };
    let f = fit(&steps(0.0, 0.25), 650.0, 1).unwrap();
    assert_eq!(f.cpu_source, Some(CpuSource::Cores));
    let busy = f.cpu_cores_at_capacity.unwrap();
    assert!((busy - 0.585).abs() < 1e-6, "{busy}");
    assert_eq!(f.binding.resource, Resource::Pool, "{}", f.binding.sentence);
    assert_eq!(f.binding.size, Some(10.0));
    // Another process on the core (0.35 of it) while the loop waited as
    // long: starved for real, the CPU (read from the process alone now).
    let f = fit(&steps(0.35, 0.35), 650.0, 1).unwrap();
    assert_eq!(f.cpu_source, Some(CpuSource::Process));
    assert_eq!(f.binding.resource, Resource::Cpu, "{}", f.binding.sentence);
    // Unpinned (no core read), the wait cannot be told apart: counted whole
    // (0.47 busy + 0.35 waiting).
    let mut loose = steps(0.0, 0.35);
    loose.iter_mut().for_each(|s| s.core_busy_cores = None);
    let f = fit(&loose, 650.0, 1).unwrap();
    assert_eq!(f.binding.resource, Resource::Cpu, "{}", f.binding.sentence);
}
