//! Plan checks done before anything is sent; each error is one line naming
//! the fault and the fix.

use std::time::Duration;

use iolab_model::attack::AttackPlan;
use iolab_model::driver::{Driver, Phase};

use crate::endpoint::Endpoint;
use crate::error::AttackError;

fn bad(msg: impl Into<String>) -> Result<(), AttackError> {
    Err(AttackError::Invalid(msg.into()))
}

/// Check a plan: http(s):// or grpc(s):// URL, requests to one origin, positive rates and durations, non-empty phases,
/// sane timeout / interval / threads / CPUs / connection cap.
pub fn validate(plan: &AttackPlan) -> Result<(), AttackError> {
    let target = Endpoint::parse(&plan.target)?;
    crate::wire::render_all(&target, &plan.request.list)?;
    // Every size, count and rate against its bound (and the machine's open
    // files), before anything is allocated.
    crate::machine::check_bounds(plan).map_err(|f| AttackError::Invalid(f.with_flag()))?;
    match &plan.driver {
        Driver::Open { phases, .. } => open_loop(plan, phases)?,
        Driver::Closed {
            concurrency,
            requests,
            duration,
        } => closed_loop(plan, *concurrency, *requests, *duration)?,
    }
    settings(plan)?;
    protocol(plan, &target)?;
    replay(plan)?;
    crate::shard::validate(plan)?;
    cpus(plan)
}

/// Streams only over HTTP/2, requests HTTP/2 can carry, and a gRPC call
/// to a gRPC URL (its method and message checked when `--proto` names its
/// files; reflection is asked only when the run starts).
fn protocol(plan: &AttackPlan, target: &Endpoint) -> Result<(), AttackError> {
    let p = &plan.request.protocol;
    // The URL's kind first: `grpc://` without `--call` is missing its
    // method, whatever else the flags say (`--streams` included).
    crate::grpc::check(plan, target)?;
    p.check()?;
    if p.is_http2() && p.grpc.is_none() {
        crate::h2::Requests::of(plan)?;
    }
    Ok(())
}

/// A replayed mix names an endpoint for each request, and goes over HTTP/1.1
/// (its books are kept where a request's index is known).
fn replay(plan: &AttackPlan) -> Result<(), AttackError> {
    let Some(mix) = &plan.request.mix else {
        return Ok(());
    };
    mix.check(plan.request.list.len())?;
    if plan.request.protocol.is_http2() {
        return bad("a replayed mix is sent over HTTP/1.1: drop --http2");
    }
    Ok(())
}

/// Phases there, each lasting and at a rate >= 0, some rate above zero,
/// and at least one request planned.
fn open_loop(plan: &AttackPlan, phases: &[Phase]) -> Result<(), AttackError> {
    if phases.is_empty() {
        return bad("open loop has no phases (give --rate R --duration D or --phase DUR:RATE)");
    }
    for (i, p) in phases.iter().enumerate() {
        let n = i + 1;
        if p.duration.is_zero() {
            return bad(format!("phase {n} has zero duration (use e.g. 10s)"));
        }
        for r in [p.from_rps, p.to_rps] {
            if !r.is_finite() || r < 0.0 {
                return bad(format!(
                    "phase {n} has rate {r}; rates must be >= 0 requests/s"
                ));
            }
        }
    }
    if plan.driver.peak_rate().unwrap_or(0.0) <= 0.0 {
        return bad("rate must be > 0 requests/s (e.g. --rate 100)");
    }
    if plan.driver.planned().unwrap_or(0) == 0 {
        return bad("the schedule plans no request: raise the rate or the duration");
    }
    Ok(())
}

/// Clients there, each with a connection, and a bound in requests or time.
fn closed_loop(
    plan: &AttackPlan,
    concurrency: u32,
    requests: Option<u64>,
    duration: Option<Duration>,
) -> Result<(), AttackError> {
    if concurrency == 0 {
        return bad("concurrency must be >= 1 (e.g. --concurrency 50)");
    }
    if requests.is_none() && duration.is_none() {
        return bad("closed loop needs --requests N and/or --duration D");
    }
    if concurrency > plan.connections.max() {
        return bad(format!(
            "--concurrency {concurrency} needs as many connections, but --connections is {}: raise it",
            plan.connections.max()
        ));
    }
    if requests == Some(0) {
        return bad("--requests must be >= 1");
    }
    if duration.is_some_and(|d| d.is_zero()) {
        return bad("--duration must be > 0 (e.g. 10s)");
    }
    Ok(())
}

/// Timeout, interval, threads and connections, whatever the driver.
fn settings(plan: &AttackPlan) -> Result<(), AttackError> {
    if plan.timeout.is_zero() {
        return bad("--timeout must be > 0 (e.g. 10s)");
    }
    if plan.interval.as_millis() < 1 {
        return bad("--interval must be at least 1ms (e.g. 1s)");
    }
    if plan.threads == Some(0) {
        return bad("--threads must be >= 1");
    }
    if plan.connections.max() == 0 {
        return bad("--connections must be >= 1");
    }
    Ok(())
}

/// Every CPU to pin to exists (and fits a `cpu_set_t`).
fn cpus(plan: &AttackPlan) -> Result<(), AttackError> {
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    let limit = online.min(libc::CPU_SETSIZE as usize);
    if let Some(&cpu) = plan.cpus.iter().find(|&&c| c >= limit) {
        return bad(format!(
            "CPU {cpu} does not exist (this machine has CPUs 0-{})",
            limit - 1
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(driver: Driver) -> AttackPlan {
        AttackPlan::new("http://127.0.0.1:1/", driver)
    }

    fn msg(p: &AttackPlan) -> String {
        validate(p).unwrap_err().to_string()
    }

    #[test]
    fn accepts_a_plain_plan() {
        validate(&plan(Driver::constant(10.0, Duration::from_secs(1)))).unwrap();
    }

    #[test]
    fn refuses_bad_plans_in_one_line() {
        let mut cases = vec![
            plan(Driver::constant(0.0, Duration::from_secs(1))),
            plan(Driver::constant(-1.0, Duration::from_secs(1))),
            plan(Driver::constant(10.0, Duration::ZERO)),
            plan(Driver::Open {
                phases: vec![],
                arrival: iolab_model::Arrival::Constant,
            }),
            plan(Driver::Closed {
                concurrency: 0,
                requests: Some(1),
                duration: None,
            }),
            plan(Driver::Closed {
                concurrency: 1,
                requests: None,
                duration: None,
            }),
        ];
        let mut p = plan(Driver::constant(10.0, Duration::from_secs(1)));
        p.target = "ftp://x/".into();
        cases.push(p.clone());
        p.target = "http://x/".into();
        p.timeout = Duration::ZERO;
        cases.push(p.clone());
        p.timeout = Duration::from_secs(1);
        p.cpus = vec![100_000];
        cases.push(p);
        let mut ramp = plan(Driver::Open {
            phases: vec![Phase {
                duration: Duration::from_secs(1),
                from_rps: 0.0,
                to_rps: 0.0,
            }],
            arrival: iolab_model::Arrival::Constant,
        });
        cases.push(ramp.clone());
        ramp.threads = Some(0);
        cases.push(ramp);
        for c in &cases {
            let m = msg(c);
            assert!(!m.is_empty() && !m.contains('\n'), "{m}");
        }
    }
}
