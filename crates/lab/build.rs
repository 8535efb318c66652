//! Embeds every `presets/*.toml` of the repository in the binary, so
//! `iolab run NAME` works from any folder and adding a preset adds a file,
//! not a line of Rust; and the runtime folders' sources (`runtimes/`, with
//! the shared `vectors/` they read), which `targets::embedded` unpacks into a
//! cache when iolab runs outside a checkout.

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the presets folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let path = p.canonicalize().unwrap().display().to_string();
            (name, path)
        })
        .collect();
    names.sort();
    let mut out = String::from("/// Presets built into the binary: (name, TOML text).\npub const EMBEDDED: &[(&str, &str)] = &[\n");
    for (name, path) in &names {
        let _ = writeln!(out, "    ({name:?}, include_str!({path:?})),");
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("presets.rs");
    std::fs::write(dest, out).expect("writing presets.rs");
    runtime_folders();
}

/// `runtimes.rs`: every source file of `runtimes/` and `vectors/` as
/// (path under the checkout, bytes, executable). Build outputs (hidden
/// folders, `node_modules`, `target`, `__pycache__`) stay out; each file is
/// watched on its own, so a runtime's build writing its outputs does not
/// rebuild iolab.
fn runtime_folders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for top in ["runtimes", "vectors"] {
        walk(&root, &root.join(top), &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// The runtime folders' sources: (path under the checkout, bytes, executable).\npub const RUNTIME_FILES: &[(&str, &[u8], bool)] = &[\n",
    );
    for (rel, abs, exec) in &files {
        println!("cargo:rerun-if-changed={}", abs.display());
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?}), {exec}),",
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("runtimes.rs");
    std::fs::write(dest, out).expect("writing runtimes.rs");
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let skip = name.starts_with('.')
            || ["node_modules", "target", "__pycache__"].contains(&name.as_str());
        if skip {
            continue;
        }
        let path = e.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(root, &path, out);
        } else if meta.is_file() {
            let abs = path.canonicalize().unwrap();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            out.push((rel, abs, meta.permissions().mode() & 0o111 != 0));
        }
    }
}
