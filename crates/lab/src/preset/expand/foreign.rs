//! The foreign-target fields of a `[[targets]]` table (`url`, `request`,
//! `health`, `pid`, `metrics`, `series`, `insecure`): their rules, and the
//! [`ForeignSpec`] of a run.

use iolab_model::request::{ForeignSpec, RequestTemplate};

use super::super::file::TargetSection;
use super::{fault, FieldError};

/// Is this table a foreign target?
pub(super) fn is_foreign(t: &TargetSection) -> bool {
    t.url.is_some() || t.request.is_some()
}

/// The rules of the foreign fields of target `i`.
pub(super) fn check(i: usize, t: &TargetSection) -> Result<(), FieldError> {
    let field = |f: &str| format!("targets[{i}].{f}");
    if !is_foreign(t) {
        for (name, set) in [
            ("health", t.health.is_some()),
            ("pid", t.pid.is_some()),
            ("metrics", t.metrics.is_some()),
            ("series", t.series.is_some()),
            ("insecure", t.insecure.is_some()),
        ] {
            if set {
                return Err(fault(
                    field(name),
                    "applies to a foreign target: add url (or command) and request = { path = \"/\" }",
                ));
            }
        }
        return Ok(());
    }
    match (&t.url, &t.command, &t.request) {
        (Some(_), Some(_), _) => {
            return Err(fault(
                field("url"),
                "give url (a service already running) or command (iolab starts it), not both",
            ))
        }
        (None, None, _) => {
            return Err(fault(
                field("request"),
                "a request needs the service: url = \"http://127.0.0.1:8080\" or command = [...]",
            ))
        }
        (_, _, None) => return Err(fault(
            field("request"),
            "a foreign target needs request = { path = \"/\" } (method, headers, body optional)",
        )),
        _ => {}
    }
    // `runtime` on a foreign target names what the service is built on, so
    // its prediction takes that runtime's defaults (gunicorn's backlog of
    // 2048); iolab starts nothing of the runtime's.
    if !t.runtime.is_rust() {
        crate::targets::Manifest::load(&t.runtime).map_err(|e| {
            fault(
                field("runtime"),
                format!("{e} (on a foreign target, runtime names what the service is built on, for its defaults)"),
            )
        })?;
    }
    if let Some(url) = &t.url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(fault(
                field("url"),
                "give the service's base URL, e.g. \"http://127.0.0.1:8080\"",
            ));
        }
    }
    if t.pid.is_some() && t.url.is_none() {
        return Err(fault(
            field("pid"),
            "iolab knows the PID of a target it starts: pid applies with url",
        ));
    }
    for (name, path) in [("health", &t.health), ("metrics", &t.metrics)] {
        if let Some(p) = path {
            if !(p.starts_with('/') || p.contains("://")) {
                return Err(fault(
                    field(name),
                    "give a path starting with '/', or a URL",
                ));
            }
        }
    }
    let Some(spec) = spec(t) else {
        return Err(fault(
            field("request"),
            "a foreign target needs request = { path = \"/\" }",
        ));
    };
    if !spec.request.url.starts_with('/') {
        return Err(fault(
            field("request.path"),
            "give a path starting with '/', e.g. \"/api/orders\"",
        ));
    }
    spec.request.check().map_err(|e| fault(field("request"), e))
}

/// The foreign spec of a target table, when it is one.
pub(super) fn spec(t: &TargetSection) -> Option<Box<ForeignSpec>> {
    let r = t.request.as_ref()?;
    Some(Box::new(ForeignSpec {
        url: t.url.as_ref().map(|u| u.trim_end_matches('/').to_string()),
        request: RequestTemplate {
            method: r.method.clone().unwrap_or_else(|| "GET".into()),
            url: r.path.clone(),
            headers: r
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            body: r.body.clone().unwrap_or_default().into_bytes(),
        },
        health: t.health.clone(),
        pid: t.pid,
        metrics: t.metrics.clone(),
        series: t.series.clone().unwrap_or_default(),
        insecure: t.insecure.unwrap_or(false),
        protocol: Default::default(),
    }))
}
