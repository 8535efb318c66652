//! The server's reflection service (`grpc.reflection.v1`, else
//! `v1alpha`): the file that defines a service and the files it imports,
//! asked for before the run when no `--proto` is given.
//!
//! The service's messages are declared here with prost's derive, only
//! the fields iolab asks and reads (field numbers of reflection.proto);
//! the call is one request message per stream, half-closed at once.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use prost_reflect::DescriptorPool;
use prost_types::{FileDescriptorProto, FileDescriptorSet};

use crate::endpoint::Endpoint;
use crate::h2::head::{Head, HeadError};
use crate::h2::H2Error;
use crate::tls::Tls;

/// The server's reflection could not give a method's types; each names
/// the host and the way out (`--proto FILE`).
#[derive(Debug, thiserror::Error)]
pub enum ReflectionError {
    /// No event loop for the calls.
    #[error("cannot build an event loop: {0}")]
    EventLoop(std::io::Error),
    /// All of it took too long.
    #[error(
        "{host}'s reflection did not give {service}'s files within {}: give --proto FILE",
        iolab_model::format_duration(REFLECTION_WAIT)
    )]
    Slow {
        /// The host.
        host: String,
        /// The service asked.
        service: String,
    },
    /// Imports past [`MAX_FILES`].
    #[error("the server's reflection named over {MAX_FILES} files for {0}: give --proto FILE")]
    TooManyFiles(String),
    /// The files do not make a pool.
    #[error(
        "the server's reflection gave files that do not fit together ({0}): give --proto FILE"
    )]
    Unfit(String),
    /// Neither version of the service.
    #[error("{0} offers no reflection (grpc.reflection.v1 or v1alpha): give the service's .proto with --proto FILE")]
    None(String),
    /// One call took too long.
    #[error("{0}'s reflection did not answer within {CALL_WAIT:?}: give --proto FILE")]
    NoAnswer(String),
    /// A grpc-status other than OK or UNIMPLEMENTED.
    #[error("{host}'s reflection failed ({status}): give --proto FILE")]
    Failed {
        /// The host.
        host: String,
        /// The status's name.
        status: String,
    },
    /// An HTTP answer without grpc-status.
    #[error("{host} answered the reflection call with HTTP {status} and no grpc-status: give --proto FILE")]
    NotGrpc {
        /// The host.
        host: String,
        /// The HTTP status.
        status: u16,
    },
    /// The answer's framing.
    #[error(transparent)]
    Frame(#[from] super::FrameError),
    /// An answer that does not decode.
    #[error("{host}'s reflection answer does not decode ({why})")]
    Answer {
        /// The host.
        host: String,
        /// The decoder's word.
        why: prost::DecodeError,
    },
    /// A file that does not decode.
    #[error("{host}'s reflection sent a file that does not decode ({why})")]
    File {
        /// The host.
        host: String,
        /// The decoder's word.
        why: prost::DecodeError,
    },
    /// The server does not know what was asked.
    #[error("{host}'s reflection does not know {asked} ({message}, code {code}): check --call, or give --proto FILE")]
    Unknown {
        /// The host.
        host: String,
        /// What was asked.
        asked: String,
        /// Its message, printable.
        message: String,
        /// Its code.
        code: i32,
    },
    /// The call's request.
    #[error(transparent)]
    Head(#[from] HeadError),
    /// The call's HTTP/2.
    #[error(transparent)]
    H2(#[from] H2Error),
}

/// How long one reflection call may take.
const CALL_WAIT: Duration = Duration::from_secs(5);
/// How long all of them may take: a server answering each file slowly
/// cannot hold the run back for MAX_FILES x CALL_WAIT (issue 49, finding 7).
const REFLECTION_WAIT: Duration = Duration::from_secs(30);
/// Most files asked for one service (imports included): calls, not
/// distinct names, so a server that answers each call with a new import
/// under an old name is stopped too.
const MAX_FILES: usize = 500;
/// gRPC's UNIMPLEMENTED: the server has no such service.
const UNIMPLEMENTED: u32 = 12;

#[derive(Clone, PartialEq, Message)]
struct Request {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(oneof = "Ask", tags = "3, 4")]
    ask: Option<Ask>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Ask {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
}

#[derive(Clone, PartialEq, Message)]
struct Response {
    #[prost(oneof = "Answer", tags = "4, 7")]
    answer: Option<Answer>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Answer {
    #[prost(message, tag = "4")]
    Files(Files),
    #[prost(message, tag = "7")]
    Error(Refusal),
}

#[derive(Clone, PartialEq, Message)]
struct Files {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct Refusal {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// The reflection services, newest first.
const SERVICES: [&str; 2] = [
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// The files that define `service` and everything they import, as a pool;
/// each call carries the run's `metadata` (a server may want its token).
pub fn pool(
    target: &Endpoint,
    addr: SocketAddr,
    tls: Option<&Tls>,
    service: &str,
    metadata: &[(String, String)],
) -> Result<DescriptorPool, ReflectionError> {
    let at = Where {
        target,
        addr,
        tls,
        metadata,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ReflectionError::EventLoop)?;
    let within = async { tokio::time::timeout(REFLECTION_WAIT, fetch(&at, service)).await };
    rt.block_on(within).unwrap_or_else(|_| {
        Err(ReflectionError::Slow {
            host: target.host.clone(),
            service: service.to_string(),
        })
    })
}

/// [`pool`]'s calls: the file defining `service`, then each import not
/// yet asked, at most [`MAX_FILES`] calls.
async fn fetch(at: &Where<'_>, service: &str) -> Result<DescriptorPool, ReflectionError> {
    let ask = |a: Ask| Request {
        host: String::new(),
        ask: Some(a),
    };
    let (path, first) = versions(at, ask(Ask::FileContainingSymbol(service.into()))).await?;
    let mut files: BTreeMap<String, FileDescriptorProto> = BTreeMap::new();
    let mut asked = BTreeSet::new();
    let mut todo = first;
    loop {
        for f in todo.drain(..) {
            files.insert(f.name().to_string(), f);
        }
        let missing: Vec<String> = files
            .values()
            .flat_map(|f| f.dependency.iter())
            .filter(|d| !files.contains_key(*d) && !asked.contains(*d))
            .cloned()
            .collect();
        let Some(next) = missing.into_iter().next() else {
            break;
        };
        if asked.len() >= MAX_FILES {
            return Err(ReflectionError::TooManyFiles(service.to_string()));
        }
        asked.insert(next.clone());
        let file = ask(Ask::FileByFilename(next));
        todo = call(at, path, file).await?.unwrap_or_default();
    }
    let set = FileDescriptorSet {
        file: in_import_order(files),
    };
    DescriptorPool::from_file_descriptor_set(set)
        .map_err(|e| ReflectionError::Unfit(super::printable(&e.to_string())))
}

/// Ask the newest reflection service the server offers; the path that answered.
async fn versions(
    at: &Where<'_>,
    req: Request,
) -> Result<(&'static str, Vec<FileDescriptorProto>), ReflectionError> {
    for path in SERVICES {
        if let Some(files) = call(at, path, req.clone()).await? {
            return Ok((path, files));
        }
    }
    Err(ReflectionError::None(at.target.host.clone()))
}

/// The server asked, and what every call carries.
struct Where<'a> {
    target: &'a Endpoint,
    addr: SocketAddr,
    tls: Option<&'a Tls>,
    metadata: &'a [(String, String)],
}

/// One reflection call: the files in its answer; `None` when the server
/// does not implement this version of the service.
async fn call(
    at: &Where<'_>,
    path: &str,
    req: Request,
) -> Result<Option<Vec<FileDescriptorProto>>, ReflectionError> {
    let asked = match &req.ask {
        // A file name to ask comes from the server's own imports.
        Some(Ask::FileByFilename(f)) => format!("file {}", super::printable(f)),
        Some(Ask::FileContainingSymbol(s)) => s.clone(),
        None => "it".into(),
    };
    let target = at.target;
    let head = Head::grpc(target, path, at.metadata, &req.encode_to_vec(), CALL_WAIT)?;
    let answer = tokio::time::timeout(CALL_WAIT, crate::h2::call(at.addr, at.tls, &head))
        .await
        .map_err(|_| ReflectionError::NoAnswer(target.host.clone()))??;
    match answer.grpc_status {
        Some(0) => {}
        Some(UNIMPLEMENTED) => return Ok(None),
        Some(code) => {
            return Err(ReflectionError::Failed {
                host: target.host.clone(),
                status: iolab_model::error_class::grpc_status(code),
            })
        }
        None => {
            return Err(ReflectionError::NotGrpc {
                host: target.host.clone(),
                status: answer.status,
            })
        }
    }
    let mut files = Vec::new();
    for m in super::messages(&answer.body)? {
        let r =
            Response::decode(Bytes::copy_from_slice(m)).map_err(|why| ReflectionError::Answer {
                host: target.host.clone(),
                why,
            })?;
        match r.answer {
            Some(Answer::Files(f)) => {
                for bytes in f.file_descriptor_proto {
                    files.push(FileDescriptorProto::decode(&bytes[..]).map_err(|why| {
                        ReflectionError::File {
                            host: target.host.clone(),
                            why,
                        }
                    })?);
                }
            }
            Some(Answer::Error(e)) => {
                return Err(ReflectionError::Unknown {
                    host: target.host.clone(),
                    asked,
                    message: super::printable(&e.error_message),
                    code: e.error_code,
                })
            }
            None => {}
        }
    }
    Ok(Some(files))
}

/// Files ordered so that each comes after the files it imports.
fn in_import_order(mut files: BTreeMap<String, FileDescriptorProto>) -> Vec<FileDescriptorProto> {
    let mut out: Vec<FileDescriptorProto> = Vec::new();
    while !files.is_empty() {
        let ready: Vec<String> = files
            .iter()
            .filter(|(_, f)| f.dependency.iter().all(|d| !files.contains_key(d)))
            .map(|(n, _)| n.clone())
            .collect();
        // An import cycle: take the rest as they are and let the pool say.
        let take = if ready.is_empty() {
            files.keys().cloned().collect()
        } else {
            ready
        };
        for name in take {
            if let Some(f) = files.remove(&name) {
                out.push(f);
            }
        }
    }
    out
}
