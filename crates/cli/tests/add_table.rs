//! The README's "to find or add" table is true: each placeholder path it
//! names (`crates/model/src/concurrency/<model>.rs`) exists for every entry
//! of the registry behind the placeholder (`ModelKind::ALL`, the backend
//! table, `DOCUMENTS`, the runtime folders), and the folders it names hold
//! nothing a registry does not list. So adding a model is its file and its
//! registry entry, and this test fails when either is missing.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use iolab_model::steps::BackendKind;
use iolab_model::ModelKind;
use iolab_report::DOCUMENTS;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A name as a Rust module's file stem: `loop-async` -> `loop_async`.
fn module(name: &str) -> String {
    name.replace('-', "_")
}

/// The names a placeholder stands for, read from its registry.
fn names(placeholder: &str) -> Option<Vec<String>> {
    let models = ModelKind::ALL.iter();
    Some(match placeholder {
        "<model>" => models.map(|m| module(m.as_str())).collect(),
        "<built-in model>" => models
            .filter(|m| m.def().built_in)
            .map(|m| module(m.as_str()))
            .collect(),
        "<backend>" => BackendKind::ALL
            .iter()
            .map(|k| module(k.as_str()))
            .collect(),
        "<document>" => DOCUMENTS
            .iter()
            .map(|d| {
                let kind = d.schema.trim_start_matches("iolab.");
                module(kind.split('/').next().unwrap_or(kind))
            })
            .collect(),
        "<runtime>" => runtime_folders(),
        _ => return None,
    })
}

/// Every folder under `runtimes/` but the shared `lib/`.
fn runtime_folders() -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(root().join("runtimes"))
        .expect("runtimes/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "lib")
        .collect();
    out.sort();
    out
}

/// A Rust module is a file or a folder: `a/b.rs`, `a/b/mod.rs` and `a/b/`
/// name the same module.
fn module_exists(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let stem = text.trim_end_matches('/').trim_end_matches(".rs");
    path.exists()
        || Path::new(&format!("{stem}.rs")).is_file()
        || Path::new(&format!("{stem}/mod.rs")).is_file()
}

/// The table's rows: `(what to add, the code spans of where it lives)`.
fn rows(readme: &str) -> Vec<(String, Vec<String>)> {
    readme
        .lines()
        .skip_while(|l| !l.starts_with("| to find or add |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let what = cells[0].trim_start_matches("| ").to_string();
            let spans = l.split('`').skip(1).step_by(2).map(String::from).collect();
            (what, spans)
        })
        .collect()
}

#[test]
fn every_placeholder_path_exists_for_every_registry_entry() {
    let root = root();
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    let rows = rows(&readme);
    assert!(rows.len() >= 7, "the table has {} rows", rows.len());
    let mut missing = Vec::new();
    let mut checked = 0;
    for (what, spans) in &rows {
        for span in spans.iter().filter(|s| s.contains('<')) {
            let (start, end) = (span.find('<').unwrap(), span.find('>').unwrap());
            let placeholder = &span[start..=end];
            let Some(names) = names(placeholder) else {
                missing.push(format!(
                    "{what}: `{span}`: no registry behind {placeholder}"
                ));
                continue;
            };
            for name in names {
                checked += 1;
                let path = span.replace(placeholder, &name);
                if !module_exists(&root.join(&path)) {
                    missing.push(format!("{what}: {path} (for {name})"));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} paths expanded");
    assert!(
        missing.is_empty(),
        "the README's \"to find or add\" table names paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The stems of the modules in `dir`, less the ones that are not entries.
fn modules_in(dir: &str, not_entries: &[&str]) -> BTreeSet<String> {
    fs::read_dir(root().join(dir))
        .expect("a folder")
        .map(|e| e.expect("an entry").path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.trim_end_matches(".rs").to_string()
        })
        .filter(|n| !not_entries.contains(&n.as_str()))
        .collect()
}

/// The converse: a module in a registry's folder that its registry does not
/// list is a half-added entry.
#[test]
fn the_registries_folders_hold_only_registered_entries() {
    let set = |p: &str| -> BTreeSet<String> { names(p).unwrap().into_iter().collect() };
    assert_eq!(
        modules_in("crates/model/src/concurrency", &["mod", "shape", "held"]),
        set("<model>"),
        "crates/model/src/concurrency/: one file per ModelKind"
    );
    let backends = modules_in(
        "crates/backends/src",
        &[
            "lib", "backend", "config", "counts", "error", "pool", "registry", "service",
        ],
    );
    assert_eq!(
        backends,
        set("<backend>"),
        "crates/backends/src/: one module per BackendKind"
    );
    for name in runtime_folders() {
        let manifest = root().join("runtimes").join(&name).join("runtime.toml");
        assert!(manifest.is_file(), "runtimes/{name}/ has no runtime.toml");
    }
}
