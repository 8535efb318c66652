//! The docs stay true to the tree: every repository path a page names
//! exists, the README's layout table lists exactly the crates, and every
//! results table is its saved results rendered ([`tables`]).
//!
//! A path is a `code span` or a Markdown link target whose first part is an
//! entry of the repository's root (`crates/...`, `scripts/...`, `../schema`
//! from `docs/`) or of the page's own folder (`tests/...` in a runtime's
//! README). Placeholders (`presets/NAME.toml`, `crates/servers/src/<model>.rs`,
//! `runtimes/*/README.md`) and build output (`target/`, `.bin/`, `.cache/`,
//! `node_modules/`, `.venv/`: made by a build, never committed) are not paths of
//! the tree.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

#[path = "docs/protocols.rs"]
mod protocols;
#[path = "docs/sources.rs"]
mod sources;
#[path = "docs/tables.rs"]
mod tables;
#[path = "docs/unsaved.rs"]
mod unsaved;

/// Folders a build makes; a page may say where its output lands. `.venv`:
/// a Python runtime's build makes it, so a clean clone has none (r47_13:
/// the comment scan failed on `runtimes/python/.venv` before that build).
const BUILD_OUTPUT: [&str; 5] = ["target", ".bin", ".cache", "node_modules", ".venv"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose paths are checked: every Markdown page git tracks but the
/// changelog (history names what was there then) and the reports rendered
/// into `docs/results/` (their paths are the run's, checked by [`tables`]).
fn pages() -> Vec<PathBuf> {
    let root = root();
    let out = std::process::Command::new("git")
        .args(["ls-files", "--", "*.md"])
        .current_dir(&root)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files failed");
    let mut pages: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|p| *p != "CHANGELOG.md" && !p.starts_with("docs/results/"))
        .map(|p| root.join(p))
        .collect();
    pages.sort();
    pages
}

/// Every `code span` and `](link)` target of a Markdown page.
fn mentions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        out.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        for link in line.split("](").skip(1) {
            let end = link.find([')', '#', ' ']).unwrap_or(link.len());
            out.push(link[..end].to_string());
        }
    }
    out
}

/// A name that stands for many: `<model>`, `*`, `{port}`, `...`, or an
/// upper-case stem (`NAME.toml`, `PID`; `README` is a real name).
fn placeholder(part: &str) -> bool {
    let stem = part.split('.').next().unwrap_or_default();
    part.contains(['<', '*', '{', '[', '$'])
        || part.contains("...")
        || stem != "README"
            && stem.chars().any(|c| c.is_ascii_uppercase())
            && stem
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// The file `mention` on `page` names, when it names one of the tree.
fn tree_path(root: &Path, page: &Path, mention: &str) -> Option<PathBuf> {
    let mention = mention.trim_end_matches('/');
    if mention.is_empty()
        || mention.contains("://")
        || mention.contains(char::is_whitespace)
        || !mention.contains('/')
        || mention.starts_with('/')
    {
        return None;
    }
    let parts: Vec<&str> = mention.split('/').collect();
    if parts
        .iter()
        .any(|p| placeholder(p) || BUILD_OUTPUT.contains(p))
    {
        return None;
    }
    let dir = page.parent().expect("a page is in a folder");
    let first = parts[0];
    let base = if first == ".." || first == "." {
        dir
    } else if first.is_empty() {
        return None;
    } else if dir.join(first).exists() && dir != root {
        dir
    } else if root.join(first).exists() {
        root
    } else {
        return None;
    };
    Some(base.join(mention))
}

/// `a/b/../c` as `a/c`, for messages and for `..` that leaves the tree.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = normal(&root());
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).expect("a page reads");
        for mention in mentions(&text) {
            let Some(path) = tree_path(&root, &page, &mention) else {
                continue;
            };
            checked += 1;
            if !normal(&path).exists() {
                let page = page.strip_prefix(&root).unwrap_or(&page);
                missing.push(format!("{}: `{mention}`", normal(page).display()));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "paths named in the docs that do not exist (fix the page or the name):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_readme_layout_table_lists_every_crate() {
    let root = root();
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    let listed: BTreeSet<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `crates/"))
        .filter_map(|l| l.split_once("` |"))
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(
        listed,
        crates(),
        "the README's layout table (`| `crates/NAME` | ... |` rows) must list exactly the crates"
    );
}

/// The crate folders of the workspace.
fn crates() -> BTreeSet<String> {
    fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| {
            p.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn the_readme_dependency_arrows_name_every_crate_and_no_other() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let (_, layout) = readme.split_once("## Layout").expect("a Layout section");
    let (arrows, _) = layout
        .split_once("Where to look")
        .expect("the arrows' paragraph");
    let named: BTreeSet<String> = arrows
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split(['→', '/']))
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect();
    assert_eq!(
        named,
        crates(),
        "the README's arrows (`cli → live → ...`) must name exactly the crates"
    );
}

#[test]
fn the_readme_commands_table_lists_every_subcommand() {
    use clap::CommandFactory;
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let listed: BTreeSet<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `iolab "))
        .filter_map(|l| l.split([' ', '`']).next())
        .map(str::to_string)
        .collect();
    let commands: BTreeSet<String> = iolab::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    assert_eq!(
        listed, commands,
        "the README's commands table (`| `iolab NAME ...` | ... |` rows) must list every subcommand"
    );
}

#[test]
fn the_docs_index_lists_every_page() {
    let root = root();
    let index = fs::read_to_string(root.join("docs/README.md")).expect("docs/README.md");
    let linked: BTreeSet<String> = mentions(&index)
        .into_iter()
        .filter(|m| !m.contains('/') && m.ends_with(".md"))
        .collect();
    let pages: BTreeSet<String> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md") && n != "README.md")
        .collect();
    assert_eq!(
        linked, pages,
        "docs/README.md must link every page of docs/ (one line each: the question it answers)"
    );
}

#[test]
fn the_scan_sees_paths_and_skips_placeholders() {
    let root = normal(&root());
    let page = root.join("docs/run.md");
    let found = |m: &str| tree_path(&root, &page, m).map(|p| normal(&p));
    assert_eq!(found("crates/cli"), Some(root.join("crates/cli")));
    assert_eq!(found("../schema"), Some(root.join("schema")));
    assert_eq!(found("crates/nope.rs"), Some(root.join("crates/nope.rs")));
    for skipped in [
        "presets/NAME.toml",
        "crates/servers/src/<model>.rs",
        "runtimes/*/README.md",
        "runtimes/jvm/target/tmp",
        "/proc/PID/stat",
        "https://example.org/a",
        "iolab.attack/1",
        "--host/--port",
    ] {
        assert_eq!(found(skipped), None, "{skipped}");
    }
    let text =
        "see `crates/cli` and [the schema](../schema/runs.schema.json#x)\n```\n`crates/x`\n```";
    assert_eq!(mentions(text), ["crates/cli", "../schema/runs.schema.json"]);
}

/// A Python runtime's `.venv` is made by its build: a clean clone has none,
/// and a comment naming it names no path of the tree.
#[test]
fn r47_13_a_python_venv_is_build_output_not_a_path() {
    let root = normal(&root());
    let page = root.join("README.md");
    for venv in [
        "runtimes/python/.venv",
        "scripts/foreign-services/.venv/bin/gunicorn",
    ] {
        assert_eq!(tree_path(&root, &page, venv), None, "{venv}");
    }
}
