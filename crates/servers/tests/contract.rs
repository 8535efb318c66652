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

/// Issue 32: `iolab verify --http2` checks a target's HTTP/2 answers. The
/// loop models serve h2c beside HTTP/1.1 and pass every check over it; a
/// model that speaks HTTP/1.1 only fails each check naming HTTP/2.
#[test]
fn the_loop_models_pass_verify_over_h2c_and_a_pool_fails_naming_http2() {
    for model in [ModelKind::LoopAsync, ModelKind::LoopOffload] {
        let server = start(ServeConfig::new(model), "127.0.0.1:0".parse().unwrap()).unwrap();
        let opts = VerifyOptions {
            model: Some(model.to_string()),
            http2: true,
            ..Default::default()
        };
        let report = verify(&server.url(), &opts).unwrap();
        let failed: Vec<String> = report
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        assert!(report.passed(), "{model} over h2c:\n{}", failed.join("\n"));
        assert!(report.checks.len() >= 17, "{model}: every vector ran");
        assert_eq!(report.protocol.as_deref(), Some("h2c"));
        server.stop().unwrap();
    }
    let server = start(
        ServeConfig::new(ModelKind::Pool),
        "127.0.0.1:0".parse().unwrap(),
    )
    .unwrap();
    let opts = VerifyOptions {
        http2: true,
        timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let report = verify(&server.url(), &opts).unwrap();
    assert!(!report.passed());
    let first = &report.checks[0];
    assert!(first.detail.contains("HTTP/2"), "{first:?}");
    server.stop().unwrap();
}
