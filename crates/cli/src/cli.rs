//! clap definitions. Each subcommand's flags live beside its code in `cmd/`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cmd;
use crate::CliError;

/// iolab: measure how concurrency models hold up under IO-bound load, and why.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an experiment from a preset (default: `showdown`) and write a results folder.
    Run(cmd::run::Args),
    /// List the presets.
    Presets(cmd::presets::Args),
    /// Send HTTP load to a URL, open or closed loop, and measure it honestly.
    // Boxed, as `Capacity`: their flags make them the largest variants by far.
    Attack(Box<cmd::attack::Args>),
    /// Find the highest rate a service holds within an objective, and what limits it.
    Capacity(Box<cmd::capacity::Args>),
    /// Fit a service as a black box, predict what a change buys, then make the change and measure it.
    Whatif(cmd::whatif::Args),
    /// Serve the target contract under one concurrency model.
    Serve(cmd::serve::Args),
    /// Check that a target honours the contract before measuring it.
    Verify(cmd::verify::Args),
    /// Render saved results as a table, Markdown, HTML, JSON or CSV.
    Report(cmd::report::Args),
    /// Run an in-process batch experiment (E1 master/worker, E3 futures).
    Batch(cmd::batch::Args),
    /// Predict what each model will do under a plan, without running it.
    Predict(cmd::predict::Args),
    /// Backend helpers: the HTTP delay service, filling memcached.
    Backend(cmd::backend::Args),
    /// Merge the shards of one plan (attack --shard i/n) into one exact result.
    Merge(cmd::merge::Args),
    /// Write Kubernetes manifests running an attack as N shards (an Indexed Job) and their merge.
    K8s(cmd::k8s::Args),
}

impl Command {
    /// Run the subcommand.
    pub fn run(self) -> Result<ExitCode, CliError> {
        match self {
            Command::Run(a) => cmd::run::run(a),
            Command::Presets(a) => cmd::presets::run(a),
            Command::Attack(a) => cmd::attack::run(*a),
            Command::Capacity(a) => cmd::capacity::run(*a),
            Command::Serve(a) => cmd::serve::run(a),
            Command::Verify(a) => cmd::verify::run(a),
            Command::Report(a) => cmd::report::run(a),
            Command::Batch(a) => cmd::batch::run(a),
            Command::Predict(a) => cmd::predict::run(a),
            Command::Backend(a) => cmd::backend::run(a),
            Command::Merge(a) => cmd::merge::run(a),
            Command::K8s(a) => cmd::k8s::run(a),
            Command::Whatif(a) => cmd::whatif::run(a),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
