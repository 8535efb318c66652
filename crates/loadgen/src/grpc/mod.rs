//! gRPC unary calls, made ready before the run: the method's types from
//! `.proto` files (compiled in process by `protox`) or from the server's
//! reflection service ([`reflection`]), the `--data` JSON turned into the
//! request message by `prost-reflect`, and the call's HTTP/2 request built
//! once ([`Head::grpc`]). Every fault is one line naming it and the fix,
//! found before any load.

mod reflection;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use iolab_model::protocol::GrpcCall;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};

use crate::endpoint::Endpoint;
use crate::h2::head::Head;
use crate::tls::Tls;

/// The call's request, ready to send: its types found, its message encoded.
pub fn prepare(
    call: &GrpcCall,
    target: &Endpoint,
    addr: SocketAddr,
    tls: Option<&Tls>,
    metadata: &[(String, String)],
    timeout: Duration,
) -> Result<Head, String> {
    let (service, method) = call.split()?;
    let pool = match call.protos.is_empty() {
        true => reflection::pool(target, addr, tls, service)?,
        false => compile(&call.protos)?,
    };
    let m = find(&pool, service, method, !call.protos.is_empty())?;
    let message = encode(&m, &call.data)?;
    Head::grpc(target, &call.path()?, metadata, &message, timeout)
}

/// Compile `.proto` files, each file's folder on the import path.
pub fn compile(files: &[PathBuf]) -> Result<DescriptorPool, String> {
    let mut includes: Vec<&Path> = Vec::new();
    for f in files {
        let dir = f.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !includes.contains(&dir) {
            includes.push(dir);
        }
    }
    let set = protox::compile(files, &includes)
        .map_err(|e| format!("--proto: {}", one_line(&e.to_string())))?;
    DescriptorPool::from_file_descriptor_set(set)
        .map_err(|e| format!("--proto: {}", one_line(&e.to_string())))
}

/// The method `service/method` of `pool`, unary; the error names what the
/// pool does define.
pub fn find(
    pool: &DescriptorPool,
    service: &str,
    method: &str,
    from_files: bool,
) -> Result<MethodDescriptor, String> {
    let source = if from_files { "the --proto files define" } else { "the server's reflection lists" };
    let s = pool.get_service_by_name(service).ok_or_else(|| {
        let names: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        format!(
            "--call: no service '{service}' ({source} {}): give package.Service/Method",
            list(&names)
        )
    })?;
    let m = s.methods().find(|m| m.name() == method).ok_or_else(|| {
        let names: Vec<String> = s.methods().map(|m| m.name().to_string()).collect();
        format!("--call: {service} has no method '{method}' (it has {})", list(&names))
    })?;
    if m.is_client_streaming() || m.is_server_streaming() {
        return Err(format!(
            "--call: {service}/{method} streams; iolab calls unary methods (one request, one answer)"
        ));
    }
    Ok(m)
}

/// `--data` as the method's request message, encoded.
pub fn encode(m: &MethodDescriptor, data: &str) -> Result<Vec<u8>, String> {
    let input = m.input();
    let mut json = serde_json::Deserializer::from_str(data);
    let message = DynamicMessage::deserialize(input.clone(), &mut json)
        .and_then(|msg| json.end().map(|()| msg))
        .map_err(|e| {
            format!(
                "--data does not fit {} ({}): give its fields as JSON, e.g. --data '{{\"name\":\"x\"}}'",
                input.full_name(),
                one_line(&e.to_string())
            )
        })?;
    Ok(message.encode_to_vec())
}

fn list(names: &[String]) -> String {
    match names.is_empty() {
        true => "none".into(),
        false => names.join(", "),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The messages of a gRPC body: 5-byte prefixes (compressed flag, length)
/// each followed by a message; the error names the fault.
pub fn messages(mut body: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut out = Vec::new();
    while !body.is_empty() {
        if body.len() < 5 {
            return Err("a gRPC message prefix was cut short".into());
        }
        if body[0] != 0 {
            return Err("a gRPC message came compressed (iolab asks for none)".into());
        }
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let rest = &body[5..];
        if rest.len() < len {
            return Err("a gRPC message was cut short".into());
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
