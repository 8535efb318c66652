//! Predictions against measurement: every run of the saved showdown
//! (`docs/results/showdown/runs.json`, measured on this project's machine)
//! predicted again from its own plan, and held to the measured success and
//! median latency of its successes. The rule: success within 10% of the
//! measured share (or 1.5 points, for shares near zero), and the p50 within
//! 15% where both have successes to speak of; 20% once the target is
//! overloaded (under 90% success), where the p50 of the few successes
//! depends on when each waited request was picked up.
//!
//! One documented exception, for the p50 only: `loop-blocking` (tokio,
//! handlers blocking its workers) under 10% success, where the simulation
//! follows tokio's queues and I/O driver turns but the measured successes
//! bunch just under the timeout in a way it does not reproduce (the run at
//! 200 req/s: 713 ms measured, 530 ms simulated). There the p50 bound is
//! 30% (docs/predict.md, "Where predictions are weakest").

use iolab_model::concurrency::{Host, ModelKind};
use iolab_model::runs::RunsFile;

fn saved() -> RunsFile {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results/showdown");
    iolab_model::runs::load(std::path::Path::new(path)).expect("the saved showdown")
}

#[test]
fn every_model_of_the_showdown_is_predicted_within_the_bounds() {
    let file = saved();
    let cores = file.environment.cores.max(1);
    let mut misses = Vec::new();
    for run in &file.runs {
        let Some(a) = &run.attack else { continue };
        let p = iolab_predict::predict_run(&run.spec, Host::cores(cores)).expect("a prediction");
        let measured = a.requests.ok as f64 / a.requests.planned.max(1) as f64;
        let overloaded = measured < 0.9;
        let bunched = measured < 0.1 && run.model == ModelKind::LoopBlocking;
        let (share, p50_share) = match (bunched, overloaded) {
            (true, _) => (0.10, 0.30),
            (false, true) => (0.10, 0.20),
            (false, false) => (0.10, 0.15),
        };
        let bound = (share * measured).max(0.015);
        let p50_ok = a.requests.ok < 5
            || p.ok < 5
            || (p.latency_ms.p50 - a.latency_ms.p50).abs() <= p50_share * a.latency_ms.p50;
        let line = format!(
            "{:32} success {:5.1}% vs {:5.1}%  p50 {:6.0} vs {:6.0} ms",
            run.name,
            100.0 * p.success_ratio,
            100.0 * measured,
            p.latency_ms.p50,
            a.latency_ms.p50
        );
        println!("{line}");
        if (p.success_ratio - measured).abs() > bound || !p50_ok {
            misses.push(line);
        }
    }
    assert!(
        misses.is_empty(),
        "predicted outside the bounds:\n{}",
        misses.join("\n")
    );
}
