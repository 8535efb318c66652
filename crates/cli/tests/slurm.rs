//! The sharded plan on a real engine: `deploy/slurm/shards.sbatch` submitted
//! as a 4-task job to the one-node Slurm of `scripts/slurm up`, against an
//! `iolab serve` on 127.0.0.1, then the job's merge step. The merged result
//! must be the plan exactly (counts), its percentiles those of all the
//! shards' requests together (within HDR precision), and its requests the
//! single-host schedule on the plan's clock.
//!
//! Runs only with `IOLAB_SLURM=1` (`scripts/test` starts Slurm and sets it);
//! otherwise it says why it is skipped and passes.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use iolab_model::attack::AttackResult;
use iolab_model::driver::{Arrival, Phase};
use iolab_model::schedule::Schedule;
use iolab_model::shard::Shard;

const SHARDS: u32 = 4;
/// The plan: Poisson arrivals (so the split is by request, not by time) at
/// 300 req/s for 3 s to a 20 ms sleep, 500 ms intervals.
const PLAN: [&str; 12] = [
    "--rate",
    "300",
    "--duration",
    "3s",
    "--arrival",
    "poisson",
    "--seed",
    "21",
    "--timeout",
    "2s",
    "--interval",
    "500ms",
];

/// Print straight to the terminal: cargo's capture only takes `print!`.
fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(path: &Path) -> AttackResult {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// `(intended_ms, latency_ms)` of every row of a shard's CSV.
fn rows(path: &Path) -> Vec<(f64, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn four_shards_on_slurm_merge_to_the_exact_plan() {
    if std::env::var("IOLAB_SLURM").as_deref() != Ok("1") {
        say("skipped four_shards_on_slurm_merge_to_the_exact_plan: IOLAB_SLURM is not 1 (scripts/test starts Slurm with scripts/slurm up and sets it)");
        return;
    }
    let target = common::serve(&["--model", "loop-async"]);
    let base = target.url.clone();
    let url = format!("{base}/work?steps=sleep:20");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let job = Command::new("sbatch")
        .args([
            "--wait",
            "--quiet",
            "-n",
            &SHARDS.to_string(),
            "-O",
            "-t",
            "5",
        ])
        .arg(format!("--output={}/slurm-%j.out", tmp.path().display()))
        .arg(repo().join("deploy/slurm/shards.sbatch"))
        .arg(&out)
        .arg(&url)
        .args(PLAN)
        .env("IOLAB_BIN", env!("CARGO_BIN_EXE_iolab"))
        .env("IOLAB_LEAD", "4")
        .env("IOLAB_SHARD_CSV", "1")
        .output()
        .expect("sbatch runs (is Slurm installed? scripts/slurm up)");
    let log = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains("slurm-"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect::<String>();
    assert!(
        job.status.success(),
        "sbatch exit {:?}: {}\njob output:\n{log}",
        job.status.code(),
        String::from_utf8_lossy(&job.stderr)
    );
    let merged = load(&out.join("merged.json"));
    // The single-host run of the same plan, on the same target.
    let single = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("attack")
        .arg(&url)
        .args(PLAN)
        .args(["--json", "--quiet"])
        .output()
        .unwrap();
    let single: AttackResult = serde_json::from_value(common::json_ok(&single)).unwrap();
    drop(target);

    // Counts: exactly the plan, each shard exactly its residue.
    let phases = [Phase::hold(300.0, Duration::from_secs(3))];
    let schedule: Vec<u64> = Schedule::new(&phases, Arrival::Poisson { seed: 21 }).collect();
    let planned = schedule.len() as u64;
    let q = &merged.requests;
    assert_eq!((q.planned, single.requests.planned), (planned, planned));
    assert_eq!(
        (q.sent, q.ok),
        (planned, planned),
        "{q:?} {:?}\n{log}",
        merged.errors
    );
    let rec = merged.merged.as_ref().expect("a merge record");
    assert_eq!((rec.shards, rec.plan_requests), (SHARDS, Some(planned)));
    for p in &rec.parts {
        let s = Shard {
            index: p.index,
            count: SHARDS,
        };
        assert_eq!(p.planned, s.share(planned), "shard {s}");
    }
    assert!(
        rec.start_at_unix_ms.is_some() && !rec.series_shifted,
        "{rec:?}"
    );
    // The rows: on the plan's clock, together the single-host schedule.
    let mut all: Vec<(f64, f64)> = (1..=SHARDS)
        .flat_map(|i| rows(&out.join(format!("shard-{i}.csv"))))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(all.len(), schedule.len());
    for (row, due) in all.iter().zip(&schedule) {
        assert!(
            (row.0 - *due as f64 / 1e6).abs() < 0.0011,
            "{} vs {due} ns",
            row.0
        );
    }
    // Percentiles: those of all requests together, within HDR precision
    // (3 significant digits; the CSV keeps microseconds).
    let mut lat: Vec<f64> = all.iter().map(|r| r.1).collect();
    lat.sort_by(f64::total_cmp);
    let at = |q: f64| lat[((q * lat.len() as f64).ceil() as usize).max(1) - 1];
    let l = &merged.latency_ms;
    for (name, got, want) in [
        ("p50", l.p50, at(0.5)),
        ("p99", l.p99, at(0.99)),
        ("max", l.max, *lat.last().unwrap()),
    ] {
        assert!(
            (got - want).abs() <= want * 0.001 + 0.002,
            "{name}: merged {got} ms, all requests {want} ms"
        );
    }
    say(&format!(
        "slurm: {planned} requests in {SHARDS} shards, start skew {:.2} ms; merged p50/p99/max {:.2}/{:.2}/{:.2} ms, one host {:.2}/{:.2}/{:.2} ms",
        rec.start_skew_ms.unwrap_or(f64::NAN),
        l.p50,
        l.p99,
        l.max,
        single.latency_ms.p50,
        single.latency_ms.p99,
        single.latency_ms.max
    ));
    // A separate run of the plan on one host sees the same 20 ms sleep; only
    // noise separates the two medians (generous: the machine is shared).
    assert!(
        (l.p50 - single.latency_ms.p50).abs() < 10.0,
        "merged p50 {} vs one host {}",
        l.p50,
        single.latency_ms.p50
    );
}
