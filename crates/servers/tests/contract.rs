//! The shared contract vectors (`vectors/contract.json`), plus verify's own
//! checks, against every built-in model served in-process.

use std::time::Duration;

use iolab_model::ModelKind;
use iolab_servers::{start, ServeConfig};
use iolab_verify::{verify, VerifyOptions};

#[test]
fn every_model_passes_verify() {
    for model in ModelKind::built_in() {
        let mut config = ServeConfig::new(model);
        config.grace = Duration::from_secs(1);
        let server = start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
        let opts = VerifyOptions {
            model: Some(model.to_string()),
            ..Default::default()
        };
        let report = verify(&server.url(), &opts).unwrap();
        let failed: Vec<String> = report
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        assert!(
            report.passed(),
            "{model} fails the contract:\n{}",
            failed.join("\n")
        );
        assert!(report.checks.len() >= 17, "{model}: every vector ran");
        server.stop().unwrap();
    }
}

#[test]
fn virtual_has_no_rust_target() {
    let err = start(
        ServeConfig::new(ModelKind::Virtual),
        "127.0.0.1:0".parse().unwrap(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("--runtime"));
}
