//! The docs stay true to the tree: every repository path a page names
//! exists, the README's layout table lists exactly the crates, and every
//! results table is its saved results rendered ([`tables`]).
//!
//! A path is a `code span` or a Markdown link target whose first part is an
//! entry of the repository's root (`crates/...`, `scripts/...`, `../schema`
//! from `docs/`) or of the page's own folder (`tests/...` in a runtime's
//! README), a link to a page beside it (`[run](run.md)`), or one of the
//! tree's files written from its middle (`sim/tokio.rs`: reported, to be
//! written whole). Every such path is checked, none skipped ([`in_tree`]): a
//! placeholder (`presets/NAME.toml`, `crates/servers/src/<model>.rs`,
//! `runtimes/*/README.md`) must stand for at least one entry of the tree, and
//! output (`runtimes/jvm/target/tmp`, `results/`: made by a build or a run,
//! never committed) must sit in a folder of the tree that git ignores it in.
//! Not paths of the tree: URLs, absolute paths (`/proc/PID/stat`), and
//! words with a slash that name no file (`iolab.attack/1`, `text/html`).

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

/// Folders a build or a run makes; a page may say where its output lands,
/// and [`in_tree`] checks that git ignores it there.
const OUTPUT: [&str; 7] = [
    "target",
    ".bin",
    ".cache",
    "node_modules",
    ".venv",
    ".wheels",
    "results",
];

/// The endings of the tree's own files: a mention ending in one is a path
/// of the tree even when its first part is no entry (`tests/x.rs` in a page
/// of another folder), so a path written from the middle is caught; another
/// project's file is a link to its source.
const FILE_ENDINGS: [&str; 11] = [
    "rs", "py", "rb", "kt", "java", "scala", "go", "js", "toml", "md", "sh",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose paths are checked: every Markdown page git tracks (the
/// changelog too: an entry names where a file went when it moves).
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
        .map(|p| root.join(p))
        .collect();
    pages.sort();
    pages
}

/// Every `code span` and `](link)` target of a Markdown page (a link to a
/// page of the same folder as `./page.md`).
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
            let target = &link[..end];
            // A link is a path even with no folder: `[run](run.md)`.
            let here = !target.is_empty() && !target.contains(['/', ':']);
            out.push(if here {
                format!("./{target}")
            } else {
                target.to_string()
            });
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
    let folder = mention.ends_with('/');
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
    let dir = page.parent().expect("a page is in a folder");
    let first = parts[0];
    if placeholder(first) {
        return None;
    }
    let entry = |base: &Path| {
        base.join(first).exists() || OUTPUT.contains(&first) && ignored(root, &base.join(first))
    };
    let file = mention
        .rsplit_once('.')
        .is_some_and(|(_, end)| FILE_ENDINGS.contains(&end));
    let base = if first == ".." || first == "." {
        dir
    } else if first.is_empty() {
        return None;
    } else if dir != root && entry(dir) {
        dir
    } else if entry(root) {
        root
    } else if file || folder && first.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        // Written from the middle of a path: reported, to be written whole.
        dir
    } else {
        return None;
    };
    Some(base.join(mention))
}

/// Is `path` (normal, from [`tree_path`]) in the tree? A placeholder part
/// matches any entry of its folder (with the same extension, when it has a
/// literal one: `NAME.toml`), so a folder that moved is still caught; an
/// output part ([`OUTPUT`]) ends the check when git ignores it there.
fn in_tree(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return path.exists();
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    matches_from(root, root, &parts)
}

fn matches_from(root: &Path, dir: &Path, parts: &[String]) -> bool {
    let Some((part, rest)) = parts.split_first() else {
        return dir.exists();
    };
    if OUTPUT.contains(&part.as_str()) && ignored(root, &dir.join(part)) {
        return dir.is_dir();
    }
    if !placeholder(part) {
        return matches_from(root, &dir.join(part), rest);
    }
    let ext = part
        .rsplit_once('.')
        .map(|(_, e)| e)
        .filter(|e| !placeholder(e) && !e.is_empty());
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        ext.is_none_or(|x| name.ends_with(&format!(".{x}"))) && matches_from(root, &e.path(), rest)
    })
}

/// Does git ignore `path` (build output, never committed)?
fn ignored(root: &Path, path: &Path) -> bool {
    let rel = path.strip_prefix(root).unwrap_or(path);
    std::process::Command::new("git")
        .args(["check-ignore", "-q", "--no-index", "--"])
        .arg(rel.join("x"))
        .current_dir(root)
        .status()
        .is_ok_and(|s| s.success())
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
            if !in_tree(&root, &normal(&path)) {
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
        .map(|m| m.trim_start_matches("./").to_string())
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

/// Before, a comment naming `runtimes/python/.venv` passed only where the
/// Python runtime had been built: in a fresh clone the folder is not there
/// and the test failed. Output is checked as git ignoring it, on any machine.
#[test]
fn r48_30_output_a_build_makes_passes_in_a_fresh_clone() {
    let root = normal(&root());
    let page = root.join("README.md");
    for output in [
        "runtimes/python/.venv",
        "scripts/foreign-services/.venv/bin/python",
        "runtimes/go/.bin/iolab-go",
        "results/showdown-<time>",
    ] {
        let path = tree_path(&root, &page, output).expect(output);
        assert!(in_tree(&root, &normal(&path)), "{output}");
    }
    // Not ignored where it is named: a committed folder that is not there.
    let path = tree_path(&root, &page, "crates/cli/.venv").expect("a path");
    assert!(!in_tree(&root, &normal(&path)));
}

#[test]
fn the_scan_sees_paths_and_checks_placeholders_and_build_output() {
    let root = normal(&root());
    let page = root.join("docs/run.md");
    let found = |m: &str| tree_path(&root, &page, m).map(|p| normal(&p));
    assert_eq!(found("crates/cli"), Some(root.join("crates/cli")));
    assert_eq!(found("../schema"), Some(root.join("schema")));
    assert_eq!(found("crates/nope.rs"), Some(root.join("crates/nope.rs")));
    for skipped in [
        "/proc/PID/stat",
        "https://example.org/a",
        "iolab.attack/1",
        "--host/--port",
        "NAME/x.rs",
    ] {
        assert_eq!(found(skipped), None, "{skipped}");
    }
    let checked = |m: &str| in_tree(&root, &found(m).expect(m));
    for there in [
        "presets/NAME.toml",
        "crates/servers/src/<model>.rs",
        "runtimes/*/README.md",
        "runtimes/jvm/target/tmp",
        "crates/cli",
    ] {
        assert!(checked(there), "{there} stands for something of the tree");
    }
    for not_there in [
        "presets/NAME.nope",
        "crates/nope/<model>.rs",
        "runtimes/*/nope/README.md",
        "crates/lab/target/x",
        "crates/nope/target/x",
        "crates/nope.rs",
    ] {
        assert!(!checked(not_there), "{not_there} is not of the tree");
    }
    let text = "see `crates/cli` and [the schema](../schema/runs.schema.json#x), [run](run.md)\n```\n`crates/x`\n```";
    assert_eq!(
        mentions(text),
        ["crates/cli", "../schema/runs.schema.json", "./run.md"]
    );
    // A path written from its middle is checked (and missing), not passed over.
    assert_eq!(found("tests/x.rs"), Some(root.join("docs/tests/x.rs")));
    assert_eq!(found("sim/server/"), Some(root.join("docs/sim/server")));
}
