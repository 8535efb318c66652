//! JVM targets (`targets/jvm`: Spring MVC on Tomcat, WebFlux on Netty): where
//! the repository holding them is, building the jar once, and the command
//! line that starts one model through `scripts/jvm-target`.
//!
//! The script `exec`s java, so its PID is the JVM's; its first stdout line is
//! the URL (with `--port 0`, the real port) and its logs go to stderr, exactly
//! like `iolab serve`. `iolab serve --runtime jvm` and preset targets with
//! `runtime = "jvm"` both start targets through [`jvm_target_command`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use iolab_model::experiment::{ExperimentPlan, RunSpec, Work};
use iolab_model::{ModelKind, ModelParams, Runtime};

use crate::services::Addresses;

/// The models the JVM targets serve.
pub const MODELS: [ModelKind; 5] = [
    ModelKind::Pool,
    ModelKind::Virtual,
    ModelKind::LoopBlocking,
    ModelKind::LoopOffload,
    ModelKind::LoopAsync,
];

/// Longest wait for a JVM target to print its URL and answer `/health`:
/// Spring starts in 3-4 s on a quiet machine but took 30-40 s on 2 cores
/// shared with compilers.
pub const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The coordinate (and preset field) that puts every blocking sleep of a
/// `pool`/`virtual` JVM target inside a `synchronized` block: Loom's pinning case.
pub const SYNCHRONIZED: &str = "synchronized";

/// The file that marks the repository root.
const MARKER: &str = "targets/jvm/pom.xml";
/// The launcher, relative to the root.
const SCRIPT: &str = "scripts/jvm-target";

/// Options of one JVM target beyond the model and its knobs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JvmOptions {
    /// Port on 127.0.0.1 (0: a free one, shown on the URL line).
    pub port: u16,
    /// Every blocking sleep inside a `synchronized` block (`pool`, `virtual`).
    pub synchronized: bool,
    /// The backends for `pg`, `mc` and `http` steps (the pool sizes are knobs).
    pub backends: Addresses,
    /// Longest wait for a pooled PostgreSQL connection (`None`: HikariCP's 30 s).
    pub pg_wait: Option<Duration>,
    /// Requests the target sends itself before it prints its URL (JIT warm-up).
    pub warmup: u32,
}

/// JIT warm-up of every JVM target an experiment starts: a fresh JVM serves its first
/// few thousand requests interpreted (on the shared 2-core machine, over a second each
/// for the first ~3,000 at 500-1,000 req/s), which would measure the JIT, not the model.
/// 5,000 were not enough on one CPU: a fresh `virtual` target still timed out 40% of its
/// first seconds at 1,000 req/s (C2 compiles a method after thousands of calls).
pub const RUN_WARMUP: u32 = 20_000;

/// The repository holding `targets/jvm`: `IOLAB_ROOT` if set, else the first
/// folder holding `targets/jvm/pom.xml` above the current directory, else
/// above this executable (e.g. `target/release/iolab` inside a checkout).
pub fn find_root() -> Result<PathBuf, String> {
    if let Some(root) = std::env::var_os("IOLAB_ROOT") {
        let root = PathBuf::from(root);
        if root.join(MARKER).is_file() {
            return Ok(root);
        }
        return Err(format!(
            "IOLAB_ROOT={} holds no {MARKER}: point it at the iolab repository",
            root.display()
        ));
    }
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe()
            .ok()
            .and_then(|p| p.canonicalize().ok()),
    ];
    starts
        .iter()
        .flatten()
        .flat_map(|start| start.ancestors())
        .find(|dir| dir.join(MARKER).is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            format!(
                "cannot find the JVM targets ({MARKER}): run from the iolab repository or set IOLAB_ROOT to it"
            )
        })
}

/// Is `model` served by the JVM targets, with knobs that apply to it?
pub fn check(model: ModelKind, params: &ModelParams, synchronized: bool) -> Result<(), String> {
    if !MODELS.contains(&model) {
        return Err(format!(
            "model '{model}' has no JVM target (runtime jvm serves: pool, virtual, loop-blocking, loop-offload, loop-async)"
        ));
    }
    let loops = [
        ModelKind::LoopBlocking,
        ModelKind::LoopOffload,
        ModelKind::LoopAsync,
    ];
    let tomcat = [ModelKind::Pool, ModelKind::Virtual];
    let knobs: [(&str, bool, &[ModelKind]); 7] = [
        ("threads", params.threads.is_some(), &[ModelKind::Pool]),
        ("backlog", params.backlog.is_some(), &tomcat),
        ("max_connections", params.max_connections.is_some(), &tomcat),
        ("workers", params.workers.is_some(), &loops),
        (
            "offload",
            params.offload.is_some(),
            &[ModelKind::LoopOffload],
        ),
        (SYNCHRONIZED, synchronized, &tomcat),
        ("max_threads", params.max_threads.is_some(), &[]),
    ];
    for (knob, set, applies) in knobs {
        if set && !applies.contains(&model) {
            let fix = if applies.is_empty() {
                "the JVM targets have no such knob".to_string()
            } else {
                let names: Vec<&str> = applies.iter().map(|m| m.as_str()).collect();
                format!("it applies to {} on the JVM", names.join(", "))
            };
            return Err(format!(
                "{knob} does not apply to JVM model '{model}' ({fix}): remove it"
            ));
        }
    }
    Ok(())
}

/// The argv that starts the JVM target for `model` (first stdout line: the
/// URL). Checks the model and knobs first (see [`check`]).
pub fn jvm_target_command(
    root: &Path,
    model: ModelKind,
    params: &ModelParams,
    opts: &JvmOptions,
) -> Result<Vec<String>, String> {
    check(model, params, opts.synchronized)?;
    let mut argv = vec![
        root.join(SCRIPT).display().to_string(),
        "--model".into(),
        model.as_str().into(),
        "--port".into(),
        opts.port.to_string(),
    ];
    // `check` refused the knobs the JVM targets lack.
    argv.extend(params.flags());
    if opts.synchronized {
        argv.push("--synchronized".into());
    }
    argv.extend(opts.backends.serve_flags());
    if let Some(wait) = opts.pg_wait {
        argv.push("--pg-wait".into());
        argv.push(wait.as_millis().max(1).to_string());
    }
    if opts.warmup > 0 {
        argv.push("--warmup".into());
        argv.push(opts.warmup.to_string());
    }
    Ok(argv)
}

/// Does this run put its sleeps in `synchronized` blocks?
pub fn synchronized(spec: &RunSpec) -> bool {
    spec.coordinates
        .get(SYNCHRONIZED)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// The argv of one run of a preset with `runtime = "jvm"` and no `command`,
/// pointed at the experiment's `backends` like the built-in targets.
pub fn run_command(spec: &RunSpec, backends: &Addresses) -> Result<Vec<String>, String> {
    let root = find_root()?;
    let opts = JvmOptions {
        synchronized: synchronized(spec),
        warmup: RUN_WARMUP,
        backends: backends.clone(),
        ..JvmOptions::default()
    };
    jvm_target_command(&root, spec.model, &spec.params, &opts)
}

/// Runs that start a JVM target through [`run_command`].
fn needs_jvm(spec: &RunSpec) -> bool {
    spec.runtime == Runtime::Jvm && matches!(&spec.work, Work::Http(w) if w.command.is_none())
}

/// Build the jar (if missing or stale) so no run pays for it: `scripts/jvm-target
/// --build`, Maven's own output on stderr. Checks the repository and every JVM
/// run's model first. Does nothing for a plan without JVM targets.
pub fn prepare(plan: &ExperimentPlan) -> Result<(), String> {
    let jvm: Vec<&RunSpec> = plan.runs.iter().filter(|r| needs_jvm(r)).collect();
    if jvm.is_empty() {
        return Ok(());
    }
    for spec in &jvm {
        check(spec.model, &spec.params, synchronized(spec))
            .map_err(|e| format!("run '{}': {e}", spec.name))?;
    }
    build(&find_root()?)
}

/// `scripts/jvm-target --build`: builds the jar once (under a lock), a no-op
/// when it is newer than every source.
pub fn build(root: &Path) -> Result<(), String> {
    let script = root.join(SCRIPT);
    let status = Command::new(&script)
        .arg("--build")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "building the JVM targets failed ({} --build: {}); see the Maven output above",
            script.display(),
            crate::process::describe(status)
        ))
    }
}

/// Run a JVM target in the foreground (`iolab serve --runtime jvm`): it shares
/// our stdout (first line: its URL) and stderr; SIGINT/SIGTERM sent to us are
/// forwarded as SIGTERM, and SIGKILL follows after `grace`. The child dies with
/// us (`PR_SET_PDEATHSIG`). Returns our exit code: 0 after a forwarded signal,
/// else the target's own (2 for its usage errors).
pub fn serve_foreground(argv: &[String], grace: Duration) -> Result<u8, String> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| format!("cannot watch SIGINT/SIGTERM: {e}"))?;
    }
    let (program, args) = argv.split_first().ok_or("empty JVM target command")?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    // SAFETY: only async-signal-safe calls (prctl, getppid, raise) between fork and exec.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            crate::process::die_with_parent(parent);
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start '{program}': {e}"))?;
    let pid = child.id() as libc::pid_t;
    let mut kill_at: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(match (kill_at, status.code(), status.signal()) {
                (Some(_), _, _) => 0,
                (None, Some(c), _) => u8::try_from(c).unwrap_or(1),
                (None, None, Some(s)) => u8::try_from(128 + s).unwrap_or(1),
                _ => 1,
            });
        }
        match kill_at {
            None if stop.load(Ordering::Relaxed) => {
                // SAFETY: signalling our own child by its pid.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                kill_at = Some(Instant::now() + grace);
            }
            Some(t) if Instant::now() >= t => {
                // SAFETY: as above; it ignored SIGTERM for `grace`.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(f: impl FnOnce(&mut ModelParams)) -> ModelParams {
        let mut p = ModelParams::default();
        f(&mut p);
        p
    }

    #[test]
    fn the_command_forwards_model_port_and_knobs() {
        let p = params(|p| {
            p.threads = Some(4);
            p.backlog = Some(10);
            p.pg_pool = Some(3);
        });
        let opts = JvmOptions {
            port: 0,
            synchronized: true,
            backends: Addresses {
                pg: Some("postgres://u@127.0.0.1:7/d".into()),
                mc: Some("127.0.0.1:8".into()),
                http: Some("http://127.0.0.1:9".into()),
            },
            pg_wait: Some(Duration::from_millis(2500)),
            warmup: 100,
        };
        let argv = jvm_target_command(Path::new("/r"), ModelKind::Pool, &p, &opts).unwrap();
        assert_eq!(
            argv,
            [
                "/r/scripts/jvm-target",
                "--model",
                "pool",
                "--port",
                "0",
                "--threads",
                "4",
                "--backlog",
                "10",
                "--pg-pool",
                "3",
                "--synchronized",
                "--pg",
                "postgres://u@127.0.0.1:7/d",
                "--mc",
                "127.0.0.1:8",
                "--http-backend",
                "http://127.0.0.1:9",
                "--pg-wait",
                "2500",
                "--warmup",
                "100"
            ]
        );
    }

    #[test]
    fn models_and_knobs_the_jvm_lacks_are_named() {
        let none = ModelParams::default();
        let e = check(ModelKind::ThreadPerRequest, &none, false).unwrap_err();
        assert!(e.contains("no JVM target"), "{e}");
        let e = check(
            ModelKind::LoopAsync,
            &params(|p| p.threads = Some(2)),
            false,
        )
        .unwrap_err();
        assert!(
            e.starts_with("threads does not apply") && e.contains("pool"),
            "{e}"
        );
        let e = check(ModelKind::LoopAsync, &none, true).unwrap_err();
        assert!(e.contains("synchronized") && e.contains("virtual"), "{e}");
        let e = check(ModelKind::Pool, &params(|p| p.max_threads = Some(2)), false).unwrap_err();
        assert!(e.contains("no such knob"), "{e}");
        for m in MODELS {
            check(m, &none, false).unwrap();
        }
        check(ModelKind::Virtual, &none, true).unwrap();
        check(
            ModelKind::LoopOffload,
            &params(|p| {
                p.workers = Some(2);
                p.offload = Some(8);
            }),
            false,
        )
        .unwrap();
    }

    #[test]
    fn the_jvm_presets_expand_to_jvm_runs() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets");
        for (name, runs, jvm) in [
            ("loom", 27, 17),
            ("e2-spring-jvm", 12, 12),
            ("e5-fanout-jvm", 9, 9),
            ("jvm-backends-pg", 12, 9),
            ("jvm-backends-mc", 6, 6),
        ] {
            let plan = crate::preset::load_plan(&format!("{dir}/{name}.toml"), None)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(plan.runs.len(), runs, "{name}");
            let on_jvm: Vec<&RunSpec> = plan.runs.iter().filter(|r| needs_jvm(r)).collect();
            assert_eq!(on_jvm.len(), jvm, "{name}");
            let root = Path::new("/r");
            for r in on_jvm {
                let opts = JvmOptions {
                    synchronized: synchronized(r),
                    ..JvmOptions::default()
                };
                let argv = jvm_target_command(root, r.model, &r.params, &opts)
                    .unwrap_or_else(|e| panic!("{name} {}: {e}", r.name));
                assert_eq!(argv[2], r.model.as_str());
                assert_eq!(
                    argv.contains(&"--synchronized".to_string()),
                    r.name.contains("synchronized"),
                    "{}",
                    r.name
                );
            }
        }
        // Embedded, so `iolab run loom` works from anywhere.
        assert!(crate::preset::EMBEDDED.iter().any(|(n, _)| *n == "loom"));
    }

    #[test]
    fn the_repository_is_found_from_the_crate() {
        // `cargo test` runs in crates/lab, inside the checkout.
        if std::env::var_os("IOLAB_ROOT").is_none() {
            let root = find_root().unwrap();
            assert!(root.join(SCRIPT).is_file(), "{}", root.display());
        }
    }
}
