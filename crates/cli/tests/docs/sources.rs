//! Every repository path a source comment names exists: a port that says
//! "byte for byte from crates/model/src/steps/parse.rs" must point at the file it
//! was ported from, or a newcomer follows it into nothing.
//!
//! The scan reads the comments of every file git tracks under `crates/`,
//! `runtimes/`, `scripts/` and `.ci/` (Rust, Kotlin, Java, Scala, Go and
//! JavaScript `//` and `/* */` comments; Python, Ruby, shell and TOML `#`
//! comments; Python docstrings), takes each word starting with a root entry
//! (`crates/`, `docs/`, ...) and checks it as the pages' paths are checked
//! ([`super::tree_path`], [`super::in_tree`]: a placeholder stands for an
//! entry of the tree, build output for a folder git ignores).

use std::fs;
use std::process::Command;

use super::{in_tree, normal, root, tree_path};

/// The folders whose source files are scanned.
const SCANNED: [&str; 4] = ["crates", "runtimes", "scripts", ".ci"];

/// The first parts a repository path in a comment starts with.
const ROOTS: [&str; 7] = [
    "crates/",
    "runtimes/",
    "scripts/",
    "docs/",
    "presets/",
    "schema/",
    ".ci/",
];

/// How a file's comments are written, from its name.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Syntax {
    /// `//`, `/* */` and `*` continuation lines.
    Slashes,
    /// `#` comments (Python also has docstrings).
    Hash { docstrings: bool },
}

fn syntax(path: &str) -> Option<Syntax> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("rs" | "kt" | "java" | "scala" | "go" | "js" | "proto") => Some(Syntax::Slashes),
        Some("py") => Some(Syntax::Hash { docstrings: true }),
        Some("rb" | "sh" | "toml" | "sbatch" | "ini" | "conf") => {
            Some(Syntax::Hash { docstrings: false })
        }
        Some(_) => None,
        // `scripts/test`, `runtimes/node/start`, `.ci/run`: shell or Python.
        None => Some(Syntax::Hash { docstrings: true }),
    }
}

/// The comment text of a file, one entry per line that has any.
fn comments(text: &str, syntax: Syntax) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let comment = match syntax {
            Syntax::Slashes => {
                let was = in_block;
                if trimmed.starts_with("/*") {
                    in_block = true;
                }
                if in_block && line.contains("*/") {
                    in_block = false;
                }
                if was || trimmed.starts_with("/*") || trimmed.starts_with("* ") {
                    Some(trimmed)
                } else {
                    line.find("//").map(|at| &line[at..])
                }
            }
            Syntax::Hash { docstrings } => {
                let quotes = line.matches("\"\"\"").count();
                let was = in_block;
                if docstrings && quotes % 2 == 1 {
                    in_block = !in_block;
                }
                if was || quotes > 0 && docstrings {
                    Some(trimmed)
                } else {
                    line.find('#').map(|at| &line[at..])
                }
            }
        };
        if let Some(c) = comment {
            out.push((i + 1, c.to_string()));
        }
    }
    out
}

/// The words of a comment that start with a root entry.
fn paths(comment: &str) -> Vec<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || "_./*<>{}$-".contains(c);
    let mut out = Vec::new();
    let mut rest = comment;
    while let Some(at) = ROOTS.iter().filter_map(|r| rest.find(r)).min() {
        let before = rest[..at].chars().next_back();
        let len = rest[at..].find(|c| !word(c)).unwrap_or(rest.len() - at);
        if !before.is_some_and(word) {
            let p = rest[at..at + len].trim_end_matches(['.', ',', ':', '-']);
            out.push(p.to_string());
        }
        rest = &rest[at + len.max(1)..];
    }
    out
}

fn tracked() -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "--"])
        .args(SCANNED)
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_path_a_source_comment_names_exists() {
    let root = normal(&root());
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in tracked() {
        let Some(syntax) = syntax(&file) else {
            continue;
        };
        let Ok(text) = fs::read_to_string(root.join(&file)) else {
            continue;
        };
        // Paths in comments are from the repository's root, as a reader
        // types them; `tree_path` takes them so from a page at the root.
        let page = root.join("README.md");
        for (line, comment) in comments(&text, syntax) {
            for mention in paths(&comment) {
                let Some(path) = tree_path(&root, &page, &mention) else {
                    continue;
                };
                checked += 1;
                if !in_tree(&root, &normal(&path)) {
                    missing.push(format!("{file}:{line}: `{mention}`"));
                }
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} paths found in comments: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "paths named in source comments that do not exist (fix the comment or the name):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_comment_scan_finds_comments_and_their_paths() {
    let rust =
        "let a = \"crates/no\"; // from crates/model/src/steps/parse.rs.\n/* see\n * docs/run.md */";
    let found: Vec<String> = comments(rust, Syntax::Slashes)
        .into_iter()
        .flat_map(|(_, c)| paths(&c))
        .collect();
    assert_eq!(found, ["crates/model/src/steps/parse.rs", "docs/run.md"]);
    let python = "x = 'crates/no'  # crates/a.rs\n\"\"\"Doc\n(crates/models/src/routes.rs): x\n\"\"\"\ny = 1";
    let found: Vec<String> = comments(python, Syntax::Hash { docstrings: true })
        .into_iter()
        .flat_map(|(_, c)| paths(&c))
        .collect();
    assert_eq!(found, ["crates/a.rs", "crates/models/src/routes.rs"]);
    assert_eq!(
        paths("runtimes/*/README.md, presets/eN-*.toml"),
        ["runtimes/*/README.md", "presets/eN-*.toml"]
    );
    assert_eq!(paths("tests/docs/tables.rs"), Vec::<String>::new());
    assert_eq!(
        syntax("scripts/test"),
        Some(Syntax::Hash { docstrings: true })
    );
    assert_eq!(syntax("a/b.png"), None);
}
