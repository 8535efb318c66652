//! The services the property is run over: six classes, each drawn from
//! its case number (the same number, the same service), its objective
//! loose enough for its noise.

use std::time::Duration;

use iolab_model::capacity::{Resource, Slo};
use iolab_model::ModelKind;

use iolab_capacity::sim::dial::{unit, Pauses};
use iolab_capacity::sim::{network as net, work, Dial, Service};

/// A generated service and what it should give.
pub struct Case {
    pub class: &'static str,
    pub service: Service,
    pub dial: Dial,
    pub slo: Slo,
    pub timeout: Duration,
    pub binds: Resource,
}

/// Draws for case `i`: uniform in [lo, hi).
struct Draw {
    seed: u64,
    k: u64,
}

impl Draw {
    fn in_(&mut self, lo: f64, hi: f64) -> f64 {
        self.k += 1;
        lo + (hi - lo) * unit(self.seed, self.k)
    }

    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        self.in_(lo as f64, hi as f64 + 1.0).floor() as u64
    }
}

/// Case `i`: its class by `i`, everything else drawn.
pub fn case(i: usize) -> Case {
    let mut d = Draw {
        seed: 0x5eed_0000 + i as u64,
        k: 0,
    };
    let cores = [1, 2, 4][d.int(0, 2) as usize];
    let (class, service, binds) = match i % 6 {
        0 => {
            let n = d.int(2, 32);
            let (t, s) = times(&mut d, cores, n, 180.0);
            let net = net(
                ModelKind::Pool,
                &[("threads", n)],
                work(t, 0.0, s - t),
                cores,
            );
            ("threads", Service::of(net), Resource::Threads)
        }
        1 => {
            let n = d.int(2, 8);
            let (t, s) = times(&mut d, cores, n, 100.0);
            let net = net(
                ModelKind::Prefork,
                &[("processes", n)],
                work(t, 0.0, s - t),
                cores,
            );
            let mut service = Service::of(net);
            service.supervisors = d.int(0, 3) as u32;
            ("workers", service, Resource::Workers)
        }
        2 => {
            let (t, s) = times(&mut d, cores, 1, 60.0);
            let pairs = [("workers", 1), ("processes", 1)];
            let net = net(ModelKind::LoopBlocking, &pairs, work(t, 0.0, s - t), cores);
            ("event loop", Service::of(net), Resource::EventLoop)
        }
        3 => ("pool binds", pool_binds(&mut d, cores), Resource::Pool),
        4 => {
            let n = d.int(2, 24);
            let (t, s) = times(&mut d, cores, n, 150.0);
            let w = d.in_(0.05, 0.6) * (s - t);
            // Spare now; some bind once a change lifts the threads' limit.
            let pool = d.int(n + n / 2 + 1, 3 * n);
            let pairs = [("threads", n), ("pg_pool", pool)];
            let net = net(ModelKind::Pool, &pairs, work(t, w, s - t - w), cores);
            ("pool spare", Service::of(net), Resource::Threads)
        }
        _ => ("cpu", cpu_binds(&mut d, cores), Resource::Cpu),
    };
    let pauses = (i % 4 == 3).then(|| Pauses {
        every_s: d.in_(2.0, 5.0),
        min_ms: 50.0,
        max_ms: d.in_(50.0, 200.0),
    });
    let s = service.service_ms();
    let slack = match pauses {
        Some(p) => p.max_ms + 100.0,
        None => (2.0 * s).max(20.0),
    };
    let bound = s + slack;
    Case {
        class,
        service,
        dial: Dial {
            seed: i as u64,
            spread: d.in_(0.0, 0.3),
            pauses,
            slow: None,
            neighbour: None,
        },
        slo: format!("p99<{bound:.0}ms,success>=99%")
            .parse()
            .expect("an objective"),
        timeout: Duration::from_secs_f64((4.0 * bound / 1000.0).max(1.0)),
        binds,
    }
}

/// A request's CPU T and service time S, ms, for `held` requests at once
/// on `cores`: S from 5 ms per request held (at most 200 req/s: a
/// simulated second costs its requests) to `longest`; T a quarter to half
/// of what keeps the cores at most half busy at capacity (a change that
/// lifts the limit then holds at most 8 times the rate), at most 30% of S.
fn times(d: &mut Draw, cores: u32, held: u64, longest: f64) -> (f64, f64) {
    let s = d.in_((5.0 * held as f64).max(5.0), longest);
    let most = (0.5 * f64::from(cores) * s / held as f64).min(0.3 * s);
    (d.in_(0.25, 0.5) * most, s)
}

/// A connection pool of 2-16 held through nearly all of each request
/// (the binding rule names a pool whose connections match c), by a pool
/// of four times as many threads, or by virtual threads.
fn pool_binds(d: &mut Draw, cores: u32) -> Service {
    let p = d.int(2, 16);
    let (t, s) = times(d, cores, p, 150.0);
    let t = t.min(0.05 * s);
    let rest = d.in_(0.0, 0.05) * s;
    let steps = work(t, s - t - rest, rest);
    Service::of(if d.in_(0.0, 1.0) < 0.5 {
        net(
            ModelKind::Pool,
            &[("threads", 4 * p), ("pg_pool", p)],
            steps.clone(),
            cores,
        )
    } else {
        net(ModelKind::Virtual, &[("pg_pool", p)], steps, cores)
    })
}

/// 5-10 ms of CPU a core and up to 30 ms of wait: event loops on every
/// core, or threads enough (three times what the cores hold).
fn cpu_binds(d: &mut Draw, cores: u32) -> Service {
    let c = f64::from(cores);
    let t = d.in_(5.0, 10.0) * c;
    let rest = d.in_(0.0, 30.0);
    Service::of(if d.in_(0.0, 1.0) < 0.5 {
        let pairs = [("workers", u64::from(cores))];
        net(ModelKind::LoopAsync, &pairs, work(t, 0.0, rest), cores)
    } else {
        let threads = (3.0 * c * (t + rest) / t).ceil() as u64;
        net(
            ModelKind::Pool,
            &[("threads", threads)],
            work(t, 0.0, rest),
            cores,
        )
    })
}
