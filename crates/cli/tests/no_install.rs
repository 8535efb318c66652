//! No test installs anything. The test command installs once, before any test
//! (`scripts/install-deps`, under one lock), then sets `IOLAB_NO_INSTALL=1`; a test that
//! called an installer itself raced apt on a fresh machine (two Chromium tests each ran
//! `scripts/install-deps chromium`, and the second died on dpkg's lock). This check reads
//! every test source (the crates' `tests/` and the runtime folders' `tests/`) and fails on
//! any process it starts that is a package manager or the install step; a test needing a
//! package adds it to `scripts/install-deps` instead.

use std::path::{Path, PathBuf};

/// Programs a test must not start: the install step and the package managers.
const INSTALLERS: &[&str] = &[
    "install-deps",
    "apt-get",
    "\"apt\"",
    "dpkg",
    "\"pip\"",
    "\"pip3\"",
    "pip install",
    "\"npm\"",
    "npm ci",
    "npm install",
    "\"mvn\"",
    "go mod download",
    "\"gem\"",
];

/// How a test source starts a process, per language.
const SPAWNS: &[&str] = &[
    "Command::new(",
    "subprocess.",
    "os.system(",
    "execSync(",
    "spawnSync(",
    "execFileSync(",
    "spawn(",
    "system(",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "node_modules" || name == "target" {
            continue;
        }
        if p.is_dir() {
            sources(&p, out);
        } else if [
            ".rs", ".py", ".js", ".rb", ".go", ".kt", ".java", ".scala", ".sh",
        ]
        .iter()
        .any(|x| name.ends_with(x))
        {
            out.push(p);
        }
    }
}

/// The text of every process start in `text` (from the spawn to its closing
/// parenthesis, or the rest of the line), with its line number.
fn spawns(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for spawn in SPAWNS {
        let mut from = 0;
        while let Some(i) = text[from..].find(spawn) {
            let start = from + i;
            let body = &text[start..];
            let mut depth = 0i32;
            let mut end = body.len().min(400);
            for (j, c) in body.char_indices().take(400) {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = j + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            // The call's arguments may follow on the next lines (`.args([...])`).
            let tail: String = body[end..].lines().take(3).collect::<Vec<_>>().join(" ");
            let line = text[..start].lines().count().max(1);
            out.push((line, format!("{} {tail}", &body[..end])));
            from = start + spawn.len();
        }
    }
    out
}

/// Every process start in `text` that runs an installer.
fn installs(text: &str) -> Vec<(usize, String)> {
    spawns(text)
        .into_iter()
        .filter(|(_, call)| INSTALLERS.iter().any(|i| call.contains(i)))
        .collect()
}

#[test]
fn no_test_source_starts_an_installer() {
    let root = root();
    let mut files = Vec::new();
    for parent in ["crates", "runtimes"] {
        for e in std::fs::read_dir(root.join(parent)).unwrap().flatten() {
            sources(&e.path().join("tests"), &mut files);
        }
    }
    assert!(files.len() > 20, "found only {} test sources", files.len());
    let mut found = Vec::new();
    // This file holds the defect as text, and starts install-deps only to see it refuse.
    let me = Path::new(file!()).file_name().unwrap();
    for f in files.iter().filter(|f| f.file_name() != Some(me)) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (line, call) in installs(&text) {
            found.push(format!("{}:{line}: {call}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "tests must not install (add the package to scripts/install-deps):\n{}",
        found.join("\n")
    );
}

/// The defect this check exists for, as it was written: it is caught.
#[test]
fn chromium_tests_calling_install_deps_from_inside_a_test_are_caught() {
    let old = r#"
    let deps = Command::new(root.join("scripts/install-deps"))
        .args(["chromium", "fonts-dejavu-core"])
        .status()
        .unwrap();
"#;
    assert_eq!(installs(old).len(), 1, "{:?}", spawns(old));
    let py = "subprocess.run([\"pip\", \"install\", \"flask\"])";
    assert_eq!(installs(py).len(), 1);
    let js = "execSync('npm ci', { cwd })";
    assert_eq!(installs(js).len(), 1);
    // Naming the fix in a message is not an install.
    let ok = r#"panic!("chromium is missing: run scripts/install-deps");
    let out = Command::new("/usr/bin/chromium").arg("--version").output();"#;
    assert!(installs(ok).is_empty(), "{:?}", installs(ok));
}

/// The install step itself is guarded: while the tests run it refuses, one line naming it.
#[test]
fn install_deps_refuses_while_the_tests_run() {
    let out = std::process::Command::new(root().join("scripts/install-deps"))
        .arg("iolab-no-such-package")
        .env("IOLAB_NO_INSTALL", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("install refused while the tests run")
            && err.contains("iolab-no-such-package")
            && err.contains("scripts/install-deps"),
        "{err}"
    );
}
