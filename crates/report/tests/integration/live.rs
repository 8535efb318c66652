//! The live page's parts (`iolab_report::live`), from the fixtures: what
//! each part shows is recomputed here from the view it was drawn from.

use iolab_model::attack::{AttackResult, SeriesPoint};
use iolab_model::live::{LiveRun, LiveSource, LiveView, PendingRun};
use iolab_model::runs::RunsFile;
use iolab_model::telemetry::TelemetryPoint;
use iolab_report::live::{page, parts, PARTS};

fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn point(t_s: f64, sent: u64, ok: u64, errors: u64, p50: f64, p99: f64) -> SeriesPoint {
    SeriesPoint {
        t_s,
        sent,
        ok,
        errors,
        p50_ms: p50,
        p99_ms: p99,
    }
}

/// An attack half a second per interval, two intervals closed, with the
/// target's telemetry.
fn view() -> LiveView {
    let mut attack: AttackResult = fixture("attack-open.json");
    attack.series = vec![
        point(0.0, 50, 49, 1, 20.5, 31.0),
        point(0.5, 60, 57, 3, 21.0, 44.0),
    ];
    let telemetry = vec![
        TelemetryPoint {
            t_s: 0.5,
            threads: 9,
            rss_mb: 12.0,
            cpu_s: 1.0,
            in_flight: Some(4.0),
            ..TelemetryPoint::default()
        },
        TelemetryPoint {
            t_s: 1.0,
            threads: 11,
            rss_mb: 12.5,
            cpu_s: 1.25,
            in_flight: Some(6.0),
            ..TelemetryPoint::default()
        },
    ];
    LiveView {
        title: "iolab attack test".into(),
        address: "http://127.0.0.1:9/".into(),
        loopback: true,
        stage: "sending".into(),
        elapsed_s: 1.2,
        eta_s: Some(8.8),
        current: Some(LiveRun {
            name: "this attack".into(),
            attack,
            interval_s: 0.5,
            in_flight: Some(7),
            telemetry,
        }),
        ..LiveView::default()
    }
}

#[test]
fn every_part_is_on_the_page_and_nothing_comes_from_elsewhere() {
    let v = view();
    let html = page(&v);
    let got: Vec<&str> = parts(&v).iter().map(|p| p.0).collect();
    assert_eq!(got, PARTS);
    for id in PARTS {
        assert!(html.contains(&format!("<div id=\"{id}\">")), "{id}");
    }
    for outside in ["<link", "<img", " src=", "@import", "url("] {
        assert!(!html.contains(outside), "{outside}");
    }
    assert!(html.contains("new EventSource('events')"));
    assert!(html.contains("this machine only"));
}

#[test]
fn now_shows_the_last_interval_beside_the_run_so_far() {
    let v = view();
    let now = &parts(&v)[1].1;
    // The last interval: 60 sent, 57 ok, 3 errors in 0.5 s.
    for cell in [
        ">120<", ">114<", ">6<", ">95%<", ">21.0ms<", ">44.0ms<", ">7<",
    ] {
        assert!(now.contains(cell), "{cell} in {now}");
    }
    // The target: CPU over the last two samples, (1.25 - 1.0) / 0.5 s.
    assert!(now.contains(">0.5<") && now.contains(">11<"), "{now}");
    assert!(now.contains("<pre>Target"), "the attack summary");
}

#[test]
fn the_chart_is_the_reports_with_p50_and_p99() {
    let series = &parts(&view())[2].1;
    assert!(series.contains("<svg") && series.contains("p50 and p99 latency"));
    assert!(series.contains("p99 at 0.75 s: 44.0ms"), "{series}");
    assert!(series.contains("p50 at 0.25 s: 20.5ms"), "{series}");
}

#[test]
fn an_experiment_shows_its_tables_and_what_is_to_come() {
    let mut file: RunsFile = fixture("showdown.json");
    let rest = file.runs.split_off(2);
    let v = LiveView {
        experiment: Some(file),
        pending: rest
            .iter()
            .map(|r| PendingRun {
                name: r.name.clone(),
                prediction: r.prediction.clone(),
            })
            .collect(),
        ..view()
    };
    let runs = &parts(&v)[3].1;
    assert!(runs.contains("Runs, and why they came out so"), "{runs}");
    assert!(runs.contains("Still to run"));
    assert!(runs.contains(&rest[0].name) && runs.contains(&rest[rest.len() - 1].name));
}

#[test]
fn another_address_and_merged_shards_are_said() {
    let v = LiveView {
        loopback: false,
        sources: vec![
            LiveSource {
                url: "http://10.0.0.1:9100/".into(),
                status: "shard 1/2, sending".into(),
                ok: true,
            },
            LiveSource {
                url: "http://10.0.0.2:9100/".into(),
                status: "unreachable: refused".into(),
                ok: false,
            },
        ],
        ..view()
    };
    let status = &parts(&v)[0].1;
    assert!(status.contains("other machines may reach"), "{status}");
    assert!(status.contains("added across the shards"));
    assert!(status.contains("shard 1/2, sending") && status.contains("unreachable: refused"));
}
