//! Issue 24: every sentence true under overload. A small showdown runs with a
//! CPU hog pinned to the generator's CPU (another process doing other work),
//! and then every run's sentence is held to the run's own data, and every
//! run whose generator is flagged names the cause: the neighbour.

mod common;

use std::process::{Command, Stdio};

use iolab_model::runs::RunsFile;

const PRESET: &str = r#"
name = "overload"
description = "a small showdown beside a CPU hog"
warmup = "200ms"
[load]
steps = "sleep:100"
rate = [100, 400]
duration = "1500ms"
timeout = "1s"
[[targets]]
model = ["sequential", "pool", "loop-async"]
threads = 20
"#;

/// A busy loop pinned to `cpu`, killed on drop.
struct Hog(std::process::Child);

impl Hog {
    fn on(cpu: usize) -> Hog {
        let child = Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("taskset (util-linux) starts a busy loop");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sentences_stay_true_beside_a_cpu_hog() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: one CPU, nothing to pin apart");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let preset = tmp.path().join("overload.toml");
    std::fs::write(&preset, PRESET.replace("threads = 20", "")).unwrap();
    let out = tmp.path().join("res");
    // The runner pins the target to CPU 0 and the generator to CPU 1.
    let hog = Hog::on(1);
    let run = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", preset.to_str().unwrap(), "--no-verify", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    drop(hog);
    common::assert_ok(&run);
    let file: RunsFile = iolab_model::runs::load(&out).unwrap();
    assert_eq!(file.runs.len(), 6);
    let mut flagged = 0;
    for r in &file.runs {
        let s = iolab_report::explain_in(&file, r);
        let caveats = iolab_report::caveats(r);
        let a = r.attack.as_ref().expect("measured");
        let ok = iolab_report::numbers::percent(a.success_ratio());
        assert!(s.contains(&format!("{ok} ok of")), "{}: {s}", r.name);
        if s.contains("in flight at the target") {
            assert!(
                r.telemetry.metrics_answered().unwrap() >= 0.95,
                "{}: {s}",
                r.name
            );
        }
        let v = a.generator_verdict();
        if v.flagged {
            flagged += 1;
            let cause = caveats
                .iter()
                .find(|c| c.starts_with("generator: "))
                .unwrap();
            assert!(
                cause.contains("other processes held the generator's CPU")
                    || cause.contains("of its CPU"),
                "{}: a flag names its cause: {cause}",
                r.name
            );
        }
        assert!(
            a.generator.wait_s.is_some(),
            "{}: the wait is measured",
            r.name
        );
    }
    eprintln!("{flagged} of 6 runs flagged beside the hog");
}
