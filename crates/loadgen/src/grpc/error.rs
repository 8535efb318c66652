//! Why a gRPC call cannot be made ready before the run ([`GrpcError`]),
//! and why a gRPC body does not split into messages ([`FrameError`]).

use iolab_model::protocol::ProtocolError;

use super::reflection::ReflectionError;
use crate::h2::HeadError;

/// A gRPC call that cannot be made; one line naming the fault and the fix.
#[derive(Debug, thiserror::Error)]
pub enum GrpcError {
    /// A `grpc://` URL without `--call`.
    #[error("{0}: name the method to call with --call package.Service/Method")]
    NoCall(String),
    /// `--call` beside an `http(s)://` URL.
    #[error(
        "--call needs a grpc:// (h2c) or grpcs:// (TLS) URL, not {0}: e.g. grpc://127.0.0.1:50051"
    )]
    NotGrpcUrl(String),
    /// A gRPC URL with a path.
    #[error("{0}: a gRPC URL names host and port only; the method goes in --call")]
    Path(String),
    /// An HTTP method, body or more requests beside a call.
    #[error("-m, --body and --targets do not apply to a gRPC call: --data gives its request message, -H its metadata")]
    NotHttp,
    /// `--call`'s form.
    #[error(transparent)]
    Call(#[from] ProtocolError),
    /// `.proto` files that do not compile.
    #[error("--proto {files}: {why}: fix the file")]
    Proto {
        /// The files, as given.
        files: String,
        /// The compiler's message, on one line.
        why: String,
    },
    /// A streaming method called as unary.
    #[error("--call: {service}/{method} is {shape}: hold each call with --hold D (and --connections N, --rate R)")]
    Streaming {
        /// The service.
        service: String,
        /// The method.
        method: String,
        /// Its shape ([`super::shape`]).
        shape: &'static str,
    },
    /// No such service.
    #[error("--call: no service '{service}' ({from} {names}): give package.Service/Method")]
    NoService {
        /// The service asked.
        service: String,
        /// Where the names come from.
        from: &'static str,
        /// The services there are.
        names: String,
    },
    /// No such method.
    #[error("--call: {service} has no method '{method}' (it has {names})")]
    NoMethod {
        /// The service.
        service: String,
        /// The method asked.
        method: String,
        /// The methods there are.
        names: String,
    },
    /// `--data` is not the request message.
    #[error("--data does not fit {message} ({why}): give its fields as JSON, e.g. --data '{{\"name\":\"x\"}}'")]
    Data {
        /// The request message's type.
        message: String,
        /// What the decoder said, on one line.
        why: String,
    },
    /// The request cannot be carried.
    #[error(transparent)]
    Head(#[from] HeadError),
    /// The server's reflection could not give the types.
    #[error(transparent)]
    Reflection(#[from] ReflectionError),
}

/// A gRPC body that does not split into messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Fewer than 5 bytes of prefix.
    #[error("a gRPC message prefix was cut short")]
    CutPrefix,
    /// The compressed flag set.
    #[error("a gRPC message came compressed (iolab asks for none)")]
    Compressed,
    /// Fewer bytes than the prefix says.
    #[error("a gRPC message was cut short")]
    Cut,
}
