//! The series a simulated service exports the way Spring Boot's actuator
//! does (`Exports::Spring`): Tomcat's busy threads and its max, HikariCP's
//! active, max and pending connections, each as the scraper keeps them
//! (busy and active at their peak over the step; pending the step's mean
//! waiting, above zero whenever a request waited). A remote service
//! (`remote`) shows only these: no `/proc`, no kernel, no CPU.

use std::collections::BTreeMap;

use iolab_model::ModelKind;
use iolab_predict::sim::SimOutcome;

use super::Service;

/// What a simulated service exports of itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Exports {
    /// Nothing.
    #[default]
    Nothing,
    /// Spring Boot's Tomcat and HikariCP gauges.
    Spring,
}

/// The series `service` exports over a step's run `out`.
pub fn scraped(out: &SimOutcome, service: &Service) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    if service.exports != Exports::Spring {
        return m;
    }
    let net = &service.network;
    m.insert("jvm_threads_live_threads".into(), 40.0);
    if net.model == ModelKind::Pool {
        let max = f64::from(net.params.threads());
        m.insert("tomcat_threads_config_max_threads".into(), max);
        m.insert(
            "tomcat_threads_busy_threads".into(),
            (out.peak_threads as f64).min(max),
        );
    }
    if net.steps.to_string().contains("pg:") {
        m.insert(
            "hikaricp_connections_max".into(),
            f64::from(net.params.pg_pool()),
        );
        m.insert("hikaricp_connections_active".into(), f64::from(out.pg_peak));
        m.insert("hikaricp_connections_pending".into(), out.held.pg_waiting);
    }
    m
}
