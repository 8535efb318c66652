//! What kind of fault an error is, so that the exit code comes from the
//! error and not from the call site: every library error enum says, per
//! variant, whether it is bad input, a failed run or check, or an answer
//! measured on a machine too noisy for the precision asked; the CLI's
//! `exit.rs` turns a kind into its code in one table.

/// What kind of fault an error is (the CLI's exit code is chosen by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitKind {
    /// The input cannot be used (a flag, a preset, a workload string, a
    /// document, a target or backend that cannot be used): the user fixes it.
    BadInput,
    /// The work ran, or began, and failed (a check found a broken contract,
    /// a file could not be written, a thread could not start).
    Failed,
    /// The answer was measured, on a machine too noisy for the precision asked.
    Noisy,
}

impl ExitKind {
    /// Every kind, for the tables that must name each.
    pub const ALL: [ExitKind; 3] = [ExitKind::BadInput, ExitKind::Failed, ExitKind::Noisy];
}

/// An error that knows what kind of fault it is.
pub trait HasExitKind {
    /// The kind, chosen per variant by the library that knows the fault.
    fn exit_kind(&self) -> ExitKind;
}
