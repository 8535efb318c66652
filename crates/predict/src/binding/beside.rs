//! The resources beside the binding one: every gauge of the service's own
//! below its max, and a pool of connections to a downstream larger than
//! the requests held at once, each with the rate at which it would bind.
//! The fitted network keeps them (a what-if that relieves the binding
//! resource meets them), and the sentence says how far relieving it goes.

use iolab_model::capacity::{Binding, Limit, Resource, Source};

use super::prometheus::readings;
use super::{n, wait_ms, Knee};

/// Keep in `b` the resources beside it and say where they bind.
pub(super) fn keep(k: &Knee, b: &mut Binding) {
    if b.also.is_empty() {
        b.also = beside(k, b);
    }
    // Gauges read below their max speak too, whatever named the binding.
    if !b.evidence.iter().any(|e| e.source == Source::Prometheus) {
        b.evidence.extend(readings(k).iter().map(|r| r.evidence()));
    }
    b.also
        .sort_by(|x, y| x.binds_at_rps.total_cmp(&y.binds_at_rps));
    let Some(next) = b.also.first().filter(|l| l.binds_at_rps.is_finite()) else {
        return;
    };
    let what = next.what();
    let rate = n(next.binds_at_rps);
    let least = if next.configured {
        ""
    } else {
        " or more (if each request held one its whole wait)"
    };
    if next.binds_at_rps <= 1.15 * k.capacity {
        b.sentence.push_str(&format!(
            "; two resources near saturation: the {} binds first, at {}/s, {what} would at ~{rate}/s{least}",
            b.resource,
            n(k.capacity)
        ));
    } else if b.resource != Resource::Pool {
        b.sentence.push_str(&format!(
            "; relieving it would help up to where {what} binds, at ~{rate}/s{least}"
        ));
    }
}

/// The gauges below their max, and the pools of connections (when no
/// pool's gauge was read) larger than c by a tenth: a pool grown to the
/// threads that bind says nothing of its max.
fn beside(k: &Knee, b: &Binding) -> Vec<Limit> {
    let rs = readings(k);
    let mut out: Vec<Limit> = rs
        .iter()
        .filter(|r| Some(r.gauge.name) != b.name.as_deref())
        .map(|r| r.limit(k))
        .collect();
    if rs.iter().any(|r| r.gauge.resource == Resource::Pool) {
        return out;
    }
    let Some(s) = k.signals() else {
        return out;
    };
    let wait = wait_ms(k);
    for d in &s.downstream {
        let size = d.connections as f64;
        if Some(d.endpoint.as_str()) == b.name.as_deref() || size <= 1.1 * k.concurrency {
            continue;
        }
        if wait <= 0.0 {
            continue;
        }
        out.push(Limit {
            resource: Resource::Pool,
            size,
            name: Some(d.endpoint.clone()),
            hold_ms: wait,
            binds_at_rps: size / wait * 1000.0,
            configured: false,
        });
    }
    out
}
