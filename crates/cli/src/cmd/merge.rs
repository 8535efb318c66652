//! `iolab merge PATH...`: the shards of one plan (each `iolab attack --shard
//! i/n` document, or folders holding them) into the one `iolab.attack/1`
//! document a single host would have written (`iolab_loadgen::shard::combine`
//! does the arithmetic), rendered like any attack; or the results folders of
//! `iolab run --shard` into one folder, run by run ([`super::merge_runs`]);
//! or held-connection documents (`iolab attack ws://...`, `--sse`) of
//! several generators into one (`iolab_loadgen::held::combine`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use iolab_lab::results::RUNS_JSON;
use iolab_loadgen::held::combine as held;
use iolab_loadgen::shard::combine::{self, Source};
use iolab_model::attack::AttackResult;
use iolab_report::{Document, Format};

use super::report::load_document;
use crate::CliError;

/// Flags of `iolab merge`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  iolab merge shard-1.json shard-2.json shard-3.json shard-4.json
  iolab merge results/ --out merged.json --hdr merged.hdr
  iolab merge /results --wait 10m --out /results/merged.json   (a merge step beside its shards)
  iolab merge run-1/ run-2/ --out merged-run/                   (folders of iolab run --shard)
  iolab merge --live http://10.0.0.1:9100/ http://10.0.0.2:9100/   (shards' live pages, merged as they run)")]
pub struct Args {
    /// Shard documents (`iolab attack --shard i/n --out FILE`), folders
    /// holding them (every *.json with a shard record), or results folders of
    /// `iolab run --shard`.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print the merged iolab.attack/1 document instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Write the merged document to FILE (a results folder when merging run folders).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write the merged HdrHistogram interval log of latency to FILE.
    #[arg(long, value_name = "FILE")]
    pub hdr: Option<PathBuf>,
    /// Wait up to this long for every shard of the plan to appear in the
    /// folders (a merge step started beside its shards), e.g. 10m.
    #[arg(long, value_name = "D")]
    pub wait: Option<String>,
    /// With --live, the PATHs are the shards' live pages (http://HOST:PORT/ of
    /// each `iolab attack --shard i/n --live`): merged as they run, exactly.
    #[command(flatten)]
    pub live: super::live::LiveArgs,
}

/// Run `iolab merge`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let wait = args
        .wait
        .as_deref()
        .map(|w| {
            iolab_model::parse_duration(w).map_err(|e| CliError::usage(format!("--wait: {e}")))
        })
        .transpose()?;
    if let Some(listener) = args.live.bind()? {
        return live(&args, listener);
    }
    if args.paths.iter().any(|p| p.join(RUNS_JSON).is_file()) {
        return runs(&args);
    }
    let docs = gather_waiting(&args.paths, wait.unwrap_or(Duration::ZERO))?;
    if held::all_held(&docs)? {
        return merge_held(&args, &docs);
    }
    let merged = combine::merge(&docs)?;
    if let Some(path) = &args.out {
        let bytes = iolab_report::attack::render(&merged.result, Format::Json)
            .map_err(|e| CliError::Failed(e.into()))?;
        iolab_files::write(path, &bytes).map_err(|e| {
            CliError::Failed(anyhow::anyhow!(
                "cannot write --out {}: {e}",
                path.display()
            ))
        })?;
    }
    if let Some(path) = &args.hdr {
        iolab_loadgen::write_hdr_log(path, &merged.result, &merged.intervals).map_err(|e| {
            CliError::Failed(anyhow::anyhow!(
                "cannot write --hdr {}: {e}",
                path.display()
            ))
        })?;
    }
    let bytes = iolab_report::attack::render(&merged.result, Format::json_or_text(args.json))
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    Ok(ExitCode::SUCCESS)
}

/// Held-connection documents (`iolab attack ws://... --out FILE` on each
/// generator) into one: counts add, latencies from added histograms.
fn merge_held(args: &Args, docs: &[Source]) -> Result<ExitCode, CliError> {
    if args.hdr.is_some() {
        return Err(CliError::usage(
            "--hdr: held documents have no interval log; their messages.histogram merges into --json",
        ));
    }
    let result = held::merge_documents(docs)?;
    write_and_print(args, &result)
}

/// A merged document: written to `--out` as JSON when asked, then printed
/// (JSON with `--json`, else the text report).
fn write_and_print(args: &Args, merged: &AttackResult) -> Result<ExitCode, CliError> {
    if let Some(path) = &args.out {
        let bytes = iolab_report::attack::render(merged, Format::Json)
            .map_err(|e| CliError::Failed(e.into()))?;
        iolab_files::write(path, &bytes).map_err(|e| {
            CliError::Failed(anyhow::anyhow!(
                "cannot write --out {}: {e}",
                path.display()
            ))
        })?;
    }
    let bytes = iolab_report::attack::render(merged, Format::json_or_text(args.json))
        .map_err(|e| CliError::Failed(e.into()))?;
    super::report::print(&bytes);
    Ok(ExitCode::SUCCESS)
}

/// Shards' live pages, merged as they run: the page shows the merge as it
/// stands; once every shard has finished, the merged document is printed
/// (and written to `--out`) as for files.
fn live(args: &Args, listener: iolab_live::Listener) -> Result<ExitCode, CliError> {
    if args.hdr.is_some() || args.wait.is_some() {
        return Err(CliError::usage(
            "--hdr and --wait apply to shard files; with --live, merge the files afterwards for an interval log",
        ));
    }
    let mut urls = Vec::new();
    for p in &args.paths {
        let url = p.display().to_string();
        if !url.starts_with("http://") {
            return Err(CliError::usage(format!(
                "{url}: with --live give the shards' live pages (http://HOST:PORT/ as each `iolab attack --shard i/n --live` printed), not files"
            )));
        }
        urls.push(url);
    }
    if let Some(path) = &args.out {
        iolab_model::files::check_writable(path)
            .map_err(|e| CliError::usage(format!("--out {}: {e}", path.display())))?;
    }
    let cancel = iolab_lab::interrupt::cancel_on_signals()
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot install the Ctrl-C handler: {e}")))?;
    let watch = iolab_live::MergeWatch::start(urls);
    let page = super::live::serve(listener, watch.clone())?;
    let merged = watch.wait(&cancel);
    page.finish();
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("interrupted before every shard finished: merge their files afterwards");
        return Ok(ExitCode::from(iolab_lab::interrupt::EXIT_INTERRUPTED));
    }
    let merged = merged.map_err(CliError::usage)?;
    write_and_print(args, &merged)
}

/// Results folders of `iolab run --shard`: merged run by run into `--out`.
fn runs(args: &Args) -> Result<ExitCode, CliError> {
    let out = args.out.as_ref().ok_or_else(|| {
        CliError::usage("merging results folders needs --out DIR for the merged folder")
    })?;
    if args.json || args.hdr.is_some() || args.wait.is_some() {
        return Err(CliError::usage(
            "--json, --hdr and --wait apply to shard documents, not to results folders",
        ));
    }
    let mut folders = Vec::new();
    for p in &args.paths {
        if !p.join(RUNS_JSON).is_file() {
            return Err(CliError::usage(format!(
                "{} holds no {RUNS_JSON}: give only results folders of iolab run --shard, or only shard documents",
                p.display()
            )));
        }
        folders.push((p.display().to_string(), super::report::load(p)?));
    }
    let file = iolab_lab::merge::merge(&folders)?;
    iolab_files::claim(out, RUNS_JSON).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => CliError::usage(e),
        _ => CliError::Failed(anyhow::anyhow!("cannot make {}: {e}", out.display())),
    })?;
    iolab_lab::results::save(out, &file)
        .map_err(|e| CliError::Failed(anyhow::anyhow!("cannot write {}: {e}", out.display())))?;
    super::run::write_reports(&file, out);
    super::run::print_table(&file);
    eprintln!("merged: {}/", out.display());
    Ok(ExitCode::SUCCESS)
}

/// The shard documents under `paths`, polled until every shard of the plan
/// is there or `wait` has passed (then whatever is there, for the merge to
/// name what is missing).
fn gather_waiting(paths: &[PathBuf], wait: Duration) -> Result<Vec<Source>, CliError> {
    let deadline = Instant::now() + wait;
    loop {
        // While waiting, a folder the shards have not made yet is empty.
        let waiting = Instant::now() < deadline;
        let present: Vec<PathBuf> = paths
            .iter()
            .filter(|p| !waiting || p.exists())
            .cloned()
            .collect();
        let docs = gather(&present)?;
        if !waiting || complete(&docs) {
            return Ok(docs);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Every shard 1..=n of the first document's plan is present.
fn complete(docs: &[Source]) -> bool {
    let Some(n) = docs
        .iter()
        .find_map(|(_, d)| d.shard.as_ref().map(|s| s.count))
    else {
        return false;
    };
    (1..=n).all(|i| {
        docs.iter()
            .any(|(_, d)| d.shard.as_ref().is_some_and(|s| s.index == i))
    })
}

/// Files named on the command line must be attack documents; in a folder,
/// every `*.json` attack document with a shard record (so a merged document
/// written beside the shards is not taken for one).
fn gather(paths: &[PathBuf]) -> Result<Vec<Source>, CliError> {
    let mut docs = Vec::new();
    for path in paths {
        if !path.is_dir() {
            docs.push((path.display().to_string(), attack(path)?));
            continue;
        }
        let entries = std::fs::read_dir(path)
            .map_err(|e| CliError::usage(format!("cannot read folder {}: {e}", path.display())))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                // A FIFO or device named *.json is no document (and reading
                // one would wait on its writer): regular files only.
                p.is_file()
                    && p.extension().is_some_and(|x| x == "json")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        files.sort();
        for f in files {
            // Other documents may share the folder; a file that is not JSON
            // of a known schema is still an error worth naming.
            if let Document::Attack(doc) = load_document(&f)? {
                if doc.shard.is_some() {
                    docs.push((f.display().to_string(), *doc));
                }
            }
        }
    }
    Ok(docs)
}

/// One attack document; anything else is a one-line usage error.
fn attack(path: &Path) -> Result<AttackResult, CliError> {
    match load_document(path)? {
        Document::Attack(a) => Ok(*a),
        other => Err(CliError::usage(format!(
            "{} has schema '{}', expected 'iolab.attack/1' (a shard written by iolab attack --shard i/n --out FILE)",
            path.display(),
            other.schema()
        ))),
    }
}
