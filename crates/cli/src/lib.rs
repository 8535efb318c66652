//! The `iolab` command line: clap definitions ([`cli`]), one module per
//! subcommand under [`cmd`] that turns its flags into a typed plan and calls
//! the library crate that does the work, the exit-code policy ([`exit`]),
//! and usage errors in one line ([`usage`]) that point a peer tool's flags
//! at iolab's ([`peers`]).

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
pub mod console;
pub mod exit;
pub mod peers;
pub mod usage;

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
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let typed = usage::strings(args.clone());
    // One line, as every usage error: the fault and the fix.
    if let Some(msg) = usage::foreign(&typed) {
        eprintln!("error: {msg} (see --help)");
        return ExitCode::from(2);
    }
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{} (see --help)", usage::one_line(&e, &typed));
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    exit::finish(cli.command.run())
}
