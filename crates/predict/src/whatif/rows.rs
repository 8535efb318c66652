//! The changes a what-if simulates for each binding resource, in the words
//! a team uses: the runtime's own knob with the size as configured when the
//! service's series show them (`server.tomcat.threads.max 20 -> 40`,
//! `anyio's total_tokens 40 -> 80`), else `20 -> 40 threads`, and a size
//! counted by Little's law said to be one. Python gets no virtual threads
//! (it has none): `async def` and more uvicorn workers instead.

use iolab_model::capacity::gauges::{gauge, Gauge, ServiceRuntime};
use iolab_model::capacity::Fit;
use iolab_model::ModelKind;

use crate::fit::{knobs, Network};

/// What the changes are sized from: the binding resource's units, the
/// requests held at the knee, the host's cores.
pub(super) struct Sizes {
    pub(super) size: u64,
    pub(super) held: f64,
    pub(super) cores: u32,
}

impl Sizes {
    fn all_cores(&self) -> u64 {
        u64::from(self.cores)
    }
}

/// How the fit lets a change be said: the runtime, the binding gauge (its
/// knob), whether the size is as configured.
pub(super) struct Words {
    runtime: Option<ServiceRuntime>,
    gauge: Option<&'static Gauge>,
    configured: bool,
}

impl Words {
    pub(super) fn of(f: &Fit) -> Words {
        let b = &f.binding;
        Words {
            runtime: b.runtime,
            gauge: b.name.as_deref().and_then(gauge),
            configured: b.configured,
        }
    }

    /// `server.tomcat.threads.max 20 -> 40`, `20 -> 40 threads`, or
    /// `about 23 -> 46 threads (Little's count; the configured size unread)`.
    fn resize(&self, unit: &str, from: u64, to: u64) -> String {
        match (self.configured, self.gauge) {
            (true, Some(g)) => format!("{} {from} -> {to}", g.knob),
            (true, None) => format!("{from} -> {to} {unit}"),
            (false, _) => {
                format!("about {from} -> {to} {unit} (Little's count; the configured size unread)")
            }
        }
    }

    fn python(&self) -> bool {
        self.runtime == Some(ServiceRuntime::Python)
    }
}

/// `, the same pool of 50` when the network keeps a pool beside.
fn same_pool(net: &Network) -> String {
    net.params
        .pg_pool
        .map_or(String::new(), |p| format!(", the same pool of {p}"))
}

/// The fitted work on `workers` event loops of `cores` cores.
pub(super) fn loop_async(net: &Network, workers: u64, cores: u32) -> Network {
    net.on(ModelKind::LoopAsync, knobs(&[("workers", workers)]), cores)
}

pub(super) fn for_threads(net: &Network, s: &Sizes, w: &Words) -> Vec<(String, Network)> {
    let cores = s.cores;
    let pool = same_pool(net);
    // Python's series without anyio's gauges cannot tell gunicorn's
    // threads from anyio's limiter: both knobs named.
    let which = match (w.python(), w.gauge) {
        (true, None) => {
            ": gunicorn --threads (gthread) or anyio's total_tokens (uvicorn, def handlers)"
        }
        _ => "",
    };
    let mut out = vec![(
        format!("{}{which}{pool}", w.resize("threads", s.size, 2 * s.size)),
        net.on(ModelKind::Pool, knobs(&[("threads", 2 * s.size)]), cores),
    )];
    if w.python() {
        out.push((
            format!("async def handlers, one uvicorn worker (no thread held while waiting){pool}"),
            loop_async(net, 1, cores),
        ));
        if cores > 1 {
            out.push((
                format!("uvicorn --workers {cores}, {} threads each{pool}", s.size),
                net.on(
                    ModelKind::Pool,
                    knobs(&[("threads", s.size), ("processes", s.all_cores())]),
                    cores,
                ),
            ));
        }
        return out;
    }
    let spring = w.runtime == Some(ServiceRuntime::Spring);
    if w.runtime.is_none_or(ServiceRuntime::has_virtual_threads) {
        let knob = if spring {
            "spring.threads.virtual.enabled=true (virtual threads)"
        } else {
            "virtual threads"
        };
        out.push((
            format!("{knob}{pool}"),
            net.on(ModelKind::Virtual, knobs(&[]), cores),
        ));
    }
    let webflux = if spring { " (WebFlux)" } else { "" };
    out.push((
        format!("non-blocking{webflux}, an event loop on each of {cores} cores{pool}"),
        loop_async(net, s.all_cores(), cores),
    ));
    out
}

pub(super) fn for_workers(net: &Network, s: &Sizes, w: &Words) -> Vec<(String, Network)> {
    let cores = s.cores;
    let more = if w.python() {
        format!("gunicorn --workers {} -> {}", s.size, 2 * s.size)
    } else {
        format!("{} -> {} workers", s.size, 2 * s.size)
    };
    vec![
        (
            more,
            net.on(
                ModelKind::Prefork,
                knobs(&[("processes", 2 * s.size)]),
                cores,
            ),
        ),
        (
            "non-blocking, one process (one event loop)".into(),
            loop_async(net, 1, cores),
        ),
        (
            format!("non-blocking, one process per core ({cores})"),
            loop_async(net, s.all_cores(), cores),
        ),
    ]
}

pub(super) fn for_pool(net: &Network, s: &Sizes, w: &Words) -> Vec<(String, Network)> {
    let cores = s.cores;
    // Twice the threads as configured beside the pool (Tomcat's 200 read
    // "server.tomcat.threads.max 20" on a real Spring pool of 10: fewer
    // threads than it ran), else twice the requests held.
    let configured = net.params.threads.map(u64::from);
    let threads = configured.map_or((s.held.round() as u64 * 2).max(2 * s.size), |t| 2 * t);
    let more_threads = match (w.runtime, configured) {
        (Some(ServiceRuntime::Spring), Some(t)) => {
            format!("server.tomcat.threads.max {t} -> {threads}, the same pool")
        }
        (Some(ServiceRuntime::Spring), None) => {
            format!("server.tomcat.threads.max {threads}, the same pool")
        }
        (_, Some(t)) => format!("{t} -> {threads} threads, the same pool"),
        _ => format!("more threads ({threads}), the same pool"),
    };
    let bigger = match (w.configured, w.gauge) {
        (true, Some(_)) => format!(
            "a pool of {}: {}",
            2 * s.size,
            w.resize("connections", s.size, 2 * s.size)
        ),
        _ => format!("a pool of {}", 2 * s.size),
    };
    let mut out = vec![(
        more_threads,
        net.on(ModelKind::Pool, knobs(&[("threads", threads)]), cores),
    )];
    if w.runtime.is_none_or(ServiceRuntime::has_virtual_threads) {
        out.push((
            "non-blocking, the same pool".into(),
            loop_async(net, s.all_cores(), cores),
        ));
    } else if w.python() {
        out.push((
            "async def handlers, the same pool".into(),
            loop_async(net, 1, cores),
        ));
    }
    let mut params = net.params.clone();
    params.pg_pool = Some((2 * s.size).min(u64::from(u32::MAX)) as u32);
    out.push((bigger, net.on(net.model, params, cores)));
    out
}

pub(super) fn for_cpu(net: &Network, s: &Sizes) -> Vec<(String, Network)> {
    let cores = s.cores;
    let threads = (2.0 * s.held).round().max(2.0) as u64;
    let mut out = vec![
        (
            format!("twice the cores ({})", 2 * cores),
            loop_async(net, 2 * s.all_cores(), 2 * cores),
        ),
        (
            format!("more threads ({threads})"),
            net.on(ModelKind::Pool, knobs(&[("threads", threads)]), cores),
        ),
    ];
    if s.size < s.all_cores() {
        out.push((
            format!("one process per core ({cores})"),
            loop_async(net, s.all_cores(), cores),
        ));
    }
    out
}

pub(super) fn for_event_loop(net: &Network, s: &Sizes) -> Vec<(String, Network)> {
    let cores = s.cores;
    vec![
        (
            "blocking calls on an offload pool of 4".into(),
            net.on(
                ModelKind::LoopOffload,
                knobs(&[("workers", 1), ("offload", 4)]),
                cores,
            ),
        ),
        (
            "non-blocking calls on the same loop".into(),
            loop_async(net, 1, cores),
        ),
        (
            format!("one process per core ({cores})"),
            net.on(
                ModelKind::LoopBlocking,
                knobs(&[("workers", 1), ("processes", s.all_cores())]),
                cores,
            ),
        ),
    ]
}
