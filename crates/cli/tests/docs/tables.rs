//! Every results table in the docs is rendered from the saved results it
//! cites, by the report's own renderers, and checked here against them.
//!
//! A checked table sits between two markers, invisible on GitHub:
//!
//! ```text
//! <!-- rendered from docs/results/showdown: by-rate ok-success-p99 -->
//! | model | 50 req/s | ... |
//! <!-- end rendered -->
//! ```
//!
//! What follows `from` is the results folder (its `runs.json`), then the
//! table: `by-rate CELL` (a row per model, a column per offered rate:
//! `iolab_report::runs::docs::by_rate`), `published` (a classic experiment's
//! published numbers beside ours, with its lead: `runs::docs::published`),
//! `held` (the cost of a held connection, measured beside predicted, and a
//! line per target: `runs::docs::held`), `chart ID` (the block shows an
//! image, `![what](results/NAME/ID.svg)`, whose file must be the report's
//! chart `ID` as `runs::docs::chart` draws it; when it is not, the test
//! writes the chart as drawn under the test's target folder to copy over),
//! `usl` (several services' capacity sweeps side by side, the USL beside
//! the queueing fit: `iolab_report::usl::services`) and `known` (their
//! capacities beside what their configuration implies:
//! `iolab_report::capacity::known`); for both the folder holds each
//! document as `iolab capacity --json` wrote it and `services.tsv` lists
//! them in the table's order (`services.tsv`: [`services`]).
//! `<!-- rendered from docs/results/*: published rows -->` marks a table of
//! chosen rows, `| experiment | run | metric | published | ours |`, each of
//! which must be a row of that experiment's `published` table. When a table
//! and its results disagree the test prints the table as rendered: paste it.

use std::fs;
use std::path::Path;

use iolab_model::capacity::{CapacityFile, Search};
use iolab_model::runs::RunsFile;
use iolab_report::capacity::known::Implied;
use iolab_report::grid::Grid;
use iolab_report::runs::docs::{by_rate, chart, held, published, Cell};

use super::{normal, pages, root};

const BEGIN: &str = "<!-- rendered from ";
const END: &str = "<!-- end rendered -->";

/// Saved results no page shows as a table, and why.
const NOT_SHOWN: [(&str, &str); 1] = [(
    "e3-futures-pg",
    "a batch experiment with no published numbers; its report.md is its rendering",
)];

/// One marked block of a page.
struct Block {
    page: String,
    line: usize,
    results: String,
    table: String,
    body: Vec<String>,
}

fn blocks(page: &Path) -> Vec<Block> {
    let text = fs::read_to_string(page).expect("a page reads");
    let page = normal(page);
    let root = normal(&root());
    let rel = page
        .strip_prefix(&root)
        .unwrap_or(&page)
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(spec) = line.trim().strip_prefix(BEGIN) else {
            continue;
        };
        let spec = spec.trim_end_matches("-->").trim();
        let (results, table) = spec
            .split_once(": ")
            .unwrap_or_else(|| panic!("{rel}:{}: `{line}` needs `FOLDER: TABLE`", i + 1));
        let end = lines[i + 1..]
            .iter()
            .position(|l| l.trim() == END)
            .unwrap_or_else(|| panic!("{rel}:{}: no `{END}` after `{line}`", i + 1));
        out.push(Block {
            page: rel.clone(),
            line: i + 1,
            results: results.to_string(),
            table: table.to_string(),
            body: trimmed(&lines[i + 1..i + 1 + end]),
        });
    }
    out
}

/// The lines without the empty ones around them (a blank line may end the
/// table before its end marker).
fn trimmed(lines: &[&str]) -> Vec<String> {
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].iter().map(|l| l.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn load(results: &str) -> RunsFile {
    let path = root().join(results).join("runs.json");
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", normal(&path).display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{results}/runs.json: {e}"))
}

/// The block as it should read, or why it cannot be rendered.
fn render(block: &Block) -> Result<Vec<String>, String> {
    let words: Vec<&str> = block.table.split_whitespace().collect();
    match words.as_slice() {
        ["by-rate", cell] => {
            let cell = Cell::parse(cell).ok_or(format!("no cell `{cell}`"))?;
            Ok(by_rate(&load(&block.results), cell).markdown())
        }
        ["published"] => {
            let (lead, grid) =
                published(&load(&block.results)).ok_or("its plan has no published numbers")?;
            let mut out = Vec::new();
            for l in lead {
                out.extend([l, String::new()]);
            }
            out.extend(grid.markdown());
            Ok(out)
        }
        ["held"] => held(&load(&block.results)).ok_or("it has no held runs".into()),
        ["usl"] => usl(&block.results),
        ["known"] => known(&block.results),
        ["chart", id] => check_chart(block, id).map(|()| block.body.clone()),
        _ => Err(format!("no table `{}`", block.table)),
    }
}

/// The services a folder's `services.tsv` lists, in order: after a header
/// line, `NAME<TAB>its/capacity.json<TAB>IMPLIED` (`IMPLIED`: the rate its
/// configuration sets, `cpu`: one core over the CPU per request measured,
/// or empty where no page compares it).
fn services(results: &str) -> Result<Vec<(String, CapacityFile, Option<Implied>)>, String> {
    let dir = root().join(results);
    let read = |name: &str| {
        fs::read_to_string(dir.join(name)).map_err(|e| format!("{results}/{name}: {e}"))
    };
    let mut out = Vec::new();
    for line in read("services.tsv")?.lines().skip(1) {
        let at = format!("{results}/services.tsv: `{line}`");
        let [service, file, implied] = line.split('\t').collect::<Vec<_>>()[..] else {
            return Err(format!(
                "{at} needs NAME, DOCUMENT and IMPLIED, tab-separated"
            ));
        };
        let implied = match implied {
            "" => None,
            "cpu" => Some(Implied::OneCore),
            v => Some(Implied::Configured(
                v.parse()
                    .map_err(|_| format!("{at}: IMPLIED is a rate or `cpu`"))?,
            )),
        };
        let doc: CapacityFile =
            serde_json::from_str(&read(file)?).map_err(|e| format!("{results}/{file}: {e}"))?;
        out.push((service.to_string(), doc, implied));
    }
    Ok(out)
}

/// The sweeps of a folder's services (those swept), side by side.
fn usl(results: &str) -> Result<Vec<String>, String> {
    let all = services(results)?;
    let rows: Vec<(String, &Search)> = (all.iter())
        .filter_map(|(name, d, _)| Some((name.clone(), d.searches.first()?)))
        .filter(|(_, s)| s.sweep.is_some())
        .collect();
    Ok(iolab_report::usl::services(&rows).markdown())
}

/// A folder's services beside what their configuration implies.
fn known(results: &str) -> Result<Vec<String>, String> {
    let all = services(results)?;
    let rows: Vec<(String, &Search, Implied)> = (all.iter())
        .filter_map(|(name, d, i)| Some((name.clone(), d.searches.first()?, (*i)?)))
        .collect();
    Ok(iolab_report::capacity::known::known(&rows).markdown())
}

/// A chart block: one image whose file is the results' chart `id`.
fn check_chart(block: &Block, id: &str) -> Result<(), String> {
    let svg =
        chart(&load(&block.results), id).ok_or(format!("the results draw no chart `{id}`"))?;
    let [line] = block.body.as_slice() else {
        return Err("a chart block is one image line, `![what](results/NAME/ID.svg)`".into());
    };
    let target = (line.split_once("](").and_then(|(_, t)| t.strip_suffix(')')))
        .filter(|t| line.starts_with("![") && t.ends_with(&format!("/{id}.svg")))
        .ok_or(format!("`{line}` is not an image of `{id}.svg`"))?;
    let page = root().join(&block.page);
    let file = page.parent().expect("a page is in a folder").join(target);
    if fs::read_to_string(&file).is_ok_and(|f| f == svg) {
        return Ok(());
    }
    let drawn = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{id}.svg"));
    fs::write(&drawn, &svg).expect("the drawn chart writes");
    Err(format!(
        "{} is not the chart {}/runs.json draws; it is drawn at {}: copy it over",
        normal(&file).display(),
        block.results,
        drawn.display()
    ))
}

/// The cells of a Markdown table row.
fn cells(line: &str) -> Vec<String> {
    let line = line.trim().trim_start_matches('|').trim_end_matches('|');
    line.split(" | ").map(|c| c.trim().to_string()).collect()
}

/// A table of chosen rows: each `| experiment | run | metric | published |
/// ours |` must be a row of `docs/results/<experiment>`'s published table.
fn check_rows(block: &Block) -> Result<Vec<String>, String> {
    let header = ["experiment", "run", "metric", "published", "ours"];
    let rows: Vec<&String> = block.body.iter().filter(|l| l.starts_with('|')).collect();
    if rows.len() < 3 || cells(rows[0]) != header {
        return Err(format!("the header must be `| {} |`", header.join(" | ")));
    }
    let mut wrong = Vec::new();
    for row in &rows[2..] {
        let c = cells(row);
        let folder = block.results.replace('*', &c[0]);
        let grid: Grid = published(&load(&folder))
            .ok_or(format!("{folder} has no published numbers"))?
            .1;
        if !grid.rows.iter().any(|r| r[..4] == c[1..]) {
            let near: Vec<String> = grid
                .rows
                .iter()
                .filter(|r| r[0] == c[1] || r[1] == c[2])
                .map(|r| format!("    | {} | {} |", c[0], r[..4].join(" | ")))
                .collect();
            wrong.push(format!(
                "  {row}\n  is not a row of {folder}; its rows:\n{}",
                near.join("\n")
            ));
        }
    }
    if wrong.is_empty() {
        Ok(Vec::new())
    } else {
        Err(wrong.join("\n"))
    }
}

#[test]
fn every_results_table_in_the_docs_is_its_saved_results_rendered() {
    let mut failures = Vec::new();
    let mut cited = Vec::new();
    let mut checked = 0;
    for page in pages() {
        for block in blocks(&page) {
            let at = format!("{}:{}", block.page, block.line);
            checked += 1;
            if block.table == "published rows" {
                if let Err(e) = check_rows(&block) {
                    failures.push(format!("{at}: {e}"));
                }
                cited.push(block.results.clone());
                continue;
            }
            cited.push(block.results.clone());
            match render(&block) {
                Err(e) => failures.push(format!("{at}: {e}")),
                Ok(want) if want != block.body => failures.push(format!(
                    "{at}: the table does not read as {}/runs.json renders it; it should read:\n{}",
                    block.results,
                    want.join("\n")
                )),
                Ok(_) => {}
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} marked tables: is the scan broken?"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    for entry in fs::read_dir(root().join("docs/results")).expect("docs/results") {
        let name = entry
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let folder = format!("docs/results/{name}");
        let shown = cited.iter().any(|c| *c == folder || c == "docs/results/*");
        assert!(
            shown || NOT_SHOWN.iter().any(|(n, _)| *n == name),
            "{folder} is saved but no page shows it in a checked table (or say why in NOT_SHOWN)"
        );
    }
}

#[test]
fn a_marked_block_is_found_with_its_folder_and_table() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let page = dir.path().join("p.md");
    let text = "x\n<!-- rendered from docs/results/showdown: by-rate goodput-p99 -->\n| a |\n\n<!-- end rendered -->\n";
    fs::write(&page, text).expect("writes");
    let b = blocks(&page);
    assert_eq!(b.len(), 1);
    assert_eq!(
        (b[0].results.as_str(), b[0].table.as_str(), b[0].line),
        ("docs/results/showdown", "by-rate goodput-p99", 2)
    );
    assert_eq!(b[0].body, ["| a |"]);
    assert_eq!(cells("| a | b c | 1 |"), ["a", "b c", "1"]);
}
