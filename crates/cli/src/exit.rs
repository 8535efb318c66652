//! Exit codes, in one table ([`EXIT_CODES`]): 0 success, 1 a run or check
//! failed, 2 bad input (flags, presets, workload strings, a target or backend
//! that cannot be used), 3 a capacity measured on a machine too noisy for the
//! precision asked (`--strict`), 130 interrupted.
//!
//! The code of an error comes from its kind ([`ExitKind`]), which the library
//! that knows the fault chooses per variant ([`HasExitKind`]); a library error
//! reaches [`CliError`] through `?` by the `From` impls made below from the
//! list of typed errors, so no call site picks a code by hand for them.

use std::process::ExitCode;

use iolab_model::{ExitKind, HasExitKind};

/// One exit code: what it means, and the kind of error that ends with it
/// (none for success and Ctrl-C).
#[derive(Debug, Clone, Copy)]
pub struct ExitRow {
    /// The process's exit code.
    pub code: u8,
    /// The errors that end with it.
    pub kind: Option<ExitKind>,
    /// What it means, as the docs say it.
    pub meaning: &'static str,
}

/// Every exit code `iolab` ends with; [`code`] reads an error's here.
pub const EXIT_CODES: [ExitRow; 5] = [
    ExitRow {
        code: 0,
        kind: None,
        meaning: "success",
    },
    ExitRow {
        code: 1,
        kind: Some(ExitKind::Failed),
        meaning: "a run or check failed (verify found a broken contract, an objective was missed, a file could not be written)",
    },
    ExitRow {
        code: 2,
        kind: Some(ExitKind::BadInput),
        meaning: "bad input: a flag, preset, workload string, document, target or backend that cannot be used (one line naming the fault and the fix; nothing run)",
    },
    ExitRow {
        code: 3,
        kind: Some(ExitKind::Noisy),
        meaning: "`capacity --strict`: the machine moved more than the precision asked allows (the answer is written, and says so)",
    },
    ExitRow {
        code: iolab_lab::interrupt::EXIT_INTERRUPTED,
        kind: None,
        meaning: "interrupted (Ctrl-C); what was measured is written",
    },
];

/// The exit code of an error of `kind`, from [`EXIT_CODES`].
pub const fn code(kind: ExitKind) -> u8 {
    let mut i = 0;
    while i < EXIT_CODES.len() {
        if let Some(k) = EXIT_CODES[i].kind {
            if k as u8 == kind as u8 {
                return EXIT_CODES[i].code;
            }
        }
        i += 1;
    }
    panic!("an exit kind without a row in EXIT_CODES")
}

/// [`EXIT_CODES`] as the docs' table (docs/architecture.md, checked by
/// `crates/cli/tests/exit_kinds.rs`).
pub fn markdown() -> String {
    let mut out = String::from("| exit | kind of error | meaning |\n|---|---|---|\n");
    for row in EXIT_CODES {
        let kind = match row.kind {
            Some(ExitKind::BadInput) => "bad input",
            Some(ExitKind::Failed) => "failed",
            Some(ExitKind::Noisy) => "noisy",
            None => "none",
        };
        out.push_str(&format!("| {} | {kind} | {} |\n", row.code, row.meaning));
    }
    out
}

/// `capacity --strict`: the machine moved more than the precision asked
/// allows (the answer is written, and says so).
pub const EXIT_NOISY: u8 = code(ExitKind::Noisy);

/// What a subcommand can fail with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input: a one-line message naming the fault and the fix; exit 2.
    #[error("{0}")]
    Usage(String),
    /// The work ran but failed (e.g. verify found a broken contract); exit 1.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

impl CliError {
    /// Build a usage error from anything printable.
    pub fn usage(msg: impl std::fmt::Display) -> Self {
        CliError::Usage(msg.to_string())
    }

    /// A library's typed error, its variant (and so its code) chosen by its
    /// kind; the message is its `Display`, once (not chained with its causes,
    /// which the message already names).
    pub fn of<E: HasExitKind + std::fmt::Display>(e: E) -> Self {
        match e.exit_kind() {
            ExitKind::BadInput => CliError::Usage(e.to_string()),
            ExitKind::Failed | ExitKind::Noisy => {
                CliError::Failed(anyhow::Error::msg(e.to_string()))
            }
        }
    }

    /// The kind of fault, for the exit code.
    pub fn exit_kind(&self) -> ExitKind {
        match self {
            CliError::Usage(_) => ExitKind::BadInput,
            CliError::Failed(_) => ExitKind::Failed,
        }
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Failed(e)
    }
}

/// `From` for each library error listed: `?` picks the code by the kind.
macro_rules! by_kind {
    ($($t:ty),* $(,)?) => {
        $(impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                CliError::of(e)
            }
        })*
    };
}

// The typed library errors the subcommands pass up with `?`.
by_kind!(
    iolab_loadgen::AttackError,
    iolab_loadgen::held::HeldError,
    iolab_loadgen::held::FilesError,
    iolab_loadgen::held::combine::CombineError,
    iolab_loadgen::shard::combine::ShardMergeError,
    iolab_lab::targets::TargetError,
    iolab_lab::merge::FoldersError,
    iolab_capacity::gate::BaselineError,
    iolab_verify::VerifyError,
    iolab_lab::preset::PresetError,
    iolab_loadgen::replay::ReplayError,
    iolab_live::ListenError,
);

/// Print the error (one line, `error: ...`) and pick the exit code.
pub fn finish(result: Result<ExitCode, CliError>) -> ExitCode {
    // Output that never reached stdout is a failed command whatever the
    // work said (`attack ... > /dev/full`), but bad input stays exit 2.
    let result = match (result, iolab_files::stdout::finish()) {
        (Ok(_), Err(msg)) => Err(CliError::Failed(anyhow::anyhow!(msg))),
        (result, _) => result,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            match &e {
                CliError::Usage(msg) => eprintln!("error: {msg}"),
                CliError::Failed(e) => eprintln!("error: {e:#}"),
            }
            ExitCode::from(code(e.exit_kind()))
        }
    }
}
