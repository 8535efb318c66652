//! `iolab attack`'s flags read into an [`AttackPlan`]: the driver (closed
//! loop, or an open loop at one rate or in phases), the connections, the
//! timing and the generator's settings. The library validates the plan
//! afterwards; here each flag's own form is checked and named.

use std::time::Duration;

use iolab_model::attack::AttackPlan;
use iolab_model::driver::{Arrival, ConnectionMode, Driver, Phase};
use iolab_model::parse_duration;

use super::{Args, ArrivalArg};
use crate::CliError;

fn duration(flag: &str, s: &str) -> Result<Duration, CliError> {
    parse_duration(s).map_err(|e| CliError::usage(format!("{flag}: {e}")))
}

/// Parse one `--phase`: `DUR:RATE` or `DUR:FROM..TO`, optionally `@START`.
fn parse_phase(spec: &str) -> Result<(Option<Duration>, Phase), CliError> {
    let bad = |why: &str| {
        CliError::usage(format!(
            "--phase '{spec}': {why} (use DUR:RATE or DUR:FROM..TO, e.g. 10s:50..450, optionally @START)"
        ))
    };
    let (body, start) = match spec.split_once('@') {
        Some((b, s)) => (b, Some(duration("--phase start", s)?)),
        None => (spec, None),
    };
    let (dur, rates) = body.split_once(':').ok_or_else(|| bad("missing ':'"))?;
    let dur = duration("--phase", dur)?;
    let rate = |s: &str| -> Result<f64, CliError> {
        let r: f64 = s.trim().parse().map_err(|_| bad("rate is not a number"))?;
        if !r.is_finite() || r < 0.0 {
            return Err(bad("rates must be >= 0"));
        }
        Ok(r)
    };
    let (from, to) = match rates.split_once("..") {
        Some((a, b)) => (rate(a)?, rate(b)?),
        None => {
            let r = rate(rates)?;
            (r, r)
        }
    };
    if dur.is_zero() {
        return Err(bad("duration must be > 0"));
    }
    Ok((
        start,
        Phase {
            duration: dur,
            from_rps: from,
            to_rps: to,
        },
    ))
}

/// Lay phases on one timeline: explicit starts may leave gaps (filled with a
/// zero rate) but must not overlap the previous phase.
fn phases(specs: &[String]) -> Result<Vec<Phase>, CliError> {
    let mut out: Vec<Phase> = Vec::new();
    let mut end = Duration::ZERO;
    for (i, spec) in specs.iter().enumerate() {
        let (start, phase) = parse_phase(spec)?;
        if let Some(start) = start {
            if start < end {
                return Err(CliError::usage(format!(
                    "--phase '{spec}' starts at {} but phase {} ends at {}: phases must not overlap",
                    iolab_model::format_duration(start),
                    i,
                    iolab_model::format_duration(end)
                )));
            }
            if start > end {
                out.push(Phase::hold(0.0, start - end));
            }
            end = start;
        }
        end += phase.duration;
        out.push(phase);
    }
    Ok(out)
}

/// Parse `1`, `0,2-3` (bounded before a range is expanded).
fn cpus(list: &str) -> Result<Vec<usize>, CliError> {
    iolab_model::limits::parse_cpu_list(list).map_err(|e| CliError::usage(format!("--cpus: {e}")))
}

/// Turn the flags into a plan (validated by the library afterwards).
pub fn plan(args: &Args) -> Result<AttackPlan, CliError> {
    let dur = args
        .duration
        .as_deref()
        .map(|d| duration("--duration", d))
        .transpose()?;
    let (target, request, driver) = match super::replay::plan(args)? {
        Some(r) => {
            for note in &r.notes {
                eprintln!("{note}");
            }
            (r.target, r.request, r.driver)
        }
        None => {
            let driver = driver(args, dur)?;
            let (target, request) = args.request.requests(args.url.as_deref())?;
            (target, request, driver)
        }
    };
    let max = args.connections.unwrap_or(ConnectionMode::DEFAULT_MAX);
    Ok(AttackPlan {
        target,
        request,
        driver,
        connections: if args.new_connection {
            ConnectionMode::NewPerRequest { max }
        } else {
            ConnectionMode::KeepAlive { max }
        },
        timeout: duration("--timeout", &args.timeout)?,
        interval: duration("--interval", &args.interval)?,
        threads: args.threads,
        cpus: args
            .cpus
            .as_deref()
            .map(cpus)
            .transpose()?
            .unwrap_or_default(),
        record_requests: args.csv.is_some(),
        spin: args.spin,
        shard: args.sharding.shard,
        start_at_unix_ms: args.sharding.start_at_unix_ms()?,
        engine: args.engine.engine(),
        source_addrs: args.source_addrs.clone(),
        max_headers: args.max_headers,
    })
}

/// A closed loop (`--concurrency`) or an open one (`--rate` or `--phase`),
/// never both; `dur` is `--duration`.
fn driver(args: &Args, dur: Option<Duration>) -> Result<Driver, CliError> {
    match (args.concurrency, args.rate, args.phases.is_empty()) {
        (Some(_), Some(_), _) | (Some(_), _, false) => Err(CliError::usage(
            "--concurrency (closed loop) cannot be combined with --rate/--phase (open loop): pick one",
        )),
        (Some(c), None, true) => {
            if args.requests.is_none() && dur.is_none() {
                return Err(CliError::usage(
                    "closed loop needs --requests N and/or --duration D",
                ));
            }
            Ok(Driver::Closed {
                concurrency: c,
                requests: args.requests,
                duration: dur,
            })
        }
        (None, rate, _) => {
            if args.requests.is_some() {
                return Err(CliError::usage("--requests bounds a closed loop: add --concurrency C, or use --rate with --duration"));
            }
            let arrival = match args.arrival {
                ArrivalArg::Constant => Arrival::Constant,
                ArrivalArg::Poisson => Arrival::Poisson { seed: args.seed },
            };
            Ok(Driver::Open {
                phases: open_phases(args, rate, dur)?,
                arrival,
            })
        }
    }
}

/// An open loop's phases: one at `--rate` for `--duration`, or the
/// `--phase` specs laid out in order.
fn open_phases(
    args: &Args,
    rate: Option<f64>,
    dur: Option<Duration>,
) -> Result<Vec<Phase>, CliError> {
    match (rate, args.phases.is_empty()) {
        (Some(_), false) => Err(CliError::usage(
            "give either --rate R --duration D or --phase specs, not both",
        )),
        (Some(r), true) => {
            let d = dur.ok_or_else(|| {
                CliError::usage("--rate needs --duration D (e.g. --duration 30s)")
            })?;
            if !(r > 0.0 && r.is_finite()) {
                return Err(CliError::usage(format!(
                    "--rate {r}: must be > 0 requests/s"
                )));
            }
            Ok(vec![Phase::hold(r, d)])
        }
        (None, false) => {
            if dur.is_some() {
                return Err(CliError::usage(
                    "--duration does not apply to --phase (each phase has its own)",
                ));
            }
            phases(&args.phases)
        }
        (None, true) => Err(CliError::usage(
            "say how to send: --rate R --duration D (open loop), --phase DUR:RATE, or --concurrency C --requests N (closed loop)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_lay_out_in_order_with_gaps_and_refuse_overlaps() {
        let p = phases(&["10s:50..450".into(), "60s:450".into()]).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].from_rps, p[0].to_rps, p[1].from_rps),
            (50.0, 450.0, 450.0)
        );
        let p = phases(&["1s:10".into(), "1s:20@3s".into()]).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].to_rps, 0.0);
        assert_eq!(p[1].duration, Duration::from_secs(2));
        assert!(phases(&["10s:5".into(), "1s:5@5s".into()]).is_err());
        assert!(phases(&["10x:5".into()]).is_err());
        assert!(phases(&["10s".into()]).is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpus("0,2-3").unwrap(), vec![0, 2, 3]);
        assert!(cpus("3-1").is_err());
        assert!(cpus("a").is_err());
    }
}
