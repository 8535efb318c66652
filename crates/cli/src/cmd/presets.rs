//! `iolab presets`: the experiments `iolab run` knows (built in and in
//! `presets/`), with their size, expected time and one-line description.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use iolab_lab::preset;

use crate::CliError;

/// Flags of `iolab presets`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder of preset files to list beside the built-in ones.
    #[arg(long, value_name = "DIR", default_value = "presets")]
    pub dir: PathBuf,
}

/// Run `iolab presets`.
pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let all = preset::list(&args.dir);
    let width = all.iter().map(|p| p.name.len()).max().unwrap_or(4).max(4);
    crate::outln!(
        "{:<width$}  {:>5}  {:>8}  DESCRIPTION",
        "NAME",
        "RUNS",
        "TIME"
    );
    let mut broken = 0;
    for p in &all {
        match &p.plan {
            Ok(plan) => {
                // A search's length is set by what it finds: no estimate
                // (a whatif pair listed at "~14s" took minutes, issue 50).
                let time = match p.command {
                    "run" => format!(
                        "~{}",
                        iolab_model::format_duration(Duration::from_secs(
                            iolab_lab::estimate::estimate(plan).as_secs().max(1)
                        ))
                    ),
                    _ => "search".to_string(),
                };
                crate::outln!(
                    "{:<width$}  {:>5}  {:>8}  {}",
                    p.name,
                    plan.runs.len() * plan.reps as usize,
                    time,
                    plan.description
                );
            }
            Err(e) => {
                broken += 1;
                crate::outln!("{:<width$}  {:>5}  {:>8}  error: {e}", p.name, "-", "-");
            }
        }
    }
    crate::outln!(
        "\nrun one with `iolab run NAME` (default: {})",
        preset::DEFAULT_PRESET
    );
    if all.iter().any(|p| p.command != "run") {
        crate::outln!("TIME \"search\": searched, not run: `iolab whatif NAME` for a pair, `iolab capacity NAME` for the rest; a search lasts as long as what it finds takes");
    }
    Ok(if broken > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
