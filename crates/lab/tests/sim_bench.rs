//! The property, over hundreds of generated services (six classes: a pool
//! of threads, worker processes with their supervisors, an event loop
//! blocked by its handlers, a connection pool that binds, a pool that does
//! not beside threads that do, the CPU), each with its own noise (spread,
//! and GC-like pauses for a quarter of them): a search on the simulated
//! bench finds the capacity within [`CAPACITY`] of the truth, the fit names
//! the binding resource the service was built around, and each what-if the
//! fit predicts is within [`WHAT_IF`] of the change made to the service
//! itself. The numbers reached are printed (`--nocapture`) to be quoted:
//! `cargo test -p iolab-lab --test sim_bench -- --nocapture`.

use std::time::{Duration, Instant};

use iolab_model::capacity::{Resource, Search as SearchRecord, Slo};
use iolab_model::ModelKind;
use iolab_predict::fit::network;
use iolab_predict::whatif::{changes, closed_form, foreign, slo_capacity, Replay};

use iolab_lab::capacity::sim::dial::{unit, Pauses};
use iolab_lab::capacity::sim::{network as net, truth, work, Dial, Service, SimBench};
use iolab_lab::capacity::{step_length, Options};

/// Services generated.
const SERVICES: usize = 200;
/// Capacity error, share of the truth, that [`WITHIN`] of the services
/// meet, and that every one meets.
const CAPACITY: (f64, f64) = (0.05, 0.10);
/// What-if error, share of the simulated change, that [`WITHIN`] of the
/// what-ifs meet, and that every one meets.
const WHAT_IF: (f64, f64) = (0.10, 0.15);
/// The share of services and of what-ifs held to the tighter bound. The
/// others (printed) are services one request at a time with a wide spread:
/// near its knee a step's p99 is a few requests, and whether it meets the
/// objective is luck the truth's four times longer steps average out (a
/// capacity 6% low); and the fit reads S as the median service time, which
/// a log-normal spread puts below the mean a server's rate is set by (a
/// change predicted 10.5% high).
const WITHIN: f64 = 0.99;

/// A generated service and what it should give.
struct Case {
    class: &'static str,
    service: Service,
    dial: Dial,
    slo: Slo,
    timeout: Duration,
    binds: Resource,
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
fn case(i: usize) -> Case {
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

/// What one case reached.
struct Reached {
    capacity_err: f64,
    named_right: bool,
    what_ifs: Vec<WhatIfErr>,
}

/// One what-if's error against the change made to the service.
struct WhatIfErr {
    change: String,
    err: f64,
    /// The change makes the service's own pool bind, a pool the search
    /// never filled: no black box sees its size.
    unseen_pool: bool,
}

/// Each what-if of `search` against the change made to the service.
fn what_ifs(c: &Case, search: &SearchRecord, o: &Options) -> Vec<WhatIfErr> {
    let (Some(fit), Some(cap)) = (&search.fit, search.capacity_rps) else {
        return Vec::new();
    };
    let rates: Vec<f64> = search.steps.iter().map(|s| s.rate_rps).collect();
    let replay = Replay {
        rates: &rates,
        step: step_length(&c.slo, c.timeout, fit.service_ms, o, cap),
        timeout: c.timeout,
        slo: &c.slo,
    };
    let fitted = network(fit);
    changes(fit)
        .iter()
        .zip(&search.what_if)
        .filter_map(|(change, w)| {
            let real = truth::changed(&change.network, &fitted, &c.service.network);
            let t = slo_capacity(&real, &foreign(), &replay)?;
            let mut no_pool = real.clone();
            no_pool.params.pg_pool = Some(1_000_000);
            let pool_binds = closed_form(&no_pool) > closed_form(&real).map(|r| 1.05 * r);
            Some(WhatIfErr {
                change: w.change.clone(),
                err: (w.slo_capacity_rps.unwrap_or(0.0) - t) / t,
                unseen_pool: pool_binds && fit.binding.resource != Resource::Pool,
            })
        })
        .collect()
}

fn reach(c: &Case) -> (Reached, SearchRecord) {
    let bench = SimBench::new(c.service.clone(), c.dial.clone(), c.timeout);
    let search = bench.search(&c.slo);
    let o = bench.options();
    let found = search.capacity_rps.unwrap_or(0.0);
    let step = step_length(
        &c.slo,
        c.timeout,
        c.service.service_ms(),
        &o,
        found.max(1.0),
    );
    let truth = truth::capacity(&c.service, &c.dial, &c.slo, c.timeout, step);
    let named = search.fit.as_ref().map(|f| f.binding.resource);
    let r = Reached {
        capacity_err: (found - truth) / truth,
        named_right: named == Some(c.binds),
        what_ifs: what_ifs(c, &search, &o),
    };
    (r, search)
}

/// `p50 a% p90 b% max c%` of `errs` (absolute).
fn spread(errs: &[f64]) -> String {
    let mut v: Vec<f64> = errs.iter().map(|e| 100.0 * e.abs()).collect();
    format!(
        "p50 {:.2}% p90 {:.2}% max {:.2}%",
        quantile(&mut v, 0.5),
        quantile(&mut v, 0.9),
        quantile(&mut v, 1.0)
    )
}

/// Every case's errors, and the lines that say where a bound was missed.
#[derive(Default)]
struct Tally {
    capacity: Vec<f64>,
    named_right: usize,
    what_ifs: Vec<f64>,
    unseen_pool: Vec<f64>,
    misses: Vec<(usize, String)>,
}

impl Tally {
    fn add(&mut self, i: usize, c: &Case) {
        let (r, s) = reach(c);
        let label = format!("#{i} {} {} ({})", c.class, s.target, c.slo);
        self.capacity.push(r.capacity_err);
        if r.capacity_err.abs() > CAPACITY.0 {
            let e = 100.0 * r.capacity_err;
            let found = s.capacity_rps;
            let line = format!("{label}: capacity {found:?} off by {e:+.1}%");
            self.misses.push((i, line));
        }
        if r.named_right {
            self.named_right += 1;
        } else {
            let b = s.fit.as_ref().map(|f| f.binding.sentence.clone());
            self.misses.push((i, format!("{label}: named {b:?}")));
        }
        for w in &r.what_ifs {
            // Unseen, the fit can only over-predict: by the pool's limit.
            let bad = if w.unseen_pool {
                self.unseen_pool.push(w.err);
                w.err < -WHAT_IF.0
            } else {
                self.what_ifs.push(w.err);
                w.err.abs() > WHAT_IF.0
            };
            if bad {
                let e = 100.0 * w.err;
                let line = format!("{label}: what-if '{}' off by {e:+.1}%", w.change);
                self.misses.push((i, line));
            }
        }
    }

    /// Every case of `other` added.
    fn merge(mut self, other: Tally) -> Tally {
        self.capacity.extend(other.capacity);
        self.named_right += other.named_right;
        self.what_ifs.extend(other.what_ifs);
        self.unseen_pool.extend(other.unseen_pool);
        self.misses.extend(other.misses);
        self
    }
}

/// Every case, shared out over the machine's cores (each case is its own
/// seeded simulation: the numbers are the same on any number of threads).
fn tally() -> Tally {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let mut t = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                scope.spawn(move || {
                    let mut t = Tally::default();
                    for i in (k..SERVICES).step_by(threads) {
                        t.add(i, &case(i));
                    }
                    t
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker finishes"))
            .fold(Tally::default(), Tally::merge)
    });
    t.misses.sort();
    t
}

/// The share of `errs` within `bound`, and the largest.
fn within(errs: &[f64], bound: f64) -> (f64, f64) {
    let n = errs.iter().filter(|e| e.abs() <= bound).count();
    let max = errs.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
    (n as f64 / errs.len().max(1) as f64, max)
}

#[test]
fn searches_fits_and_what_ifs_of_generated_services_meet_their_truth() {
    let t0 = Instant::now();
    let t = tally();
    eprintln!(
        "sim bench property: {SERVICES} services in {:.1} s; capacity error {}; binding named right {:.1}% ({}/{SERVICES}); {} what-ifs, error {}; {} more made a pool the search never filled bind (over-predicted, as a black box must: error {})",
        t0.elapsed().as_secs_f64(),
        spread(&t.capacity),
        100.0 * t.named_right as f64 / SERVICES as f64,
        t.named_right,
        t.what_ifs.len(),
        spread(&t.what_ifs),
        t.unseen_pool.len(),
        spread(&t.unseen_pool),
    );
    for (_, m) in &t.misses {
        eprintln!("  miss: {m}");
    }
    assert_eq!(t.named_right, SERVICES, "bindings named wrong (above)");
    let (share, max) = within(&t.capacity, CAPACITY.0);
    assert!(
        share >= WITHIN && max <= CAPACITY.1,
        "capacities: {share} within, max {max}"
    );
    let (share, max) = within(&t.what_ifs, WHAT_IF.0);
    assert!(
        share >= WITHIN && max <= WHAT_IF.1,
        "what-ifs: {share} within, max {max}"
    );
    assert!(
        t.unseen_pool.iter().all(|e| *e >= -WHAT_IF.0),
        "an unseen pool's what-if predicted low (above)"
    );
}

/// `q` of `values` (sorted in place), 0 for none.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n => values[((n - 1) as f64 * q).round() as usize],
    }
}
