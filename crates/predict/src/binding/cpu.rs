//! Rule 2 of the naming, the CPU (the cores busy at capacity, or one
//! thread's core), and the figure said both ways when it sits near the
//! line the rule reads it at.

use iolab_model::capacity::{Binding, Confidence, Resource, ThreadState};

use super::{binding, ms, n, Knee};

/// The share of its cores busy at which the CPU is read as binding.
const CPU_LINE: f64 = 0.8;

/// A CPU figure within a tenth of [`CPU_LINE`] says both readings with
/// the figure: one run's 0.78 of a core read "unknown", the next's 0.82
/// "cpu", of the same service (issue 50).
pub(super) fn near_the_cpu_line(k: &Knee, b: &mut Binding) {
    let (Some(busy), cores) = (k.busy(), k.allowed()) else {
        return;
    };
    let share = busy / f64::from(cores);
    if (share - CPU_LINE).abs() >= 0.1 {
        return;
    }
    let side = if b.resource == Resource::Cpu {
        "just over"
    } else {
        "just under"
    };
    let other = if b.resource == Resource::Cpu {
        "the CPU, or what holds requests (threads, a pool) if its share falls a few points"
            .to_string()
    } else {
        format!(
            "the {}, or the CPU if its share rises a few points",
            b.resource
        )
    };
    b.sentence.push_str(&format!(
        "; the CPU, {busy:.2} of {cores} cores busy ({:.0}%), is {side} the {:.0}% line it is read as binding at: read both ways, {other}",
        share * 100.0,
        CPU_LINE * 100.0,
    ));
}

pub(super) fn cpu(k: &Knee) -> Option<Binding> {
    let busy = k.busy()?;
    let cores = k.allowed();
    let t = k.cpu_ms?;
    // What the threads would burn with a core each (a starved target's CPU
    // time reads low, its queue does not): what ran plus what waited for a
    // CPU (schedstat) when measured, else the threads sampled in state R.
    // Sampled, a gunicorn A read 0.8 threads in R beside 0.39 cores busy
    // and 0.16 waiting, and was named the CPU, not its 4 workers. On pinned
    // cores, only the wait other work explains (its own threads queueing
    // for a core half idle want no more of it: r53_10).
    let running = k
        .threads()
        .map_or(0.0, |t| t.in_state(ThreadState::Running));
    let waited = k.at.cpu_wait_denied(busy);
    let wants = |n: f64| waited.map_or(running, |w| busy + w) >= 0.8 * n;
    if busy >= CPU_LINE * f64::from(cores) || (wants(f64::from(cores)) && busy >= 0.3) {
        let mut b = binding(
            k,
            Resource::Cpu,
            Some(f64::from(cores)),
            format!(
                "is limited by CPU: {busy:.2} of {cores} cores busy at {}/s{} ({} of CPU per request, {}); more threads would not help, more cores (processes) would",
                n(k.capacity),
                k.busy_how(),
                ms(t),
                k.cpu_how()
            ),
        );
        let waiting = waited.unwrap_or(0.0);
        if busy >= 0.9 * f64::from(cores) || waiting >= 0.2 {
            b.confidence = Confidence::High;
        }
        return Some(b);
    }
    let hot = k.threads()?.hottest.as_ref()?;
    let saturated = hot.cores >= 0.8 || (wants(1.0) && hot.cores >= 0.3);
    if saturated && hot.cores >= 0.6 * busy && cores > 1 {
        let mut b = binding(
            k,
            Resource::Cpu,
            Some(1.0),
            format!(
                "is limited by one thread's CPU: '{}' ran {:.2} of a core at {}/s ({} threads running or waiting for a CPU on average) while {cores} cores were allowed (an event loop or an interpreter lock computes on one core); more processes, one per core, would raise it",
                hot.name,
                hot.cores,
                n(k.capacity),
                n(running)
            ),
        );
        b.name = Some(hot.name.clone());
        b.confidence = Confidence::High;
        return Some(b);
    }
    None
}
