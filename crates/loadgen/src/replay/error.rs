//! What can be wrong with a replay input: one typed error per fault, each
//! rendered as one line naming the file, the line or entry, and the fix.

use std::path::PathBuf;

/// A replay input that cannot be used; `Display` is the one-line message.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file cannot be opened or read.
    #[error("--replay {file}: cannot read it: {why}")]
    Read { file: PathBuf, why: String },
    /// A HAR larger than the limit (parsed whole, so it is capped).
    #[error("--replay {file}: {size} bytes is over the HAR limit of {limit} bytes: export fewer requests (filter DevTools' list), or convert it to an access log, which is streamed")]
    TooLarge {
        file: PathBuf,
        size: u64,
        limit: u64,
    },
    /// No format of the registry recognises the content.
    #[error("--replay {file}: line {line}: not a HAR, a combined access log or a vegeta targets file: name the format with --replay-format har|combined|vegeta")]
    UnknownFormat { file: PathBuf, line: u64 },
    /// A HAR that is not JSON of HAR's shape.
    #[error("--replay {file}: not a HAR 1.2 document ({why}): export it again from the browser's Network tab (Save all as HAR)")]
    BadHar { file: PathBuf, why: String },
    /// One entry or line that cannot be replayed.
    #[error("--replay {file}: {at}: {why}: {fix}")]
    Bad {
        file: PathBuf,
        /// `line 12` or `entry 3`.
        at: String,
        why: String,
        fix: String,
    },
    /// A vegeta targets file's fault, as its parser words it (`FILE:LINE: ...`).
    #[error("--replay {0}")]
    Vegeta(crate::request_list::ListError),
    /// Nothing left to send once the safety rules applied.
    #[error("--replay {file}: every request would be skipped ({why}): add --allow-writes to send state-changing methods, or replay a recording with GET requests")]
    AllSkipped { file: PathBuf, why: String },
    /// Nothing recorded at all.
    #[error("--replay {file}: no requests in it: record some traffic first")]
    Empty { file: PathBuf },
    /// A `--route` template that cannot be used.
    #[error("--route '{template}': {why} (write a path with {{name}} segments, e.g. /users/{{id}}/posts)")]
    BadRoute { template: String, why: String },
}

impl iolab_model::HasExitKind for ReplayError {
    /// A recording that cannot be replayed: the user's to fix, nothing sent.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

impl ReplayError {
    /// A bad line or entry of `file` with its fix.
    pub fn bad(file: &std::path::Path, at: String, why: impl Into<String>, fix: &str) -> Self {
        ReplayError::Bad {
            file: file.to_path_buf(),
            at,
            why: why.into(),
            fix: fix.into(),
        }
    }
}
