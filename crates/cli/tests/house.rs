//! The house's shape, held by a test: no circle of files inside a crate.
//!
//! A file names another when its code (not its comments, not its test
//! module) says `crate::a::b` or `super::b`; the name resolves to the
//! longest module path that is a file (`a/b.rs`, `a/b/mod.rs`, `a.rs`). A
//! circle (`a` names `b`, `b` names `a`, maybe through others) means
//! neither can be read, changed or moved alone; each is cut by moving what
//! both need into the file that owns it. Crates are checked apart: their
//! arrows point one way by Cargo's own rule.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Circles not cut yet: (crate, files of the circle). The generator's
/// books (recorder, report, merge, shards) and its HTTP/2 client name each
/// other; held connections and gRPC streams share books both ways.
const KNOWN: [(&str, &str); 2] = [
    (
        "loadgen",
        "endpoints.rs h2/mod.rs http.rs merge.rs recorder.rs report.rs run_ctx.rs shard/hist.rs shard/mod.rs shard/record.rs thread_share.rs",
    ),
    ("loadgen", "grpc/stream/mod.rs held/account.rs held/mod.rs"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("a source folder") {
        let p = e.expect("an entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of `file` under `src` (`a/b.rs` and `a/b/mod.rs`: `[a, b]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file of the longest prefix of `path` that is one.
fn file_of(src: &Path, path: &[String]) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| {
        let base = path[..n].iter().fold(src.to_path_buf(), |p, s| p.join(s));
        [base.with_extension("rs"), base.join("mod.rs")]
            .into_iter()
            .find(|f| f.is_file())
    })
}

/// The code of a file: before its test module, without comment lines.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `crate::a::b` and `super::super::b` paths of `code`, as module paths.
fn named(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for (at, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let end = code[at..]
            .find(|c| !ident(c))
            .map_or(code.len(), |e| at + e);
        let words: Vec<&str> = code[at..end]
            .split("::")
            .filter(|w| !w.is_empty())
            .collect();
        let supers = words.iter().take_while(|w| **w == "super").count();
        let (mut base, rest): (Vec<String>, &[&str]) = if words[0] == "crate" {
            (Vec::new(), &words[1..])
        } else {
            // `super` is the module above the file's own (a mod.rs's own
            // module is its folder).
            let mut base = me.to_vec();
            base.truncate(me.len().saturating_sub(supers));
            (base, &words[supers..])
        };
        base.extend(rest.iter().map(|w| w.to_string()));
        out.push(base);
    }
    out
}

/// Each circle of `graph` (strongly connected parts of more than one file).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<BTreeSet<PathBuf>> {
    let reach = |from: &PathBuf| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(f) = todo.pop() {
            for t in graph.get(&f).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&PathBuf, BTreeSet<PathBuf>> =
        graph.keys().map(|f| (f, reach(f))).collect();
    let mut out: Vec<BTreeSet<PathBuf>> = Vec::new();
    for (f, r) in &reached {
        let part: BTreeSet<PathBuf> = r
            .iter()
            .filter(|t| reached.get(t).is_some_and(|back| back.contains(*f)))
            .cloned()
            .collect();
        if part.len() > 1 && !out.contains(&part) {
            out.push(part);
        }
    }
    out
}

#[test]
fn no_circle_of_files_inside_a_crate() {
    let mut found = Vec::new();
    let mut known_seen = Vec::new();
    let mut files_seen = 0;
    for entry in fs::read_dir(root().join("crates")).expect("crates/") {
        let krate = entry.expect("an entry").path();
        let src = krate.join("src");
        if !src.is_dir() {
            continue;
        }
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files_seen += files.len();
        let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for f in &files {
            let text = fs::read_to_string(f).expect("a source file");
            let me = module_of(&src, f);
            let to: BTreeSet<PathBuf> = named(&code(&text), &me)
                .iter()
                .filter_map(|p| file_of(&src, p))
                .filter(|t| t != f)
                .collect();
            graph.insert(f.clone(), to);
        }
        for c in circles(&graph) {
            let names: Vec<String> = c
                .iter()
                .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
                .collect();
            let listed = names.join(" ");
            match KNOWN
                .iter()
                .any(|(k, files)| *k == name && *files == listed)
            {
                true => known_seen.push(listed),
                false => found.push(format!("crates/{name}: {listed}")),
            }
        }
    }
    assert!(
        files_seen > 300,
        "only {files_seen} files: is the scan broken?"
    );
    for (k, files) in KNOWN {
        assert!(
            known_seen.iter().any(|s| s == files),
            "crates/{k}: the circle {files} is cut: take it off KNOWN"
        );
    }
    assert!(
        found.is_empty(),
        "circles of files (cut each by moving what both need into the file that owns it):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_resolves_paths_and_finds_a_circle() {
    let me = vec!["whatif".to_string(), "holds".to_string()];
    assert_eq!(
        named(
            "use super::calibrate::ROUNDS;\nlet x = crate::warm::Warm;",
            &me
        ),
        vec![
            vec!["warm".to_string(), "Warm".into()],
            vec!["whatif".to_string(), "calibrate".into(), "ROUNDS".into()]
        ]
    );
    assert_eq!(
        code("use a;\n// crate::b\n#[cfg(test)]\nuse crate::c;"),
        "use a;"
    );
    let (a, b, c) = (PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c"));
    let graph = BTreeMap::from([
        (a.clone(), BTreeSet::from([b.clone()])),
        (b.clone(), BTreeSet::from([a.clone(), c.clone()])),
        (c.clone(), BTreeSet::new()),
    ]);
    assert_eq!(circles(&graph), vec![BTreeSet::from([a, b])]);
}
