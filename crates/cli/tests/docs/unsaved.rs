//! A table of measured numbers with no saved results behind it is found
//! here: every results-looking table of a page must sit between the markers
//! [`super::tables`] checks, or be listed in [`UNSAVED`] with the run it
//! came from and what would save it. The list only shrinks: an entry whose
//! table is gone or marked fails too, so that it is struck off.
//!
//! Results-looking: most cells right of the first column are numbers (start
//! with a digit, after a sign or `~`); a cell holding `code` is an example,
//! not a measurement (`200 \`application/json\`` in a protocol table).

use std::fs;

use super::{normal, pages, root};

/// Tables of measured numbers no saved result holds yet, by page and the
/// start of their header row, and where the numbers came from. Each wants
/// its run saved under `docs/results/<name>/` and a renderer in
/// `crates/report`, then a marker (`crates/cli/tests/docs/tables.rs`).
const UNSAVED: &[(&str, &str, &str)] = &[
    ("README.md", "| generator | req/s |", "scripts/bench-loadgen against wrk, in the CHANGELOG"),
    ("docs/attack.md", "| model | ws held |", "the held runtimes' end-to-end runs (CHANGELOG 2026-11-28)"),
    ("docs/attack.md", "| generator (1 thread", "scripts/bench-loadgen (CHANGELOG 2026-11-23)"),
    ("docs/attack.md", "| open loop 2,000 req/s", "scripts/bench-loadgen (CHANGELOG 2026-11-23)"),
    ("docs/attack.md", "| tool | loop |", "scripts/bench-h2 (CHANGELOG 2026-11-25)"),
    ("docs/attack.md", "| run | tool | calls/s |", "scripts/bench-grpc (CHANGELOG 2026-11-25)"),
    ("docs/backends.md", "| model @ rate |", "scripts/bench-backends, PostgreSQL"),
    ("docs/backends.md", "| model, --mc-pool |", "scripts/bench-backends, memcached"),
    ("docs/backends.md", "| model | rate/s |", "the runtime folders against PostgreSQL"),
    ("docs/backends.md", "| target | `mc_pool` |", "the runtime folders against memcached"),
    ("docs/batch.md", "| case | tasks |", "scripts/bench-batch"),
    ("docs/batch.md", "| executor | total |", "iolab batch, E3's executors"),
    ("docs/batch.md", "| W | blocking |", "iolab batch, E3's width sweep"),
    ("docs/capacity.md", "| budget | capacities found", "scripts/bench-repeat (CHANGELOG 2026-11-28)"),
    ("docs/capacity.md", "| request | req/s |", "scripts/bench-loadgen's request kinds (CHANGELOG 2026-11-23)"),
    ("docs/development.md", "| run | install step", "scripts/fresh-machine's wall times"),
    ("docs/jvm.md", "| target | startup s |", "scripts/bench-runtime on the JVM targets"),
    ("docs/jvm.md", "| target | 10 | 20 |", "scripts/bench-runtime's held sweep on the JVM targets"),
    ("docs/jvm.md", "| target | 1,000 req/s |", "scripts/bench-runtime's rate sweep on the JVM targets"),
    ("docs/jvm.md", "| target | 50 req/s |", "scripts/bench-runtime, the JVM's pg pool"),
    ("docs/jvm.md", "| target | 1 connection:", "scripts/bench-runtime, the JVM's HTTP/1 client"),
    ("docs/predict.md", "| experiment | published |", "iolab predict on the classic presets"),
    ("docs/predict.md", "| loop-blocking (2 workers", "iolab run with five repetitions"),
    ("docs/predict.md", "| case | requests |", "scripts/bench-predict (the simulator's speed)"),
    ("docs/report.md", "| model | rate offered |", "iolab run with spans (scripts/bench-spans)"),
    ("docs/report.md", "| closed loop, 50 clients", "scripts/bench-spans' overhead rounds"),
    ("docs/report.md", "| page update latency |", "scripts/bench-live"),
    ("docs/report.md", "| 2 shards, Poisson", "scripts/bench-shards' merged latency"),
    ("docs/runtimes.md", "| target | startup s | idle RSS MiB | MiB per 1,000 outstanding", "scripts/bench-runtime on every runtime folder"),
    ("docs/runtimes.md", "| run | goodput req/s | ok |", "scripts/bench-runtime, Node's offload"),
    ("docs/runtimes.md", "| target | KiB / waiting |", "iolab run waiting (the cost of waiting per runtime)"),
    ("docs/runtimes.md", "| target | startup s | idle RSS MiB | MiB per 1,000 in flight | CPU ms / request | max req/s | p99 there |", "scripts/bench-runtime, Python"),
    ("docs/runtimes.md", "| target | startup s | idle RSS MiB | MiB per 1,000 in flight | CPU ms / request | max req/s (p99", "scripts/bench-runtime, Ruby"),
    ("docs/runtimes.md", "| run | goodput req/s | p50 |", "scripts/bench-runtime (two tables of the same shape)"),
    ("docs/runtimes.md", "| runtime, worker |", "scripts/bench-runtime's worker sweep"),
    ("docs/runtimes.md", "| executor | n=1 |", "iolab batch on the runtimes' executors"),
    ("docs/runtimes.md", "| endpoint | 10 req/s: Rust |", "scripts/bench-runtime, Play beside Rust"),
    ("docs/serve.md", "| model | cpu:0 req/s", "scripts/bench-serve (wrk)"),
    ("docs/serve.md", "| HELD | in flight (peak sample) | generator sockets | KiB", "scripts/bench-serve's held sweep"),
    ("docs/serve.md", "| HELD | in flight (peak sample) | generator sockets | RSS", "scripts/bench-serve's held sweep, io_uring"),
    ("docs/whatif.md", "| pair | run (CHANGELOG.md) |", "the slow tier's what-if pairs (CHANGELOG 2026-11-27, 2026-11-28): whatif.json per pair"),
];

/// A results-looking table outside the markers: its page, line and header.
#[derive(Debug, PartialEq)]
pub struct Found {
    pub page: String,
    pub line: usize,
    pub header: String,
}

/// Does a cell hold a measured number?
fn numeric(cell: &str) -> bool {
    let c = cell
        .trim()
        .trim_start_matches(['~', '≈', '+', '-', '−', '>', '<', '=', ' ', '*']);
    !cell.contains('`') && c.starts_with(|ch: char| ch.is_ascii_digit())
}

/// The results-looking tables of a page's text outside code fences and the
/// rendered markers.
pub fn unmarked(page: &str, text: &str) -> Vec<Found> {
    let lines: Vec<&str> = text.lines().collect();
    let rule = |l: &str| {
        let l = l.trim();
        l.starts_with('|') && l.len() > 2 && l.chars().all(|c| "|:- ".contains(c))
    };
    let (mut fence, mut marked, mut out, mut i) = (false, false, Vec::new(), 0);
    while i < lines.len() {
        let l = lines[i].trim();
        fence ^= l.starts_with("```");
        marked = (marked || l.starts_with("<!-- rendered from ")) && l != "<!-- end rendered -->";
        if fence
            || marked
            || !l.starts_with('|')
            || !lines.get(i + 1).is_some_and(|n| rule(n.trim()))
        {
            i += 1;
            continue;
        }
        let rows: Vec<&str> = (lines[i + 2..].iter())
            .take_while(|r| r.trim().starts_with('|'))
            .copied()
            .collect();
        let cells: Vec<&str> = (rows.iter())
            .flat_map(|r| r.trim().trim_matches('|').split(" | ").skip(1))
            .collect();
        let n = cells.iter().filter(|c| numeric(c)).count();
        if n * 2 > cells.len() {
            out.push(Found {
                page: page.to_string(),
                line: i + 1,
                header: l.to_string(),
            });
        }
        i += 2 + rows.len();
    }
    out
}

#[test]
fn r47_10_every_results_table_is_marked_or_listed_as_unsaved() {
    let root = normal(&root());
    let mut found = Vec::new();
    for page in pages() {
        let rel = normal(&page);
        let rel = rel
            .strip_prefix(&root)
            .unwrap_or(&rel)
            .display()
            .to_string();
        // The changelog is history (its tables are the runs as they were),
        // and a saved result's own report is rendered from it.
        if rel == "CHANGELOG.md" || rel.starts_with("docs/results/") {
            continue;
        }
        found.extend(unmarked(
            &rel,
            &fs::read_to_string(&page).expect("a page reads"),
        ));
    }
    let listed = |f: &Found| {
        UNSAVED
            .iter()
            .any(|(p, h, _)| *p == f.page && f.header.starts_with(h))
    };
    let new: Vec<String> = (found.iter())
        .filter(|f| !listed(f))
        .map(|f| format!("{}:{}: {}", f.page, f.line, f.header))
        .collect();
    assert!(
        new.is_empty(),
        "results tables with no saved results behind them: save the run under docs/results/<name>/ and mark the table (crates/cli/tests/docs/tables.rs says how):\n{}",
        new.join("\n")
    );
    let stale: Vec<String> = (UNSAVED.iter())
        .filter(|(p, h, _)| {
            !found
                .iter()
                .any(|f| f.page == *p && f.header.starts_with(h))
        })
        .map(|(p, h, _)| format!("{p}: {h}"))
        .collect();
    assert!(
        stale.is_empty(),
        "UNSAVED lists tables no page shows unmarked any more: strike them off:\n{}",
        stale.join("\n")
    );
    println!(
        "{} results tables unmarked and listed as unsaved",
        found.len()
    );
}

#[test]
fn r47_11_a_results_table_is_told_from_a_table_of_words() {
    let text = "\
| model | req/s | p99 |\n|---|---:|---:|\n| pool | 1,200 | 13 ms |\n| loop | ~900 | 2.1 s |\n\n\
| flag | meaning | default |\n|---|---|---|\n| --rate | per second | 50 |\n\n\
| request | answer |\n|---|---|\n| bad | 400 `{\"ok\":false}` |\n\n\
```\n| a | 1 |\n|---|---|\n| b | 2 |\n```\n\
<!-- rendered from docs/results/x: held -->\n| a | 1 |\n|---|---|\n| b | 2 |\n<!-- end rendered -->\n";
    let found = unmarked("p.md", text);
    assert_eq!(
        found,
        [Found {
            page: "p.md".into(),
            line: 1,
            header: "| model | req/s | p99 |".into()
        }]
    );
}
