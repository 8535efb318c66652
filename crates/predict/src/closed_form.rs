//! Closed-form queueing results, computed beside the simulation as a sanity
//! check and used in its explanations (REFERENCE.md, "Theory that predicts them").

use iolab_model::concurrency::Shape;

/// Little's law: requests in flight = rate x time each one spends inside.
pub fn little_in_flight(rate_rps: f64, latency_s: f64) -> f64 {
    rate_rps * latency_s
}

/// What a request holds, for the capacity's sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// Its request thread (or process), for the whole request.
    RequestThreads,
    /// An offload thread, for each IO leaf.
    Offload,
    /// A CPU server, for its CPU steps.
    Cpu,
    /// A PostgreSQL connection of the pool, for each pg leaf.
    PgPool,
}

/// One resource's bound: `servers` held `hold_s` each by a request, so
/// `servers / hold_s` requests per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// Which resource.
    pub resource: Resource,
    /// How many of it.
    pub servers: f64,
    /// How long one request holds one, seconds.
    pub hold_s: f64,
}

impl Bound {
    /// `servers / hold_s`, req/s.
    pub fn rps(&self) -> f64 {
        self.servers / self.hold_s
    }
}

/// Every resource that bounds a model, c/S each: request threads for the
/// whole request, offload threads for each IO leaf, pg connections for each
/// pg leaf, CPU servers for CPU. Empty when nothing bounds it.
pub fn bounds(
    shape: &Shape,
    unloaded_ns: u64,
    work_ns: (u64, u64, u64),
    pg_pool: u32,
) -> Vec<Bound> {
    let (cpu, io, pg) = work_ns;
    let mut out = Vec::new();
    let mut bound = |resource, servers: f64, hold_ns: u64| {
        if hold_ns > 0 {
            out.push(Bound {
                resource,
                servers,
                hold_s: hold_ns as f64 / 1e9,
            });
        }
    };
    if let Some(rt) = shape.request_threads {
        if rt.cap != u32::MAX {
            bound(Resource::RequestThreads, rt.cap as f64, unloaded_ns);
        }
    }
    if let Some(p) = shape.offload {
        bound(Resource::Offload, p as f64, io);
    }
    bound(Resource::Cpu, shape.cpu_servers as f64, cpu);
    bound(Resource::PgPool, f64::from(pg_pool), pg);
    out
}

/// The tightest of [`bounds`]: what sets capacity.
pub fn binding(
    shape: &Shape,
    unloaded_ns: u64,
    work_ns: (u64, u64, u64),
    pg_pool: u32,
) -> Option<Bound> {
    bounds(shape, unloaded_ns, work_ns, pg_pool)
        .into_iter()
        .reduce(|a, b| if b.rps() < a.rps() { b } else { a })
}

/// The most a model can serve, req/s: the tightest of c/S over every
/// resource a request holds ([`binding`]); `None` when nothing bounds it.
pub fn capacity_rps(
    shape: &Shape,
    unloaded_ns: u64,
    work_ns: (u64, u64, u64),
    pg_pool: u32,
) -> Option<f64> {
    binding(shape, unloaded_ns, work_ns, pg_pool).map(|b| b.rps())
}

/// How fast the queue grows above capacity, req/s (0 below it).
pub fn queue_growth_rps(rate_rps: f64, capacity_rps: f64) -> f64 {
    (rate_rps - capacity_rps).max(0.0)
}

/// Send time of the first request that times out under a constant overload:
/// a request sent at t waits t x (rho - 1), so it is late once
/// S + t (rho - 1) > T, i.e. after (T - S) / (rho - 1) seconds, with
/// rho = rate / capacity. `None` at or below capacity (no timeouts from
/// queueing); 0 when S alone exceeds T.
pub fn first_timeout_s(
    rate_rps: f64,
    capacity_rps: f64,
    service_s: f64,
    timeout_s: f64,
) -> Option<f64> {
    if service_s >= timeout_s {
        return Some(0.0);
    }
    let rho = rate_rps / capacity_rps;
    if rho <= 1.0 {
        return None;
    }
    Some((timeout_s - service_s) / (rho - 1.0))
}

/// Requests that succeed in a constant overload of length `duration_s`:
/// those sent before the first timeout.
pub fn ok_under_overload(
    rate_rps: f64,
    capacity_rps: f64,
    service_s: f64,
    timeout_s: f64,
    duration_s: f64,
) -> f64 {
    match first_timeout_s(rate_rps, capacity_rps, service_s, timeout_s) {
        Some(t) => rate_rps * t.min(duration_s),
        None => rate_rps * duration_s,
    }
}

/// A closed loop of `clients` on `threads` threads, each request holding a
/// thread for `service_s`: min(N, c) / S requests per second.
pub fn closed_loop_rps(clients: u32, threads: u32, service_s: f64) -> f64 {
    clients.min(threads) as f64 / service_s
}

/// `n` calls of `service_s` each on `parallel` threads finish in
/// ceil(n / P) waves: ceil(n / P) x S seconds.
pub fn batch_calls_s(n: u64, parallel: u64, service_s: f64) -> f64 {
    n.div_ceil(parallel.max(1)) as f64 * service_s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2_numbers() {
        // 200 threads x 1 s at 450 req/s, T = 10 s
        let t = first_timeout_s(450.0, 200.0, 1.0, 10.0).unwrap();
        assert!((t - 7.2).abs() < 1e-9);
        assert!((ok_under_overload(450.0, 200.0, 1.0, 10.0, 60.0) - 3_240.0).abs() < 1e-6);
        assert_eq!(first_timeout_s(100.0, 200.0, 1.0, 10.0), None);
        assert_eq!(first_timeout_s(100.0, 200.0, 11.0, 10.0), Some(0.0));
    }

    #[test]
    fn e3_numbers() {
        assert_eq!(batch_calls_s(100, 1, 1.0), 100.0);
        assert_eq!(batch_calls_s(100, 8, 1.0), 13.0);
        assert_eq!(batch_calls_s(100, 16, 1.0), 7.0);
        assert_eq!(batch_calls_s(100, 100, 1.0), 1.0);
        assert_eq!(closed_loop_rps(5, 10, 0.1), 50.0);
        assert_eq!(little_in_flight(450.0, 1.0), 450.0);
    }
}
