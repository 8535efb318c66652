//! Why a target cannot be used, built or started ([`TargetError`]), and
//! why the runtime folders built into the binary cannot be had
//! ([`EmbedError`]); one line naming the fault and the fix.

use std::io;
use std::path::PathBuf;

use iolab_model::{ExitKind, HasExitKind, KnobError};

/// Why a target cannot be used, built or started.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// No runtime folder of that name.
    #[error("unknown runtime '{runtime}': no {} (runtimes here: rust, {here})", path.display())]
    UnknownRuntime {
        /// The name asked.
        runtime: String,
        /// The manifest looked for.
        path: PathBuf,
        /// The runtimes there are, comma separated.
        here: String,
    },
    /// A manifest that cannot be read.
    #[error("{}: {why}", path.display())]
    Read {
        /// The manifest.
        path: PathBuf,
        /// The OS's word.
        why: io::Error,
    },
    /// A manifest past its size cap.
    #[error("{}: larger than {max} bytes", path.display())]
    TooLarge {
        /// The manifest.
        path: PathBuf,
        /// The cap.
        max: u64,
    },
    /// A manifest that is not its TOML, or says something impossible.
    #[error("{}: {why}", path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong, on one line.
        why: String,
    },
    /// `IOLAB_ROOT` names no checkout.
    #[error("IOLAB_ROOT={} holds no {marker}: point it at the iolab repository", root.display())]
    Root {
        /// As set.
        root: PathBuf,
        /// The file a checkout holds.
        marker: &'static str,
    },
    /// The built-in runtime folders cannot be had.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// The runtime has no target of this model.
    #[error("model '{model}' has no {runtime} target (runtime {runtime} serves: {serves})")]
    NoModel {
        /// The model.
        model: String,
        /// The runtime.
        runtime: String,
        /// Its models, comma separated.
        serves: String,
    },
    /// A knob the runtime's model does not read.
    #[error("{knob} does not apply to {runtime} model '{model}' (it reads: {reads}): remove it")]
    KnobNotRead {
        /// The knob.
        knob: &'static str,
        /// The runtime.
        runtime: String,
        /// The model.
        model: String,
        /// The knobs it reads.
        reads: String,
    },
    /// An option the runtime does not have.
    #[error("{option} is not an option of runtime {runtime}: remove it")]
    NotOption {
        /// The option.
        option: String,
        /// The runtime.
        runtime: String,
    },
    /// An option that does not apply to the model.
    #[error("{option} does not apply to {runtime} model '{model}' (it applies to: {applies}): remove it")]
    OptionNotApplied {
        /// The option.
        option: String,
        /// The runtime.
        runtime: String,
        /// The model.
        model: String,
        /// The models it applies to.
        applies: String,
    },
    /// An option given to a built-in model.
    #[error("{0} is an option of a runtime folder, not of the built-in models: give its runtime or remove it")]
    OptionBuiltIn(String),
    /// A model the built-in runtime does not have.
    #[error("'{0}' is not a built-in model: give runtime = \"...\" (a folder under runtimes/, e.g. jvm, python)")]
    NotBuiltIn(String),
    /// A backend the runtime has no client for.
    #[error("runtime {runtime} has no client for '{kind}' steps (it calls: {calls}): use another runtime or other steps")]
    NoClient {
        /// The runtime.
        runtime: String,
        /// The backend.
        kind: String,
        /// The backends it calls.
        calls: String,
    },
    /// A held kind the runtime does not serve.
    #[error("runtime {runtime} does not serve held connections of kind '{kind}' ({route}; its runtime.toml says held = {held}): use another runtime, or add {route} to it and \"{kind}\" to its held list")]
    NoHeld {
        /// The runtime.
        runtime: String,
        /// The held kind.
        kind: &'static str,
        /// Its route.
        route: &'static str,
        /// The manifest's held list, as Rust writes a list.
        held: String,
    },
    /// An HTTP run on a batch runtime.
    #[error("runtime {0} runs batches (kind = \"batch\"), not HTTP targets")]
    RunsBatches(String),
    /// A batch on an HTTP runtime.
    #[error("runtime {0} serves HTTP targets, not batches: run the batch in process (no runtime) or on a batch runtime")]
    ServesHttp(String),
    /// A knob out of range.
    #[error(transparent)]
    Knob(#[from] KnobError),
    /// One run of the plan cannot use its target.
    #[error("run '{run}': {why}")]
    Run {
        /// The run.
        run: String,
        /// Why.
        why: Box<TargetError>,
    },
    /// The build could not start.
    #[error("cannot build runtime {runtime} ({program}): {why}")]
    BuildStart {
        /// The runtime.
        runtime: String,
        /// The build's program.
        program: String,
        /// The OS's word.
        why: io::Error,
    },
    /// The build failed.
    #[error("building runtime {runtime} failed ({command}: {status}); see its output above")]
    BuildFailed {
        /// The runtime.
        runtime: String,
        /// The build command.
        command: String,
        /// How it ended.
        status: String,
    },
    /// No free port for `{port}`.
    #[error("no free port for {{port}}: {0}")]
    NoPort(io::Error),
    /// The batch spec could not be written.
    #[error("cannot write the batch spec: {0}")]
    BatchSpec(io::Error),
    /// The target's process could not start.
    #[error(transparent)]
    Start(#[from] super::child::StartError),
    /// The batch runner's output could not be read.
    #[error("cannot read the batch runner's output: {0}")]
    Output(io::Error),
    /// The reader thread of the batch runner's output died.
    #[error("the batch runner's reader failed")]
    Reader,
    /// The batch runner has no stdout.
    #[error("no stdout")]
    NoStdout,
    /// The batch runner failed.
    #[error("runtime {runtime}'s batch runner failed ({status})")]
    BatchFailed {
        /// The runtime.
        runtime: String,
        /// How it ended.
        status: String,
    },
    /// The batch runner printed no document.
    #[error("runtime {runtime}'s batch runner printed no iolab.batch/1 document: {why}")]
    NoDocument {
        /// The runtime.
        runtime: String,
        /// The parser's word.
        why: serde_json::Error,
    },
    /// The batch runner's document has no run.
    #[error("runtime {0}'s batch runner printed no run")]
    NoRun(String),
    /// The signal handlers could not be installed.
    #[error("cannot watch SIGINT/SIGTERM: {0}")]
    Signals(io::Error),
    /// The target command is empty.
    #[error("empty target command")]
    EmptyCommand,
    /// The target's program could not be started.
    #[error("cannot start '{program}': {why}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS's word.
        why: io::Error,
    },
    /// Waiting for the target failed.
    #[error("{0}")]
    Wait(io::Error),
}

impl HasExitKind for TargetError {
    /// Found before any run is measured, and the user's to fix (the
    /// runtime folder, its toolchain, the model, knobs and options): exit
    /// 2, as the runner always said. A batch runner that fails during a
    /// run is that run's outcome (data), never this exit.
    fn exit_kind(&self) -> ExitKind {
        ExitKind::BadInput
    }
}

/// Why the runtime folders built into the binary cannot be had (kept for
/// the process: cloned to each asker).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// Nowhere to unpack them.
    #[error("cannot find the runtime folders: no iolab checkout here and no cache folder (set HOME or IOLAB_CACHE, or IOLAB_ROOT to a checkout)")]
    NoCache,
    /// The cache folder has no parent.
    #[error("the cache folder has no parent")]
    NoParent,
    /// A file could not be written.
    #[error("cannot unpack the runtime folders into {}: {}: {why} (set IOLAB_CACHE to a writable folder, or IOLAB_ROOT to a checkout)", dir.display(), what.display())]
    Unpack {
        /// The folder unpacked into.
        dir: PathBuf,
        /// The file or folder that failed.
        what: PathBuf,
        /// The OS's word (kept as text: the error is cloned).
        why: String,
    },
}
