//! gRPC unary calls, made ready before the run: the method's types from
//! `.proto` files (compiled in process by `protox`) or from the server's
//! reflection service ([`reflection`]), the `--data` JSON turned into the
//! request message by `prost-reflect`, and the call's HTTP/2 request built
//! once ([`Head::grpc`]). The run then sends it as any HTTP/2 request; its
//! answer's `grpc-status` is read in [`crate::h2::exchange`]. Every fault
//! of the call is one line naming it and the fix, found before any load.
//! Streaming calls (`--hold`) are held streams: [`stream`].

mod error;
mod protos;
mod reflection;
pub(crate) mod stream;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use iolab_model::attack::AttackPlan;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};

use crate::endpoint::Endpoint;
use crate::h2::head::Head;
use crate::h2::Requests;
use crate::tls::Tls;

pub use error::{FrameError, GrpcError};

/// Check what needs no socket: a gRPC call goes to a `grpc[s]://` URL
/// naming host and port, with metadata (`-H`) but no HTTP method or body;
/// with `--proto` files, the method is found and `--data` fits it.
pub fn check(plan: &AttackPlan, target: &Endpoint) -> Result<(), GrpcError> {
    let call = match (&plan.request.protocol.grpc, target.grpc) {
        (None, false) => return Ok(()),
        (None, true) => return Err(GrpcError::NoCall(plan.target.clone())),
        (Some(_), false) => return Err(GrpcError::NotGrpcUrl(plan.target.clone())),
        (Some(call), true) => call,
    };
    if target.path != "/" {
        return Err(GrpcError::Path(plan.target.clone()));
    }
    metadata(plan)?;
    if !call.protos.is_empty() {
        let (service, method) = call.split()?;
        let m = find(&compile(&call.protos)?, service, method, true)?;
        encode(&m, &call.data)?;
    }
    Ok(())
}

/// The call's request, ready to send: its types found (from `--proto`, or
/// asked of the server at `addr`), its message encoded, its deadline the
/// plan's timeout.
pub fn requests(
    plan: &AttackPlan,
    target: &Endpoint,
    addr: SocketAddr,
    tls: Option<&Tls>,
) -> Result<Option<Requests>, GrpcError> {
    let Some(call) = &plan.request.protocol.grpc else {
        return Ok(None);
    };
    let (service, method) = call.split()?;
    let metadata = metadata(plan)?;
    let pool = match call.protos.is_empty() {
        true => reflection::pool(target, addr, tls, service, metadata)?,
        false => compile(&call.protos)?,
    };
    let m = find(&pool, service, method, !call.protos.is_empty())?;
    let message = encode(&m, &call.data)?;
    let head = Head::grpc(target, &call.path()?, metadata, &message, plan.timeout)?;
    Ok(Some(Requests {
        heads: vec![head],
        streams: plan.request.protocol.streams_per_connection(),
        grpc_method: Some(format!("{service}/{method}")),
    }))
}

/// The call's metadata: the `-H` headers of the plan's one request, which
/// must carry no HTTP method or body of its own.
fn metadata(plan: &AttackPlan) -> Result<&[(String, String)], GrpcError> {
    match plan.request.list.as_slice() {
        [] => Ok(&[]),
        [one] if one.method == "GET" && one.body.is_empty() && one.url == plan.target => {
            Ok(&one.headers)
        }
        _ => Err(GrpcError::NotHttp),
    }
}

/// Compile `.proto` files, each file's folder on the import path.
pub fn compile(files: &[PathBuf]) -> Result<DescriptorPool, GrpcError> {
    let mut includes: Vec<&Path> = Vec::new();
    for f in files {
        let dir = f
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !includes.contains(&dir) {
            includes.push(dir);
        }
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let fault = |e: String| GrpcError::Proto {
        files: names.join(" "),
        why: one_line(&e),
    };
    let mut compiler = protos::compiler(&includes);
    compiler
        .open_files(files)
        .map_err(|e| fault(e.to_string()))?;
    let set = compiler.file_descriptor_set();
    DescriptorPool::from_file_descriptor_set(set).map_err(|e| fault(e.to_string()))
}

/// The method `service/method` of `pool`, unary; the error names what the
/// pool does define, and a streaming method's fix (`--hold`).
pub fn find(
    pool: &DescriptorPool,
    service: &str,
    method: &str,
    from_files: bool,
) -> Result<MethodDescriptor, GrpcError> {
    let m = lookup(pool, service, method, from_files)?;
    if m.is_client_streaming() || m.is_server_streaming() {
        return Err(GrpcError::Streaming {
            service: service.to_string(),
            method: method.to_string(),
            shape: shape(&m),
        });
    }
    Ok(m)
}

/// `unary`, `server-streaming`, `client-streaming` or `bidirectional`.
pub fn shape(m: &MethodDescriptor) -> &'static str {
    match (m.is_client_streaming(), m.is_server_streaming()) {
        (false, false) => "unary",
        (false, true) => "server-streaming",
        (true, false) => "client-streaming",
        (true, true) => "bidirectional",
    }
}

/// The method `service/method` of `pool`, of any shape.
fn lookup(
    pool: &DescriptorPool,
    service: &str,
    method: &str,
    from_files: bool,
) -> Result<MethodDescriptor, GrpcError> {
    let from = match from_files {
        true => "the --proto files define",
        false => "the server's reflection lists",
    };
    let s = pool.get_service_by_name(service).ok_or_else(|| {
        let names: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        GrpcError::NoService {
            service: service.to_string(),
            from,
            names: list(&names),
        }
    })?;
    let m = s.methods().find(|m| m.name() == method).ok_or_else(|| {
        let names: Vec<String> = s.methods().map(|m| m.name().to_string()).collect();
        GrpcError::NoMethod {
            service: service.to_string(),
            method: method.to_string(),
            names: list(&names),
        }
    })?;
    Ok(m)
}

/// `--data` as the method's request message, encoded.
pub fn encode(m: &MethodDescriptor, data: &str) -> Result<Vec<u8>, GrpcError> {
    let input = m.input();
    let mut json = serde_json::Deserializer::from_str(data);
    let message = DynamicMessage::deserialize(input.clone(), &mut json)
        .and_then(|msg| json.end().map(|()| msg))
        .map_err(|e| GrpcError::Data {
            message: input.full_name().to_string(),
            why: one_line(&e.to_string()),
        })?;
    Ok(message.encode_to_vec())
}

/// Names for a message; they may come from the server's reflection.
fn list(names: &[String]) -> String {
    match names.is_empty() {
        true => "none".into(),
        false => printable(&names.join(", ")),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A server's text made fit for one line (issue 49 finding 12): the one
/// rule for all outside text, [`iolab_model::text::printable`].
pub fn printable(s: &str) -> String {
    iolab_model::text::printable(s)
}

/// The messages of a gRPC body: 5-byte prefixes (compressed flag, length)
/// each followed by a message; the error names the fault.
pub fn messages(mut body: &[u8]) -> Result<Vec<&[u8]>, FrameError> {
    let mut out = Vec::new();
    while !body.is_empty() {
        if body.len() < 5 {
            return Err(FrameError::CutPrefix);
        }
        if body[0] != 0 {
            return Err(FrameError::Compressed);
        }
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let rest = &body[5..];
        if rest.len() < len {
            return Err(FrameError::Cut);
        }
        out.push(&rest[..len]);
        body = &rest[len..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_split_into_messages_and_refuse_what_is_cut() {
        let body = b"\0\0\0\0\x02ab\0\0\0\0\0";
        assert_eq!(messages(body).unwrap(), vec![&b"ab"[..], &b""[..]]);
        assert!(messages(b"\0\0\0\0\x05ab").is_err());
        assert!(messages(b"\x01\0\0\0\0").is_err());
        assert!(messages(b"\0\0").is_err());
    }
}
