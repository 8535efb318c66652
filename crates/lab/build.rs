//! Embeds every `presets/*.toml` of the repository in the binary, so
//! `iolab run NAME` works from any folder and adding a preset adds a file,
//! not a line of Rust.

use std::fmt::Write as _;
use std::path::Path;

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
}
