//! The explanations of every saved experiment (`docs/results/*/runs.json`),
//! re-rendered and held to the runs' own data: the success, goodput and
//! p99 a sentence states are the run's; an in-flight count is stated only
//! when the target answered its `/metrics` in at least 95% of the samples,
//! and then it is the peak of those samples; a generator caveat appears
//! exactly when the verdict on the run's own lag and latency flags it, with
//! its cause; a target that stopped answering its metrics gets a caveat.

use iolab_model::runs::{RunRecord, RunsFile};
use iolab_report::numbers::{count, percent};

fn saved() -> Vec<(String, RunsFile)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().join("runs.json").is_file() {
            let f = iolab_model::runs::load(&e.path()).unwrap();
            out.push((e.file_name().to_string_lossy().into_owned(), f));
        }
    }
    assert!(out.len() >= 5, "{} saved experiments", out.len());
    out
}

fn check(name: &str, file: &RunsFile, run: &RunRecord) {
    let s = iolab_report::explain_in(file, run);
    let caveats = iolab_report::caveats(run);
    let who = format!("{name}/{}", run.name);
    assert!(!s.contains('\n'), "{who}: one line: {s}");
    let Some(a) = &run.attack else { return };
    if run.outcome.is_completed() {
        let ok = format!(
            "{} ok of {}",
            percent(a.success_ratio()),
            count(a.requests.planned)
        );
        assert!(s.contains(&ok), "{who}: '{ok}' not in: {s}");
    }
    let t = &run.telemetry;
    let answered = t.metrics_answered().unwrap_or(0.0);
    if s.contains("in flight at the target") {
        assert!(
            answered >= 0.95,
            "{who}: states in flight from {answered:.2} of samples: {s}"
        );
        let peak = count(t.peak_in_flight().unwrap() as u64);
        assert!(
            s.contains(&format!("peak {peak} in flight at the target")),
            "{who}: {s}"
        );
    }
    let verdict = a.generator_verdict();
    let generator_caveat = caveats.iter().find(|c| c.starts_with("generator: "));
    assert_eq!(
        verdict.flagged,
        generator_caveat.is_some(),
        "{who}: {caveats:?}"
    );
    // Its words scale with its weight (issue 35): only a saturated
    // generator is said to have made the figures.
    if let Some(c) = generator_caveat {
        assert_eq!(
            verdict.saturated,
            c.contains("the figures may be the generator's"),
            "{who}: {c}"
        );
    }
    assert!(
        !s.contains("saturated"),
        "{who}: the sentence blames no generator: {s}"
    );
    if t.metrics_answered().is_some_and(|a| a < 0.95) {
        assert!(
            caveats.iter().any(|c| c.contains("/metrics")),
            "{who}: missing samples unsaid: {caveats:?}"
        );
    }
}

#[test]
fn saved_explanations_agree_with_their_own_data() {
    for (name, file) in saved() {
        for run in &file.runs {
            check(&name, &file, run);
        }
    }
}
