//! `iolab run` starts the real backends a preset's steps need when the
//! environment gives none (IOLAB_* removed), runs against them, records them
//! in environment.json, and leaves no memcached or postgres process behind:
//! at the end, on Ctrl-C, and when iolab itself is killed. A missing
//! memcached is a one-line fix and exit 2 with nothing started.
//!
//! Runs the `iolab` binary of the same build (`cargo test --workspace`
//! builds it; or `IOLAB_BIN`), as a user would, so the environment of the
//! run is exactly what the test gives it.

mod common;

use common::iolab_bin;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use iolab_model::environment::Environment;
use iolab_model::runs::{Outcome, RunsFile};
use iolab_model::steps::BackendKind;

/// One experiment at a time: they share two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const TINY: &str = r#"
name = "services-tiny"
description = "pg, http and mc steps on two models, with backends the runner starts"
warmup = "200ms"

[load]
steps = "seq(pg:20,http:20,mc:svc-tiny)"
driver = "open"
rate = 10
duration = "1500ms"
timeout = "3s"

[[targets]]
model = "pool"
threads = 4

[[targets]]
model = "loop-async"
workers = 1
"#;

/// Long enough to be interrupted while measuring.
const LONG: &str = r#"
name = "services-long"
description = "memcached and PostgreSQL for a while"
warmup = "100ms"

[load]
steps = "seq(pg:5,mc:svc-long)"
driver = "open"
rate = 5
duration = "30s"
timeout = "3s"

[[targets]]
model = "pool"
threads = 2
"#;

/// `iolab run FILE --out DIR` with no IOLAB_* backends in its environment.
fn iolab_run(preset: &Path, out: &Path) -> Command {
    let mut c = Command::new(iolab_bin());
    c.arg("run")
        .arg(preset)
        .arg("--out")
        .arg(out)
        .env_remove("IOLAB_PG")
        .env_remove("IOLAB_MC")
        .env_remove("IOLAB_HTTP_BACKEND")
        .stdin(Stdio::null());
    c
}

fn write_preset(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("preset.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Process ids the run recorded for the services it started.
fn service_pids(env: &Environment) -> Vec<u32> {
    env.services
        .iter()
        .filter(|s| s.origin == "started")
        .flat_map(|s| s.notes.iter())
        .filter_map(|n| n.strip_prefix("pid ")?.parse().ok())
        .collect()
}

/// A live process with this pid whose command is memcached or postgres.
fn service_alive(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
        let c = String::from_utf8_lossy(&c);
        c.contains("memcached") || c.contains("postgres")
    }) && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
    })
}

/// Every process whose command line mentions `needle` (e.g. a data folder).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

fn gone_within(pids: &[u32], within: Duration) -> Vec<u32> {
    let until = Instant::now() + within;
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|p| service_alive(*p)).collect();
        if alive.is_empty() || Instant::now() > until {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn load_env(out: &Path) -> Option<Environment> {
    let text = std::fs::read(out.join("environment.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

#[test]
fn a_preset_with_pg_mc_and_http_runs_on_services_the_runner_starts() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let preset = write_preset(tmp.path(), TINY);
    let out = tmp.path().join("res");
    let run = iolab_run(&preset, &out).arg("--no-pin").output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "iolab run failed: {stderr}");
    for line in [
        "services: started the delay service",
        "services: started memcached",
        "services: started PostgreSQL",
    ] {
        assert!(
            stderr.contains(line),
            "no '{line}' in progress output:\n{stderr}"
        );
    }

    let file: RunsFile = iolab_model::runs::load(&out).unwrap();
    assert!(file.complete);
    assert_eq!(file.runs.len(), 2);
    for r in &file.runs {
        assert_eq!(r.outcome, Outcome::Completed, "{}: {:?}", r.name, r.outcome);
        let a = r.attack.as_ref().unwrap();
        let q = &a.requests;
        assert!(q.planned >= 10, "{}: {q:?}", r.name);
        // Every request did real work on three real backends (generous:
        // the machine is shared, a few may time out).
        assert!(
            q.ok * 10 >= q.planned * 8,
            "{}: {q:?} {:?}",
            r.name,
            a.errors
        );
        // The verify gate checked the target really calls each backend.
        let v = r.verify.as_ref().unwrap();
        for kind in ["pg", "mc", "http"] {
            let c = v
                .checks
                .iter()
                .find(|c| c.name == format!("backend-{kind}-counted"))
                .unwrap_or_else(|| panic!("{}: no backend-{kind}-counted check", r.name));
            assert!(c.passed, "{}: {c:?}", r.name);
        }
        // The backends counted at least the work the target claims.
        let b = r.backend_counts.as_ref().expect("backend counts recorded");
        assert_eq!(b.error, None);
        for (kind, n) in [
            ("pg", b.get(BackendKind::Pg)),
            ("mc", b.get(BackendKind::Mc)),
            ("http", b.get(BackendKind::Http)),
        ] {
            let n = n.unwrap_or_else(|| panic!("{}: no {kind} count", r.name));
            assert!(n >= q.ok, "{}: {kind} counted {n} < ok {}", r.name, q.ok);
        }
        assert!(
            r.backend_shortfall().is_empty(),
            "{:?}",
            r.backend_shortfall()
        );
    }

    // environment.json says what was started, where, which version.
    let env = load_env(&out).unwrap();
    assert_eq!(env, file.environment);
    let kinds: Vec<&str> = env.services.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["http", "mc", "pg"]);
    for s in &env.services {
        assert_eq!(s.origin, "started", "{s:?}");
        assert!(s.address.contains("127.0.0.1:"), "{s:?}");
        assert!(s.version.is_some(), "{s:?}");
    }
    let mc = &env.services[1];
    assert!(
        mc.notes
            .iter()
            .any(|n| n.contains("stored key 'svc-tiny' (1024000 bytes)")),
        "{mc:?}"
    );

    // Nothing it started is left: not the processes, not PostgreSQL's folder.
    let pids = service_pids(&env);
    assert_eq!(pids.len(), 2, "{:?}", env.services);
    assert_eq!(
        gone_within(&pids, Duration::from_secs(5)),
        Vec::<u32>::new()
    );
    let data = env.services[2]
        .notes
        .iter()
        .find_map(|n| n.strip_prefix("data "))
        .unwrap();
    assert!(!Path::new(data).exists(), "{data} was not removed");
    assert_eq!(processes_mentioning(data), Vec::<u32>::new());
}

/// Start LONG, wait until its services are recorded, then `stop` the run.
fn interrupted_run(stop: libc::c_int) -> (Environment, std::process::Output) {
    let tmp = tempfile::tempdir().unwrap();
    let preset = write_preset(tmp.path(), LONG);
    let out = tmp.path().join("res");
    let child = iolab_run(&preset, &out)
        .args(["--no-pin", "--no-verify"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let env = loop {
        if let Some(e) = load_env(&out).filter(|e| service_pids(e).len() == 2) {
            break e;
        }
        assert!(Instant::now() < until, "no services recorded within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    // Let the measured run begin.
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, stop);
    }
    let output = child.wait_with_output().unwrap();
    (env, output)
}

#[test]
fn ctrl_c_stops_the_services_it_started() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (env, output) = interrupted_run(libc::SIGINT);
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pids = service_pids(&env);
    assert_eq!(
        gone_within(&pids, Duration::from_secs(10)),
        Vec::<u32>::new()
    );
    let data = env
        .services
        .iter()
        .flat_map(|s| s.notes.iter())
        .find_map(|n| n.strip_prefix("data "))
        .unwrap();
    assert!(!Path::new(data).exists(), "{data} was not removed");
}

#[test]
fn a_killed_runner_takes_its_services_with_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (env, _) = interrupted_run(libc::SIGKILL);
    // PR_SET_PDEATHSIG: the kernel kills them; nobody could clean up.
    let pids = service_pids(&env);
    assert_eq!(
        gone_within(&pids, Duration::from_secs(10)),
        Vec::<u32>::new()
    );
    if let Some(data) = env
        .services
        .iter()
        .flat_map(|s| s.notes.iter())
        .find_map(|n| n.strip_prefix("data "))
    {
        let _ = std::fs::remove_dir_all(data);
    }
}

#[test]
fn no_memcached_installed_is_a_one_line_fix_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let preset = write_preset(tmp.path(), TINY);
    let out = tmp.path().join("res");
    let empty = tmp.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let run = iolab_run(&preset, &out)
        .env("PATH", &empty)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("scripts/install-deps memcached"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // Nothing was started: no delay service line, no runs.
    assert!(!stderr.contains("services: started"), "{stderr}");
    assert!(!out.join("runs.json").exists());
}
