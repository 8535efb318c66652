//! The `iolab` command line: clap definitions ([`cli`]), one module per
//! subcommand under [`cmd`] that turns its flags into a typed plan and calls
//! the library crate that does the work, and the exit-code policy ([`exit`]).

/// `println!` through [`iolab_files::stdout`]: a closed stdout (`iolab
/// presets | head`) stops output quietly, any other failed write
/// (`> /dev/full`) makes the command exit 1 ([`exit::finish`]).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        iolab_files::stdout::write_fmt(format_args!("{}\n", format_args!($($arg)*)));
    }};
}

pub mod cli;
pub mod cmd;
pub mod exit;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

pub use exit::CliError;

/// Parse `args` (program name first) and run the subcommand.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One line, as every usage error: clap's first line names the
            // fault; its usage block and hints would make it five.
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error");
            eprintln!("{} (see --help)", first.trim_end());
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    exit::finish(cli.command.run())
}
