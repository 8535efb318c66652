//! The binary outside the repository: a copy of `iolab` in a folder of its own, run
//! from there, with no checkout above it. The presets built into it work, the runtime
//! folders they need are unpacked from the binary into a cache (said on stderr), and
//! nothing is started (dry runs, listings, predictions).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A folder with a copy of the binary and an empty cache, far from any checkout.
struct Away {
    dir: tempfile::TempDir,
}

impl Away {
    fn new() -> Away {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_iolab"), dir.path().join("iolab")).unwrap();
        Away { dir }
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Run the copied binary. Its copy was written while another test of
    /// this binary may fork: a child forked in that moment holds the
    /// written file open until it execs, and the kernel refuses to run a
    /// file open for writing (ETXTBSY, "Text file busy": CI failed on it
    /// once). So a refusal of that kind is retried, a bounded few times.
    fn iolab(&self, args: &[&str]) -> Output {
        let mut tries = 0;
        loop {
            let out = Command::new(self.dir.path().join("iolab"))
                .args(args)
                .current_dir(self.dir.path())
                .env("IOLAB_CACHE", self.cache())
                .env_remove("IOLAB_ROOT")
                .output();
            match out {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other.unwrap(),
            }
        }
    }
}

fn presets_in_the_checkout() -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets");
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .count()
}

#[test]
fn presets_from_another_folder_lists_every_preset_without_errors() {
    let away = Away::new();
    let out = away.iolab(&["presets"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty() && !l.starts_with("run one") && !l.starts_with("TIME "))
        .collect();
    assert_eq!(rows.len(), presets_in_the_checkout(), "{stdout}");
    assert!(!stdout.contains("error"), "{stdout}");
    assert!(
        stderr.contains("using the runtime folders built into this binary, unpacked into")
            && stderr.contains(&away.cache().display().to_string()),
        "{stderr}"
    );
    // The second run finds the unpacked copy.
    let again = away.iolab(&["presets"]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("built into this binary, in "), "{stderr}");
}

#[test]
fn python_showdown_from_another_folder_finds_its_runtime_folders() {
    let away = Away::new();
    let out = away.iolab(&["run", "python-showdown", "--dry-run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("py-prefork-rate=50"));
    let unpacked = std::fs::read_dir(away.cache().join("runtimes"))
        .unwrap()
        .flatten()
        .next()
        .expect("one unpacked copy")
        .path();
    for f in [
        "runtimes/python/runtime.toml",
        "runtimes/python/start",
        "vectors/steps.json",
    ] {
        assert!(unpacked.join(f).is_file(), "{f} in {}", unpacked.display());
    }
    // Predictions read the unpacked manifest: gunicorn's defaults, named.
    let out = away.iolab(&["predict", "python-showdown"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("gunicorn --threads 20, as set"), "{stdout}");
}
