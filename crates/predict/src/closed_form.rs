//! Closed-form queueing results, computed beside the simulation as a sanity
//! check and used in its explanations (REFERENCE.md, "Theory that predicts them").

use iolab_model::concurrency::Shape;

/// Little's law: requests in flight = rate x time each one spends inside.
pub fn little_in_flight(rate_rps: f64, latency_s: f64) -> f64 {
    rate_rps * latency_s
}

/// The most a model can serve, req/s: the tightest of c/S over every
/// resource a request holds (request threads for the whole request, offload
/// threads for each IO leaf, pg connections for each pg leaf, CPU servers for
/// CPU); `None` when nothing bounds it.
pub fn capacity_rps(
    shape: &Shape,
    unloaded_ns: u64,
    work_ns: (u64, u64, u64),
    pg_pool: u32,
) -> Option<f64> {
    let (cpu, io, pg) = work_ns;
    let mut caps = Vec::new();
    let mut bound = |servers: f64, hold_ns: u64| {
        if hold_ns > 0 {
            caps.push(servers / (hold_ns as f64 / 1e9));
        }
    };
    if let Some(rt) = shape.request_threads {
        if rt.cap != u32::MAX {
            bound(rt.cap as f64, unloaded_ns);
        }
    }
    if let Some(p) = shape.offload {
        bound(p as f64, io);
    }
    bound(shape.cpu_servers as f64, cpu);
    bound(f64::from(pg_pool), pg);
    caps.into_iter().reduce(f64::min)
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
