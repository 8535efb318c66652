//! Why an attack could not start ([`AttackError`]) and why a generator
//! thread could not run ([`ThreadError`]); a leaf every part of the
//! generator may return them from.

use std::io;

use iolab_model::{ExitKind, HasExitKind};

/// Why an attack could not start. Failures of requests are never errors.
#[derive(Debug, thiserror::Error)]
pub enum AttackError {
    /// The plan is unusable (bad URL, rate <= 0, empty phases, ...).
    #[error("{0}")]
    Invalid(String),
    /// Setting up failed (an engine the kernel or the protocol refuses).
    #[error("{0}")]
    Setup(String),
    /// The URL cannot be attacked.
    #[error(transparent)]
    Url(#[from] crate::endpoint::UrlError),
    /// A request of the plan cannot be rendered.
    #[error(transparent)]
    Wire(#[from] crate::wire::WireError),
    /// The host resolves to nothing.
    #[error(transparent)]
    Resolve(#[from] crate::endpoint::ResolveError),
    /// `--source-addrs` cannot reach the target.
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    /// TLS cannot be used against the target.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// A request HTTP/2 cannot carry.
    #[error(transparent)]
    Head(#[from] crate::h2::HeadError),
    /// The server cannot be sent HTTP/2.
    #[error(transparent)]
    Http2(#[from] crate::h2::H2Error),
    /// The gRPC call cannot be made.
    #[error(transparent)]
    Grpc(#[from] crate::grpc::GrpcError),
    /// A protocol setting (`--streams`, `--call`).
    #[error(transparent)]
    Protocol(#[from] iolab_model::protocol::ProtocolError),
    /// A replayed mix that does not fit its requests.
    #[error(transparent)]
    Mix(#[from] iolab_model::replay::MixError),
    /// A shard that would send nothing, or a start that cannot be meant.
    #[error(transparent)]
    Shard(#[from] crate::shard::ShardError),
    /// A generator thread could not run.
    #[error(transparent)]
    Thread(#[from] ThreadError),
}

impl HasExitKind for AttackError {
    /// All of these are found before any load and name a fix the user
    /// makes (the URL, a flag, the target, `--engine`, `--cpus`), exit 2
    /// as they always were; a thread that cannot start or whose loop
    /// breaks is the machine's failure, not the input's.
    fn exit_kind(&self) -> ExitKind {
        match self {
            AttackError::Thread(ThreadError::Spawn(_) | ThreadError::Panicked) => ExitKind::Failed,
            _ => ExitKind::BadInput,
        }
    }
}

/// Why a generator thread could not run its share.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    /// `--cpus` names a CPU this process may not run on.
    #[error("cannot pin to CPU {cpu}: {why}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// What the kernel said.
        why: io::Error,
    },
    /// `--engine io_uring`, and this thread's ring was refused.
    #[error("cannot set up io_uring: {0}; use --engine epoll")]
    Ring(io::Error),
    /// No event loop.
    #[error("cannot build an event loop: {0}")]
    EventLoop(io::Error),
    /// The epoll engine's loop failed.
    #[error("generator event loop failed: {0}")]
    Epoll(io::Error),
    /// The io_uring engine's loop failed.
    #[error("io_uring event loop failed: {0}")]
    Uring(io::Error),
    /// The thread could not be started.
    #[error("cannot start a generator thread: {0}")]
    Spawn(io::Error),
    /// The thread panicked.
    #[error("a generator thread panicked")]
    Panicked,
}
