//! The one table of a service's own Prometheus gauges the binding rules
//! read (a pool's or a thread pool's in-use, max and waiting series), the
//! series that say which runtime serves (Micrometer's JVM series, Python's
//! `python_info`, Go's runtime, Node's event-loop lag), and each runtime's
//! own knob for the resource with its default. The default `--series` of a
//! capacity search, the rules in `iolab-predict` and the what-ifs' words
//! are all generated from it, so a gauge added here is scraped, read and
//! named everywhere at once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Resource;

/// The runtime a service's series show it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServiceRuntime {
    /// Spring Boot (Micrometer's Tomcat, Jetty or HikariCP series).
    Spring,
    /// Another JVM service (Micrometer's JVM series, no Spring starter's).
    Jvm,
    /// CPython (prometheus_client's `python_info`): uvicorn, gunicorn.
    Python,
    /// Go (client_golang's runtime series).
    Go,
    /// Node (prom-client's event-loop lag).
    Node,
}

impl ServiceRuntime {
    /// Its name, as a sentence says it.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceRuntime::Spring => "Spring Boot",
            ServiceRuntime::Jvm => "a JVM",
            ServiceRuntime::Python => "Python",
            ServiceRuntime::Go => "Go",
            ServiceRuntime::Node => "Node",
        }
    }

    /// Does it have virtual (green) threads a team can switch on?
    pub fn has_virtual_threads(self) -> bool {
        matches!(self, ServiceRuntime::Spring | ServiceRuntime::Jvm)
    }

    /// The runtime `metrics` (a step's scraped peaks) show: the first
    /// gauge or marker of the table found there.
    pub fn recognise(metrics: &BTreeMap<String, f64>) -> Option<ServiceRuntime> {
        GAUGES
            .iter()
            .filter(|g| metrics.contains_key(g.in_use) || metrics.contains_key(g.max))
            .map(|g| g.runtime)
            .chain(
                MARKERS
                    .iter()
                    .filter(|(s, _)| metrics.contains_key(*s))
                    .map(|(_, r)| *r),
            )
            .next()
    }
}

/// A pool or thread pool as a service exports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gauge {
    /// Its name in sentences, e.g. `HikariCP`.
    pub label: &'static str,
    /// Its name in a binding (`Binding::name`), e.g. `hikaricp`.
    pub name: &'static str,
    /// What it is when it binds.
    pub resource: Resource,
    /// Units in use (its peak over a step).
    pub in_use: &'static str,
    /// Units configured (`_max`).
    pub max: &'static str,
    /// Requests waiting for a unit, when exported.
    pub waiting: Option<&'static str>,
    /// What a unit is called.
    pub unit: &'static str,
    /// The runtime that exports it.
    pub runtime: ServiceRuntime,
    /// The setting a team changes to size it.
    pub knob: &'static str,
    /// The setting's default, when the runtime has one.
    pub default: Option<u32>,
}

/// Every gauge the rules read, pools first: a pool's gauge saturated with
/// requests waiting explains its threads' being busy, not the other way.
pub const GAUGES: [Gauge; 5] = [
    Gauge {
        label: "HikariCP",
        name: "hikaricp",
        resource: Resource::Pool,
        in_use: "hikaricp_connections_active",
        max: "hikaricp_connections_max",
        waiting: Some("hikaricp_connections_pending"),
        unit: "connections",
        runtime: ServiceRuntime::Spring,
        knob: "spring.datasource.hikari.maximum-pool-size",
        default: Some(10),
    },
    Gauge {
        label: "the executor",
        name: "executor",
        resource: Resource::Pool,
        in_use: "executor_active_threads",
        max: "executor_pool_max_threads",
        waiting: Some("executor_queued_tasks"),
        unit: "threads",
        runtime: ServiceRuntime::Jvm,
        knob: "the executor's maximum pool size",
        default: None,
    },
    Gauge {
        label: "Tomcat",
        name: "tomcat",
        resource: Resource::Threads,
        in_use: "tomcat_threads_busy_threads",
        max: "tomcat_threads_config_max_threads",
        waiting: None,
        unit: "threads",
        runtime: ServiceRuntime::Spring,
        knob: "server.tomcat.threads.max",
        default: Some(200),
    },
    Gauge {
        label: "Jetty",
        name: "jetty",
        resource: Resource::Threads,
        in_use: "jetty_threads_busy",
        max: "jetty_threads_config_max",
        waiting: Some("jetty_threads_jobs"),
        unit: "threads",
        runtime: ServiceRuntime::Spring,
        knob: "server.jetty.threads.max",
        default: Some(200),
    },
    // anyio exports nothing itself: these are the three values of
    // `anyio.to_thread.current_default_thread_limiter()` (borrowed_tokens,
    // total_tokens, statistics().tasks_waiting) under the names
    // docs/capacity.md gives a user to export them by.
    Gauge {
        label: "anyio's thread limiter",
        name: "anyio",
        resource: Resource::Threads,
        in_use: "anyio_borrowed_tokens",
        max: "anyio_total_tokens",
        waiting: Some("anyio_tasks_waiting"),
        unit: "threads",
        runtime: ServiceRuntime::Python,
        knob: "anyio's total_tokens",
        default: Some(40),
    },
];

/// Series that name the runtime without a gauge of the table.
pub const MARKERS: [(&str, ServiceRuntime); 4] = [
    ("jvm_threads_live_threads", ServiceRuntime::Jvm),
    ("python_info", ServiceRuntime::Python),
    ("go_goroutines", ServiceRuntime::Go),
    ("nodejs_eventloop_lag_seconds", ServiceRuntime::Node),
];

/// Event-loop lag series (seconds): Node's prom-client defaults; the
/// longest since the last scrape is read for the machine's line
/// ([`super::LoopDelay`]).
pub const LAG: [&str; 3] = [
    "nodejs_eventloop_lag_seconds",
    "nodejs_eventloop_lag_p99_seconds",
    super::LoopDelay::SERIES,
];

/// iolab's own targets' series (the target contract's `/metrics`).
const CONTRACT: [&str; 2] = ["iolab_requests_in_flight", "iolab_requests_queued"];

/// The series a capacity search keeps from `--metrics` when no `--series`
/// is given: every series of the table, once each.
pub fn default_series() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let gauges = GAUGES
        .iter()
        .flat_map(|g| [Some(g.in_use), Some(g.max), g.waiting])
        .flatten();
    let rest = MARKERS.iter().map(|(s, _)| *s).chain(LAG).chain(CONTRACT);
    for s in gauges.chain(rest) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// The gauge of the table called `name` (`Binding::name`).
pub fn gauge(name: &str) -> Option<&'static Gauge> {
    GAUGES.iter().find(|g| g.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 50 finding 1: the default series kept only HikariCP's active
    /// and pending and Tomcat's busy, so no rule could see a max.
    #[test]
    fn r50_10_default_series_hold_every_gauge_the_rules_read() {
        let s = default_series();
        for g in GAUGES {
            assert!(s.contains(&g.in_use.to_string()), "{}", g.in_use);
            assert!(s.contains(&g.max.to_string()), "{}", g.max);
            if let Some(w) = g.waiting {
                assert!(s.contains(&w.to_string()), "{w}");
            }
        }
        for name in [
            "hikaricp_connections_max",
            "tomcat_threads_config_max_threads",
            "jetty_threads_config_max",
            "executor_pool_max_threads",
            "go_goroutines",
            "nodejs_eventloop_lag_seconds",
            "python_info",
        ] {
            assert!(s.contains(&name.to_string()), "{name}");
        }
        let mut dedup = s.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), s.len());
    }

    #[test]
    fn the_runtime_is_recognised_from_its_series() {
        let m = |names: &[&str]| names.iter().map(|n| (n.to_string(), 1.0)).collect();
        let spring = m(&["jvm_threads_live_threads", "hikaricp_connections_active"]);
        assert_eq!(
            ServiceRuntime::recognise(&spring),
            Some(ServiceRuntime::Spring)
        );
        let py = m(&["python_info"]);
        assert_eq!(ServiceRuntime::recognise(&py), Some(ServiceRuntime::Python));
        assert_eq!(ServiceRuntime::recognise(&BTreeMap::new()), None);
        assert!(!ServiceRuntime::Python.has_virtual_threads());
    }

    /// The user manual's table names every gauge, knob and default.
    #[test]
    fn r50_20_the_manual_lists_every_gauge_of_the_table() {
        let doc = include_str!("../../../../docs/capacity.md");
        for g in GAUGES {
            let mut names = vec![g.in_use, g.max, g.knob];
            names.extend(g.waiting);
            for name in names {
                assert!(
                    doc.contains(&format!("`{name}`")) || doc.contains(name),
                    "{name}"
                );
            }
            if let Some(d) = g.default {
                assert!(doc.contains(&format!("({d})")), "{} default {d}", g.label);
            }
        }
        for (m, _) in MARKERS {
            assert!(doc.contains(m), "{m}");
        }
    }
}
