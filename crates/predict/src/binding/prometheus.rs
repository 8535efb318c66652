//! Rule 1 of the naming: what the service says of itself in its Prometheus
//! series (HikariCP, an executor, Tomcat, Jetty at their max; Node's
//! event-loop lag grown tenfold).

use iolab_model::capacity::{Binding, Confidence, Evidence, Resource, Source};

use super::{binding, ms, n, Knee};

/// Gauges a service exports for its pools and thread pools: (in use, max,
/// waiting, name, resource).
const GAUGES: [(&str, &str, &str, &str, Resource); 4] = [
    (
        "hikaricp_connections_active",
        "hikaricp_connections_max",
        "hikaricp_connections_pending",
        "hikaricp",
        Resource::Pool,
    ),
    (
        "executor_active_threads",
        "executor_pool_max_threads",
        "executor_queued_tasks",
        "executor",
        Resource::Pool,
    ),
    (
        "tomcat_threads_busy_threads",
        "tomcat_threads_config_max_threads",
        "",
        "tomcat",
        Resource::Threads,
    ),
    (
        "jetty_threads_busy",
        "jetty_threads_config_max",
        "",
        "jetty",
        Resource::Threads,
    ),
];

/// Event-loop lag series (seconds): Node's prom-client defaults.
const LAG: [&str; 2] = [
    "nodejs_eventloop_lag_seconds",
    "nodejs_eventloop_lag_p99_seconds",
];

/// Rule 1: a pool or thread gauge at its max, or a lag series grown tenfold.
pub(super) fn prometheus(k: &Knee) -> Option<Binding> {
    for (active, max, waiting, label, resource) in GAUGES {
        let (Some(a), Some(m)) = (k.series(active), k.series(max)) else {
            continue;
        };
        if m <= 0.0 || a < m - 0.5 {
            continue;
        }
        let queued = k.series(waiting).filter(|w| *w > 0.0);
        let what = match resource {
            Resource::Threads => format!("its {label} thread pool of {}", n(m)),
            _ => format!("the {label} pool of {}", n(m)),
        };
        let mut b = binding(
            k,
            resource,
            Some(m),
            format!(
                "is limited by {what}: {active} reached its max of {} at {}/s{}, and about {} requests were held at once (Little's law); {}",
                n(m),
                n(k.capacity),
                queued.map_or(String::new(), |w| format!(" with {} waiting ({waiting})", n(w))),
                n(k.concurrency),
                match resource {
                    Resource::Threads => "more threads or a model that does not hold one while waiting would raise it",
                    _ => "more threads or a non-blocking model would not help, a bigger pool would (if what it connects to can take it)",
                }
            ),
        );
        b.name = Some(label.to_string());
        b.confidence = if (k.concurrency - m).abs() <= 0.25 * m {
            Confidence::High
        } else {
            b.settle = Some(format!(
                "Little's law gives {} held at once, not {}: the gauge at the failing rate would settle it",
                n(k.concurrency),
                n(m)
            ));
            Confidence::Medium
        };
        b.evidence.push(Evidence {
            source: Source::Prometheus,
            text: format!("{active} {} of {max} {}", n(a), n(m)),
        });
        return Some(b);
    }
    for lag in LAG {
        let (Some(low), Some(high)) = (
            k.at.metrics.get(lag),
            k.over.and_then(|o| o.metrics.get(lag)),
        ) else {
            continue;
        };
        if *high >= 0.05 && *high >= 10.0 * low.max(0.001) {
            let mut b = binding(
                k,
                Resource::EventLoop,
                Some(1.0),
                format!(
                    "is limited by its event loop, blocked by its own handlers: {lag} grew from {} at {}/s to {} above it",
                    ms(low * 1000.0),
                    n(k.capacity),
                    ms(high * 1000.0)
                ),
            );
            b.confidence = Confidence::High;
            return Some(b);
        }
    }
    None
}
