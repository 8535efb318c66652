//! The closed-form prediction of an HTTP fixture (what `iolab predict` would
//! say), a little off from the simulation on purpose, as real predictions are.

use iolab_model::predict::{PredictedLatency, Prediction};
use iolab_model::{ModelKind, ModelParams};

use super::r;
use super::sim::{server_of, Load};

pub fn predict(name: &str, model: ModelKind, p: &ModelParams, load: &Load) -> Prediction {
    let srv = server_of(model, p);
    let offered = (load.rate * load.dur) as u64;
    let cap = srv.c.map(|c| c as f64 / load.s);
    let (ok, first) = match cap {
        Some(cap) if load.rate > cap => {
            let rho = load.rate / cap;
            let t1 = (load.timeout - load.s) / (rho - 1.0);
            ((load.rate * t1.min(load.dur)) as u64, Some(r(t1, 3)))
        }
        _ => (offered, None),
    };
    let ok = ok.min(offered);
    let ok = match srv.queue_cap {
        Some(q) if cap.is_some_and(|c| load.rate > c) => {
            ((cap.unwrap() * load.dur) as u64 + q as u64).min(offered)
        }
        _ => ok,
    };
    let sr = ok as f64 / offered as f64;
    let all_ok = sr > 0.999;
    let p50 = if all_ok {
        load.s * 1e3
    } else {
        load.timeout * 1e3 * 0.55
    };
    let p99 = if all_ok {
        load.s * 1e3 * 1.02
    } else {
        load.timeout * 1e3 * 0.98
    };
    Prediction {
        name: name.into(),
        model: model.as_str().into(),
        offered,
        ok,
        success_ratio: r(sr, 4),
        goodput_rps: r(ok as f64 / load.dur, 2),
        throughput_rps: r(cap.map_or(load.rate, |c| c.min(load.rate)), 2),
        latency_ms: PredictedLatency {
            p50: r(p50, 1),
            p99: r(p99, 1),
        },
        peak_in_flight: cap.map_or((load.rate * load.s).ceil() as u64, |c| (c * load.s) as u64),
        peak_threads: srv.c.map(|c| c as u64),
        capacity_rps: cap.map(|c| r(c, 2)),
        first_timeout_s: first,
        explanation: String::new(),
        ..Default::default()
    }
}
