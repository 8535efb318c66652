//! The cost of waiting end to end (presets/test/waiting.toml): two built-in
//! models each hold 20 and then 60 requests of sleep:1500 through a 1 s run.
//! The results carry every run's start-up time, its plateau holds as many
//! requests as there were clients, and the report's section fits a slope per
//! target and sets the published per-task figure beside it.

mod common;

use iolab_report::runs::waiting;

#[test]
fn the_cost_of_waiting_is_measured_and_reported() {
    let run = common::run_test_preset("waiting");
    let (out, file) = (&run.out, &run.file);
    assert_eq!(file.runs.len(), 4);
    for r in &file.runs {
        let ready = r.telemetry.ready_s.expect("ready_s recorded");
        assert!(
            ready > 0.0 && ready < 15.0,
            "{}: ready in {ready} s",
            r.name
        );
    }
    let costs = waiting::costs(file);
    let labels: Vec<&str> = costs.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        ["rust-loop-async(workers=1)", "rust-thread-per-request"]
    );
    for c in &costs {
        assert_eq!(c.levels.len(), 2, "{}", c.label);
        for l in &c.levels {
            // Every client's request waits through the plateau: held = clients.
            let want = f64::from(l.clients);
            assert!(
                (l.in_flight - want).abs() <= 1.0,
                "{} at {} clients held {}",
                c.label,
                l.clients,
                l.in_flight
            );
            assert_eq!(l.failed, 0, "{}", c.label);
        }
        assert!(c.idle_rss_mb.is_some_and(|m| m > 0.0), "{}", c.label);
        assert!(c.kib_per_request.is_some(), "{}", c.label);
    }
    // A thread per waiting request touches at least a page of its stack.
    let tpr = &costs[1];
    assert!(
        tpr.kib_per_request.unwrap() >= 4.0,
        "thread-per-request: {:?} KiB per waiting request",
        tpr.kib_per_request
    );
    assert!(tpr.levels[1].cpu_per_s.is_some());
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("### The cost of waiting"), "{report}");
    for c in &costs {
        assert!(
            report.contains(&waiting::render::sentence(c)),
            "{}",
            c.label
        );
    }
    // loop-async is set beside tokio's published task; the ratio is said only
    // when its slope rose above the noise (at 3-4 KiB a request, 40 more held
    // moves RSS less than the noise of two levels on a busy machine).
    let la = &costs[0];
    let anchor = la.anchor.as_ref().expect("tokio's published figure");
    assert!((anchor.kib - 0.21).abs() < 0.005, "{}", anchor.kib);
    let published = report.contains("Published: 0.21 KiB per task (tokio)");
    assert_eq!(
        published,
        la.kib_per_request.is_some_and(|k| k > 0.0),
        "{report}"
    );
}
