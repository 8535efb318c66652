//! One plain sentence per prediction, built from its numbers: what holds a
//! request, the capacity that follows, and what the offered load does to it.

use iolab_model::driver::Driver;
use iolab_model::experiment::HttpWork;
use iolab_model::predict::Prediction;
use iolab_model::runtime::RuntimeKnobs;

use crate::closed_form::{little_in_flight, queue_growth_rps, Bound, Resource};
use iolab_model::concurrency::{counted, Admission, Shape};
use iolab_model::ModelKind;

use crate::sim::SimOutcome;

/// Thousands separated by commas.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let groups: Vec<&str> = s
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).expect("digits"))
        .collect();
    groups.join(",")
}

/// A rate or count with sensible precision.
pub fn num(x: f64) -> String {
    if x >= 100.0 {
        thousands(x.round() as u64)
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Seconds, short.
pub fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{} s", num(s))
    } else {
        format!("{} ms", num(s * 1e3))
    }
}

pub(crate) fn http(
    shape: &Shape,
    work: &HttpWork,
    out: &SimOutcome,
    p: &Prediction,
    knobs: &RuntimeKnobs,
    bind: Option<Bound>,
) -> String {
    let s = out.unloaded_ns as f64 / 1e9;
    let sizing = knobs.sizing(shape.model);
    let sizing = if sizing.is_empty() {
        sizing
    } else {
        format!(" ({sizing})")
    };
    let cap = match (p.capacity_rps, bind) {
        (Some(c), Some(b)) if Some(b.resource) == named(shape) => {
            format!(", so capacity is {} req/s", num(c))
        }
        (Some(c), Some(b)) => {
            let own = match (named(shape), shape.request_threads) {
                (Some(Resource::RequestThreads), Some(rt)) => {
                    format!(" ({} req/s)", num(f64::from(rt.cap) / s))
                }
                _ => String::new(),
            };
            format!(
                "{own}, but {}, so capacity is {} / {} = {} req/s",
                binding(b, knobs),
                thousands(b.servers.round() as u64),
                hold(b.hold_s),
                num(c)
            )
        }
        _ => ", so nothing caps throughput here".to_string(),
    };
    let mut sentence = format!(
        "{}{sizing}{cap}; {}: {} of {} ok ({}%), p50 {}",
        held(shape, out, s, knobs),
        load(work, p),
        thousands(p.ok),
        thousands(p.offered),
        share(p.success_ratio),
        secs(p.latency_ms.p50 / 1e3),
    );
    sentence += &failures(shape, work, out, p, knobs);
    sentence += &little(out, p, s);
    sentence
}

/// A hold time with three figures even below a millisecond (`22.0 µs`),
/// so the capacity beside it can be recomputed from it.
fn hold(s: f64) -> String {
    if s < 1e-3 {
        format!("{} µs", num(s * 1e6))
    } else {
        secs(s)
    }
}

/// A share in percent that never rounds a few to none or a loss to all:
/// `0.5`, `37`, `99.9`.
fn share(ratio: f64) -> String {
    let p = ratio * 100.0;
    if (p > 0.0 && p < 1.0) || (p > 99.0 && p < 100.0) {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}

/// The resource [`held`] names: bounded request threads, or an offload
/// pool; none for threads made per request or a model that holds none.
fn named(shape: &Shape) -> Option<Resource> {
    match (shape.request_threads, shape.offload) {
        (Some(rt), _) if rt.cap != u32::MAX => Some(Resource::RequestThreads),
        (None, Some(_)) => Some(Resource::Offload),
        _ => None,
    }
}

/// A binding resource other than the one [`held`] names, in words.
fn binding(b: Bound, knobs: &RuntimeKnobs) -> String {
    let n = b.servers.round() as u64;
    match b.resource {
        Resource::PgPool => format!(
            "{}{} are held {} per request",
            counted(n, "PostgreSQL connections"),
            knobs
                .phrase("pg_pool")
                .map_or_else(String::new, |p| format!(" ({p})")),
            hold(b.hold_s)
        ),
        Resource::Cpu => format!(
            "its CPU work takes {} per request on {}",
            hold(b.hold_s),
            counted(n, "CPU servers")
        ),
        Resource::Offload => format!(
            "{} are held {} per request",
            counted(n, "offload threads"),
            hold(b.hold_s)
        ),
        Resource::RequestThreads => format!(
            "{} are held {} per request",
            counted(n, "request threads"),
            hold(b.hold_s)
        ),
    }
}

/// How many hold requests: `1,800 pool threads`, or `200 threads x 9
/// processes = 1,800 pool threads` when more than one knob multiplies.
fn holders(cap: u32, shape: &Shape, knobs: &RuntimeKnobs) -> String {
    let factors: Vec<(u32, &str)> = shape
        .model
        .def()
        .sized_by
        .iter()
        .filter_map(|k| {
            let name = k.def().name;
            let v = knobs.get(name)?.value?;
            (v > 1).then_some((v, name))
        })
        .collect();
    let all = counted(u64::from(cap), shape.holder);
    // Only a product that is the cap: a knob the model does not multiply
    // by here is no factor of it.
    let product: u64 = factors.iter().map(|(v, _)| u64::from(*v)).product();
    if factors.len() >= 2 && product == u64::from(cap) {
        let factors: Vec<String> = factors
            .iter()
            .map(|(v, name)| format!("{} {name}", thousands(u64::from(*v))))
            .collect();
        format!("{} = {all}", factors.join(" x "))
    } else {
        all
    }
}

/// What holds a request, and for how long.
fn held(shape: &Shape, out: &SimOutcome, s: f64, knobs: &RuntimeKnobs) -> String {
    match shape.request_threads {
        Some(rt) if rt.cap == 1 && shape.model == ModelKind::Sequential => {
            format!("{} holds each request for {}", shape.holder, secs(s))
        }
        Some(rt) if rt.cap == 1 => format!(
            "{} holds each request for {}",
            counted(1, shape.holder),
            secs(s)
        ),
        Some(rt) if rt.cap != u32::MAX => format!(
            "{} each hold a request for {}",
            holders(rt.cap, shape, knobs),
            secs(s)
        ),
        Some(_) => format!("a new thread holds each request for {}", secs(s)),
        None => match shape.offload {
            Some(n) => format!(
                "{n} {} hold its IO ({} per request)",
                shape.holder,
                secs(out.work_ns.1 as f64 / 1e9)
            ),
            None => format!(
                "{}: no thread is held while a request waits ({} each)",
                shape.holder,
                secs(s)
            ),
        },
    }
}

/// What the offered load does against the capacity.
fn load(work: &HttpWork, p: &Prediction) -> String {
    let rate = match &work.driver {
        Driver::Closed { concurrency, .. } => {
            return format!("{concurrency} clients keep one request each in flight")
        }
        Driver::Open { .. } => work.driver.peak_rate().unwrap_or(0.0),
    };
    match p.capacity_rps {
        Some(c) if rate > c => {
            let mut t = format!(
                "at {} req/s (rho {:.2}) the queue grows {} req/s",
                num(rate),
                rate / c,
                num(queue_growth_rps(rate, c))
            );
            if let Some(ft) = p.first_timeout_s {
                t += &format!(
                    " and requests sent after {} wait past the {} timeout",
                    secs(ft),
                    secs(work.timeout.as_secs_f64())
                );
            }
            t
        }
        Some(c) => format!("{} req/s is rho {:.2}, below it", num(rate), rate / c),
        None => format!("{} req/s offered", num(rate)),
    }
}

/// Resets, unsent requests and lost goodput, each only when it happened.
fn failures(
    shape: &Shape,
    work: &HttpWork,
    out: &SimOutcome,
    p: &Prediction,
    knobs: &RuntimeKnobs,
) -> String {
    let mut s = String::new();
    let resets = out.errors.get("reset").copied().unwrap_or(0);
    if let (
        true,
        Admission::Limited {
            max_connections,
            backlog,
        },
    ) = (resets > 0, shape.admission)
    {
        let named = knobs.phrase("backlog").map_or_else(
            || format!("of {}", thousands(backlog as u64)),
            |p| format!("({p})"),
        );
        s += &format!(
            "; {} reset once {} connection{} and the backlog {named} were full",
            thousands(resets),
            thousands(max_connections as u64),
            if max_connections == 1 { "" } else { "s" },
        );
    }
    let unsent = out.errors.get("client-connections").copied().unwrap_or(0);
    if unsent > 0 {
        s += &format!(
            "; {} could not be sent: all {} client connections were waiting (raise the client's connection cap)",
            thousands(unsent),
            thousands(work.connections.max() as u64)
        );
    }
    let timeouts = out.errors.get("timeout").copied().unwrap_or(0);
    if timeouts > 0 && p.throughput_rps > p.goodput_rps * 1.2 {
        s += &format!(
            "; the server still finishes {} req/s, but only {} req/s in time (goodput)",
            num(p.throughput_rps),
            num(p.goodput_rps)
        );
    }
    s
}

/// Little's law on what the server was doing.
fn little(out: &SimOutcome, p: &Prediction, s: f64) -> String {
    let timeouts = out.errors.get("timeout").copied().unwrap_or(0);
    let over = matches!(p.capacity_rps, Some(c) if p.throughput_rps >= 0.9 * c && timeouts > 0);
    if over {
        return format!(
            ". Little's law: {} req/s x {} each = {} requests being worked on, the rest wait.",
            num(p.throughput_rps),
            secs(s),
            num(little_in_flight(p.throughput_rps, s))
        );
    }
    let lat = if p.latency_ms.p50 > 0.0 {
        p.latency_ms.p50 / 1e3
    } else {
        s
    };
    format!(
        ". Little's law: {} req/s x {} = {} in flight.",
        num(p.goodput_rps),
        secs(lat),
        num(little_in_flight(p.goodput_rps, lat))
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups() {
        assert_eq!(super::thousands(27_000), "27,000");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_000_000), "1,000,000");
    }
}
