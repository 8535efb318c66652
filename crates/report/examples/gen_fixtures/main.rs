//! Writes the report's test fixtures (`crates/report/tests/fixtures/*.json`):
//! realistic `runs.json` files made by a small deterministic queue simulation,
//! so the renderers are tested on the shapes real runs have (queues that grow,
//! timeouts that start, goodput that collapses) without running anything.
//!
//! `cargo run -p iolab-report --example gen_fixtures -- crates/report/tests/fixtures`
//!
//! `sim` simulates, `predicted` predicts, `http` and `batch` make the
//! experiments; what every fixture file shares lives here.

mod batch;
mod http;
mod predicted;
mod sim;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use iolab_model::environment::Environment;
use iolab_model::experiment::ExperimentPlan;
use iolab_model::runs::{RunRecord, RunsFile, RUNS_SCHEMA};

/// A tiny deterministic generator (no dependency, same bytes every time).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `x` rounded to `d` decimals, so fixtures read like real documents.
pub fn r(x: f64, d: i32) -> f64 {
    let m = 10f64.powi(d);
    (x * m).round() / m
}

/// The machine every fixture claims it ran on.
fn env(command: &str) -> Environment {
    Environment {
        cores: 2,
        cpu_model: "AMD EPYC 7B13".into(),
        kernel: "6.1.0-27-cloud-amd64".into(),
        nofile: (20_000, 20_000),
        port_range: (32_768, 60_999),
        tcp_tw_reuse: Some(2),
        threads_max: Some(63_457),
        pid_max: Some(4_194_304),
        somaxconn: Some(4_096),
        memory_mb: 7_940,
        versions: BTreeMap::from([
            ("iolab".to_string(), "0.1.0".to_string()),
            ("rustc".to_string(), "1.95.0".to_string()),
        ]),
        git_commit: Some("3f2c9e1".into()),
        pinning: BTreeMap::from([
            ("generator".to_string(), vec![1]),
            ("target".to_string(), vec![0]),
        ]),
        command: command.into(),
        services: vec![],
    }
}

/// What an experiment's fixture says about itself besides its runs.
struct About {
    name: &'static str,
    description: &'static str,
    scale: f64,
    warmup: Duration,
    published: Option<serde_json::Value>,
    /// Start and end, UTC.
    when: (&'static str, &'static str),
    command: &'static str,
}

/// A complete `runs.json` of `runs`, run once each from `presets/<name>.toml`.
fn runs_file(about: About, runs: Vec<RunRecord>) -> RunsFile {
    RunsFile {
        schema: RUNS_SCHEMA.into(),
        plan: ExperimentPlan {
            name: about.name.into(),
            description: about.description.into(),
            source: Some(format!("presets/{}.toml", about.name)),
            scale: about.scale,
            reps: 1,
            warmup: about.warmup,
            warmup_requests: None,
            runs: runs.iter().map(|r| r.spec.clone()).collect(),
            published: about.published,
            pin: true,
        },
        runs,
        complete: true,
        started_utc: about.when.0.into(),
        finished_utc: Some(about.when.1.into()),
        environment: env(about.command),
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "crates/report/tests/fixtures".into());
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    for (file, runs) in [
        ("showdown.json", http::showdown()),
        ("e2-scaled-failed.json", http::e2_scaled()),
        ("e1-workers.json", batch::e1_workers()),
        ("e3-calls.json", batch::e3_calls()),
    ] {
        let mut text = serde_json::to_string_pretty(&runs).unwrap();
        text.push('\n');
        std::fs::write(dir.join(file), text).unwrap();
        println!("wrote {}", dir.join(file).display());
    }
}
