//! The readings a naming shows beside its sentence: the curve's (Little's
//! law, the latency split), `/proc`'s (threads by state, the busiest thread,
//! CPU per request) and the kernel's (connections to downstreams, the accept
//! queue).

use iolab_model::capacity::{Evidence, Source, ThreadState};

use super::{ms, n, Knee};

/// The readings every naming shows, curve first.
pub(super) fn evidence(k: &Knee) -> Vec<Evidence> {
    let mut out = latency(k);
    out.extend(threads(k));
    out.extend(kernel(k));
    out
}

fn item(source: Source, text: String) -> Evidence {
    Evidence { source, text }
}

/// Little's law and the latency split just above the knee.
fn latency(k: &Knee) -> Vec<Evidence> {
    let mut out = vec![item(
        Source::Latency,
        format!(
            "Little's law: {}/s x {} = {} requests held at once at the knee",
            n(k.capacity),
            ms(k.service_ms),
            n(k.concurrency)
        ),
    )];
    if let Some(o) = k.over {
        let queued = (o.attack.service_ms.p50 - k.service_ms).max(0.0);
        out.push(item(
            Source::Latency,
            format!(
                "latency split at {}/s: {} of service, {} queueing at the median",
                n(o.rate_rps),
                ms(k.service_ms),
                ms(queued)
            ),
        ));
    }
    out
}

/// Threads by state, the busiest thread, and CPU per request.
fn threads(k: &Knee) -> Vec<Evidence> {
    let mut out = Vec::new();
    if let Some(t) = k.threads() {
        let states: Vec<String> = ThreadState::ALL
            .iter()
            .filter(|s| t.in_state(**s) >= 0.05)
            .map(|s| format!("{} {}", n(t.in_state(*s)), s.as_str()))
            .collect();
        let processes = if t.processes == 1 {
            "1 process".to_string()
        } else {
            format!("{} processes", t.processes)
        };
        out.push(item(
            Source::Proc,
            format!(
                "{} threads in {processes} at the knee: {}",
                n(t.threads),
                states.join(", ")
            ),
        ));
        if let Some(h) = &t.hottest {
            let waiting = t.cpu_wait.map_or(String::new(), |w| {
                format!("; {w:.2} threads waiting for a CPU")
            });
            out.push(item(
                Source::Proc,
                format!("busiest thread '{}' {:.2} cores{waiting}", h.name, h.cores),
            ));
        }
    }
    if let (Some(b), Some(t)) = (k.busy(), k.cpu_ms) {
        out.push(item(
            Source::Proc,
            format!(
                "CPU {} per request ({}): {b:.2} of {} cores busy at {}/s{}",
                ms(t),
                k.cpu_how(),
                k.allowed(),
                n(k.capacity),
                k.busy_how()
            ),
        ));
    }
    out
}

/// Connections to downstreams and the accept queue, at and above the knee.
fn kernel(k: &Knee) -> Vec<Evidence> {
    let Some(s) = k.signals() else {
        return Vec::new();
    };
    let mut out: Vec<Evidence> = s
        .downstream
        .iter()
        .map(|d| {
            item(
                Source::Kernel,
                format!("{} connections to {}", d.connections, d.endpoint),
            )
        })
        .collect();
    let over_q = k.over.and_then(|o| o.signals.as_ref()?.accept_queue);
    if let Some(q) = s.accept_queue {
        let above = over_q.map_or(String::new(), |o| format!(", {o} above it"));
        out.push(item(
            Source::Kernel,
            format!("accept queue {q} at the knee{above}"),
        ));
    }
    out
}
