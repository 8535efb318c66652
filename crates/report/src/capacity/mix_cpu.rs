//! A replayed mix's CPU and limits in words: each endpoint's CPU per
//! request from the probe before the search (said missing when it was not
//! measured, never 0), what bounds the mix (the lowest binds first, and at
//! what rate each other would), and what each what-if's change buys the
//! mix with the CPU beside it.

use iolab_model::capacity::{EndpointCpu, MixCpu, MixLimit, Resource, Search};

use crate::numbers::{count, ms, num, percent, rate};

/// The lines of `s`'s mix (none without a replay's probe).
pub fn lines(s: &Search) -> Vec<String> {
    let Some(c) = &s.mix_cpu else {
        return Vec::new();
    };
    let mut out = vec![cpu_line(c)];
    out.extend(
        s.endpoint_split
            .as_ref()
            .and_then(|x| limits_line(&x.limits, c, s.capacity_rps)),
    );
    if !s.mix_what_if.is_empty() {
        out.push("what each change buys the mix (the fitted service simulated, the CPU from the probe beside it):".into());
    }
    let users = used_by(c);
    for w in &s.mix_what_if {
        out.push(match w.cpu_caps {
            true => format!(
                "  {}: the service simulated serves {}/s, but the CPU caps the mix at {}/s{users}",
                w.change,
                rate(w.simulated_rps),
                rate(w.cpu_rps)
            ),
            false => format!(
                "  {}: the mix to {}/s{}; the CPU would cap it at {}/s",
                w.change,
                rate(w.capacity_rps),
                lifted(s, w.capacity_rps),
                rate(w.cpu_rps)
            ),
        });
    }
    out
}

/// `CPU per endpoint (...): GET /work 13.1ms a request (77 requests; 93%
/// of the mix's CPU), ...; the mix 2.72ms a request on 1 core: the CPU
/// allows it at most 368/s`.
pub fn cpu_line(c: &MixCpu) -> String {
    if let Some(why) = &c.missing {
        return format!(
            "CPU per endpoint: not measured ({why}); the CPU's bound on the mix is not known"
        );
    }
    let each: Vec<String> = c.endpoints.iter().map(endpoint).collect();
    let idle = c.idle_cores.map_or(String::new(), |i| {
        format!("; {} cores burnt idle taken off", num(i, 3))
    });
    let cores = c.cores.unwrap_or(0.0);
    let got = match (c.got_at_knee, c.got) {
        (Some(k), probe) => format!(
            ", which it had {} of the time it wanted one at the knee{}",
            percent(k),
            probe.map_or(String::new(), |g| format!(
                " ({} over the probe)",
                percent(g)
            ))
        ),
        (None, Some(g)) => format!(
            ", which it had {} of the time it wanted one over the probe",
            percent(g)
        ),
        (None, None) => ", its run-queue wait not read (counted whole)".to_string(),
    };
    let mix = match (c.per_request_ms, c.bound_rps) {
        (Some(p), Some(b)) => format!(
            "the mix {} a request on {} core{}{got}: the CPU allows it at most {}/s",
            ms(p),
            num(cores, 2),
            if cores == 1.0 { "" } else { "s" },
            rate(b)
        ),
        _ => "the mix's CPU per request not known (an endpoint's is missing): the CPU's bound on the mix is not known".into(),
    };
    format!(
        "CPU per endpoint (each alone, one request at a time, before the search{idle}): {}; {mix}",
        each.join(", ")
    )
}

/// `GET /work 13.1ms a request (77 requests; 93% of the mix's CPU)`.
fn endpoint(e: &EndpointCpu) -> String {
    let name = format!("{} {}", e.method, e.template);
    match (e.cpu_ms, &e.missing) {
        (Some(v), _) => format!(
            "{name} {} a request ({} requests{})",
            ms(v),
            count(e.requests),
            e.fraction.map_or(String::new(), |f| format!(
                "; {} of the mix's CPU",
                percent(f)
            ))
        ),
        (None, why) => format!(
            "{name} missing ({})",
            why.as_deref().unwrap_or("not measured")
        ),
    }
}

/// `GET /work uses 93% of it`, for each endpoint using most of the CPU.
fn heavy(c: &MixCpu) -> Vec<String> {
    (c.heaviest().iter())
        .map(|e| {
            format!(
                "{} {} uses {} of it",
                e.method,
                e.template,
                percent(e.fraction.unwrap_or(0.0))
            )
        })
        .collect()
}

/// ` (GET /work uses 93% of it)`.
fn used_by(c: &MixCpu) -> String {
    let h = heavy(c);
    match h.is_empty() {
        true => String::new(),
        false => format!(" ({})", h.join(", ")),
    }
}

/// `what bounds the mix: the CPU (1 core; GET /work uses 93% of it) binds
/// first at 368/s; the 10 connections to 127.0.0.1:5432 (HEAD /work) would
/// at 667/s`.
/// A capacity found under half the lowest (`capacity`) says that none of
/// them binds: something not in sight does.
pub fn limits_line(limits: &[MixLimit], c: &MixCpu, capacity: Option<f64>) -> Option<String> {
    let (first, rest) = limits.split_first()?;
    let head = match capacity.filter(|cap| *cap < 0.5 * first.bound_rps) {
        Some(cap) => format!(
            "what bounds the mix: the capacity found ({}/s) is under half of every limit in sight, so something else binds; {} would at {}",
            rate(cap),
            limit(first, c),
            at(first)
        ),
        None => format!(
            "what bounds the mix: {} binds first at {}",
            limit(first, c),
            at(first)
        ),
    };
    if rest.is_empty() {
        return Some(format!("{head}; no other limit in sight"));
    }
    let others: Vec<String> = (rest.iter())
        .map(|l| format!("{} would at {}", limit(l, c), at(l)))
        .collect();
    Some(format!("{head}; {}", others.join("; ")))
}

/// `667/s`, or `667/s or above` for a bound that is a floor.
fn at(l: &MixLimit) -> String {
    match l.at_least {
        true => format!("{}/s or above", rate(l.bound_rps)),
        false => format!("{}/s", rate(l.bound_rps)),
    }
}

/// `the CPU (1 core; GET /work uses 93% of it)`, `the 10 connections to
/// 127.0.0.1:5432 (HEAD /work)`, `the 10 connections seen open to
/// 127.0.0.1:5432 (HEAD /work, which did not queue)`.
fn limit(l: &MixLimit, c: &MixCpu) -> String {
    let on = l.endpoints.join(", ");
    match (l.resource, l.size, &l.name) {
        (Resource::Cpu, Some(n), _) => {
            let parts: Vec<String> = std::iter::once(format!(
                "{} core{}",
                num(n, 2),
                if n == 1.0 { "" } else { "s" }
            ))
            .chain(heavy(c))
            .collect();
            format!("the CPU ({})", parts.join("; "))
        }
        (Resource::Pool, Some(n), Some(name)) if l.at_least => {
            format!(
                "the {} connections seen open to {name} ({on}, which did not queue)",
                num(n, 3)
            )
        }
        (Resource::Pool, Some(n), Some(name)) => {
            format!("the {} connections to {name} ({on})", num(n, 3))
        }
        (kind, Some(n), _) => format!("{kind} ({}) ({on})", num(n, 3)),
        (kind, None, _) => format!("{kind} ({on})"),
    }
}

/// ` (HEAD /work to 420/s)`: the pool's endpoints' own rates at the mix's
/// `rps`.
fn lifted(s: &Search, rps: f64) -> String {
    let Some(x) = &s.endpoint_split else {
        return String::new();
    };
    let Some(pool) = x.limits.iter().find(|l| l.resource != Resource::Cpu) else {
        return String::new();
    };
    let each: Vec<String> = (x.endpoints.iter())
        .filter(|w| {
            pool.endpoints
                .contains(&format!("{} {}", w.method, w.template))
        })
        .map(|w| format!("{} {} to {}/s", w.method, w.template, rate(rps * w.share)))
        .collect();
    match each.is_empty() {
        true => String::new(),
        false => format!(" ({})", each.join(", ")),
    }
}
