//! A foreign service's own Prometheus series (scraped beside `/proc`) are
//! drawn: one chart per run that has any, one line per series, every sample
//! that carried a value and none that did not.

use std::path::PathBuf;

use iolab_report::charts::charts;
use iolab_report::{render, Format};

#[test]
fn scraped_series_are_drawn_and_missing_samples_are_gaps() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/showdown.json");
    let mut file = iolab_model::runs::load(&path).unwrap();
    assert!(charts(&file).iter().all(|c| !c.id.starts_with("service-")));

    let run = &mut file.runs[0];
    let name = run.name.clone();
    let samples = run.telemetry.series.len();
    assert!(samples > 10, "fixture has telemetry");
    let mut with_busy = 0;
    for (i, p) in run.telemetry.series.iter_mut().enumerate() {
        if i % 3 == 0 {
            continue; // the service did not answer this sample
        }
        p.service
            .insert("tomcat_threads_busy_threads".into(), (i % 7) as f64);
        with_busy += 1;
        if i % 2 == 0 {
            p.service.insert("hikaricp_connections_active".into(), 1.0);
        }
    }
    let with_hikari = (0..samples).filter(|i| i % 3 != 0 && i % 2 == 0).count();

    let all = charts(&file);
    let service: Vec<_> = all
        .iter()
        .filter(|c| c.id.starts_with("service-"))
        .collect();
    assert_eq!(service.len(), 1, "only the run that scraped its service");
    let chart = service[0];
    assert_eq!(chart.id, format!("service-{}", name.replace('=', "-")));
    assert_eq!(chart.points, with_busy + with_hikari);
    assert!(chart.svg.contains("tomcat_threads_busy_threads"));
    assert!(chart.svg.contains("hikaricp_connections_active"));

    let html = String::from_utf8(render(&file, Format::Html).unwrap()).unwrap();
    assert!(
        html.contains("The service&#39;s own series") || html.contains("The service's own series")
    );
}
