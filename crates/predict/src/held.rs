//! A held-connection run predicted (preset `c10k`, `driver = "held"`): how
//! many of its WebSockets the model holds at once, what each costs in
//! threads and memory ([`iolab_model::concurrency::held`], where the
//! assumption is stated), and the message latency on an idle server. No
//! simulation: a held connection holds its thread or task for the whole
//! hold, so the counts follow from the shape alone.

use iolab_model::concurrency::held::held_cost;
use iolab_model::concurrency::{counted, Host};
use iolab_model::experiment::{HeldLoad, HttpWork};
use iolab_model::predict::{HeldPrediction, PredictedLatency, Prediction};
use iolab_model::units::thousands;
use iolab_model::{ModelKind, ModelParams};

use crate::sim::program::Program;

/// Predict a held run of `model` with `params` on `host`.
pub fn predict_held(
    model: ModelKind,
    params: &ModelParams,
    work: &HttpWork,
    load: &HeldLoad,
    host: Host,
) -> Prediction {
    let shape = model.shape(params, &host);
    let cost = held_cost(&shape);
    let asked = u64::from(load.connections);
    let held = cost.holds.map_or(asked, |n| asked.min(u64::from(n)));
    // Past the threads, connections wait in the queue and the backlog until
    // their handshake times out; past those the kernel drops their
    // handshakes (it answers a full backlog with nothing, not a reset), so
    // they time out too.
    let mut errors = std::collections::BTreeMap::new();
    if asked > held {
        errors.insert("timeout".to_string(), asked - held);
    }
    // An echo on an idle server: the steps' own time (the loopback round
    // trip is tens of microseconds, under what this says).
    let steps_ms = Program::compile(&work.steps, true).unloaded_ns() as f64 / 1e6;
    let threads =
        u64::from(shape.fixed_threads) + (held as f64 * cost.threads_per_connection) as u64;
    let hold_s = load.hold.as_secs_f64();
    let explanation = sentence(model, load, held, &cost, steps_ms);
    Prediction {
        name: String::new(),
        model: model.as_str().to_string(),
        offered: asked,
        ok: held,
        success_ratio: if asked > 0 {
            held as f64 / asked as f64
        } else {
            0.0
        },
        goodput_rps: held as f64 * load.message_rate,
        throughput_rps: held as f64 * load.message_rate,
        latency_ms: PredictedLatency {
            p50: steps_ms,
            p99: steps_ms,
        },
        peak_in_flight: held,
        peak_threads: Some(threads),
        capacity_rps: None,
        first_timeout_s: None,
        explanation,
        errors,
        total_s: Some(f64::from(load.connections) / load.open_rate + hold_s),
        held: Some(HeldPrediction {
            connections: asked,
            held,
            threads_per_connection: cost.threads_per_connection,
            kib_per_connection: cost.kib_per_connection,
            holds: cost.holds.map(u64::from),
            why: cost.why,
        }),
    }
}

/// One sentence from the numbers.
fn sentence(
    model: ModelKind,
    load: &HeldLoad,
    held: u64,
    cost: &iolab_model::concurrency::held::HeldCost,
    steps_ms: f64,
) -> String {
    let asked = u64::from(load.connections);
    let threads = match cost.threads_per_connection {
        t if t > 0.0 => format!("a thread ({} in all)", thousands(held)),
        _ => "no thread of its own".to_string(),
    };
    let rest = match asked - held {
        0 => String::new(),
        n => format!(
            "; the other {} wait for a thread and time out",
            counted(n, "connections")
        ),
    };
    format!(
        "{} holds {} of {} WebSockets ({}){rest}; each costs {threads} and about {} KiB resident, \
         so {} held cost about {} MiB; an echo takes the steps' {} ms on an idle server, plus the loopback round trip.",
        model.as_str(),
        thousands(held),
        thousands(asked),
        cost.why,
        cost.kib_per_connection,
        thousands(held),
        ((held as f64 * cost.kib_per_connection) / 1024.0).round(),
        num3(steps_ms),
    )
}

/// Up to three decimals, trailing zeros dropped.
fn num3(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use iolab_model::{Driver, Step};

    fn load(n: u32) -> (HttpWork, HeldLoad) {
        let held = HeldLoad {
            connections: n,
            open_rate: 500.0,
            hold: Duration::from_secs(20),
            message_rate: 1.0,
            message: "hi".into(),
            source_addrs: Vec::new(),
        };
        let steps: Step = "cpu:1".parse().unwrap();
        let mut w = HttpWork::new(
            steps,
            Driver::constant(1.0, Duration::from_secs(1)),
            Duration::from_secs(5),
        );
        w.driver = held.opens();
        w.held = Some(held.clone());
        (w, held)
    }

    /// `model` with its defaults on 2 cores, asked to hold `n` connections.
    fn predicted(model: ModelKind, n: u32) -> Prediction {
        let (w, h) = load(n);
        predict_held(model, &ModelParams::default(), &w, &h, Host::cores(2))
    }

    #[test]
    fn a_pool_of_200_holds_200_and_the_rest_time_out() {
        let p = predicted(ModelKind::Pool, 1000);
        let hp = p.held.as_ref().unwrap();
        assert_eq!((hp.held, hp.holds, p.ok), (200, Some(200), 200));
        assert_eq!(p.errors.get("timeout"), Some(&800));
        assert_eq!(p.peak_threads, Some(200));
        assert!(
            p.explanation.contains("the other 800 connections wait"),
            "{}",
            p.explanation
        );
        let p = predicted(ModelKind::LoopAsync, 1000);
        assert_eq!(p.ok, 1000);
        assert!(p.errors.is_empty());
        assert_eq!(p.held.unwrap().threads_per_connection, 0.0);
    }

    /// Issue 52: past a pool's queue (8,192 less its threads) and backlog,
    /// predict said the kernel resets the handshakes (1,708 at 10,000); the
    /// run timed out all 9,800 (a full backlog drops them, it does not reset).
    #[test]
    fn r52_13_past_the_pool_queue_handshakes_time_out_not_reset() {
        let p = predicted(ModelKind::Pool, 10_000);
        assert_eq!(p.errors.get("timeout"), Some(&9_800));
        assert_eq!(p.errors.get("reset"), None);
    }
}
