//! A streaming call made ready before the run: its method found (from
//! `--proto`, else the server's reflection) and its shape checked, its
//! `--data` message encoded, and the fields its messages are numbered
//! and stamped by.

use prost::Message;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, Value};

use bytes::Bytes;
use iolab_model::attack::HeldPlan;

use crate::grpc::GrpcError;
use crate::h2::head::Head;
use crate::held::conn::Target;
use crate::held::HeldError;

/// The field a message's sequence number is read from (and, for a
/// bidirectional call, written to).
pub const SEQ_FIELD: &str = "seq";
/// The field a pushed message's send time is read from, Unix µs.
pub const STAMP_FIELD: &str = "sent_unix_us";

/// A streaming call, ready before the run.
pub struct Call {
    pub(super) head: Head,
    /// The `--data` message, encoded (unframed).
    pub(super) message: Vec<u8>,
    pub(super) bidi: bool,
    pub(super) output: MessageDescriptor,
    /// The reply's `seq` and `sent_unix_us` fields, when it has them.
    pub(super) seq_out: Option<FieldDescriptor>,
    pub(super) stamp: Option<FieldDescriptor>,
    /// Bidirectional, both messages numbered: the request and its field.
    pub(super) seq_in: Option<(DynamicMessage, FieldDescriptor)>,
}

/// Check what needs no socket: a method, and (with `--proto`) its shape.
pub fn check(plan: &HeldPlan) -> Result<(), HeldError> {
    let call = plan.grpc.as_ref().ok_or_else(|| {
        HeldError::Plan("a gRPC stream needs --call package.Service/Method".into())
    })?;
    let (service, method) = call.split().map_err(GrpcError::from)?;
    if !call.protos.is_empty() {
        let pool = crate::grpc::compile(&call.protos)?;
        let m = crate::grpc::lookup(&pool, service, method, true)?;
        shape_fits(plan, &m)?;
        crate::grpc::encode(&m, &call.data)?;
    }
    Ok(())
}

/// A unary or client-streaming method, or `--message-rate` on a
/// server-streaming one, is refused in one line.
fn shape_fits(plan: &HeldPlan, m: &prost_reflect::MethodDescriptor) -> Result<(), HeldError> {
    let name = format!("{}/{}", m.parent_service().full_name(), m.name());
    let why = match (m.is_client_streaming(), m.is_server_streaming()) {
        (false, false) => format!("--hold: {name} is unary: drop --hold and --connections to call it per request (--rate R -d D)"),
        (true, false) => format!("--call: {name} is client-streaming: iolab holds server-streaming and bidirectional calls"),
        (false, true) if plan.message_rate > 0.0 => format!("--message-rate: {name} is server-streaming (the server sets the pace): drop --message-rate"),
        _ => return Ok(()),
    };
    Err(HeldError::Plan(why))
}

impl Call {
    /// The method's types (from `--proto`, else the server's reflection),
    /// its shape checked, its message encoded.
    pub fn prepare(plan: &HeldPlan, target: &Target) -> Result<Call, HeldError> {
        check(plan)?;
        let call = plan.grpc.as_ref().expect("checked above");
        let (service, method) = call.split().map_err(GrpcError::from)?;
        let from_files = !call.protos.is_empty();
        let pool = match from_files {
            true => crate::grpc::compile(&call.protos),
            false => {
                let addr = target
                    .addr
                    .ok_or_else(|| HeldError::Setup("no address".into()))?;
                let meta = &plan.metadata;
                crate::grpc::reflection::pool(&target.endpoint, addr, target.tls(), service, meta)
                    .map_err(GrpcError::from)
            }
        }?;
        let m = crate::grpc::lookup(&pool, service, method, from_files)?;
        shape_fits(plan, &m)?;
        let message = crate::grpc::encode(&m, &call.data)?;
        // The server's deadline outlasts the hold and the wait for the last replies.
        let deadline = plan.hold + plan.timeout * 2;
        let path = call.path().map_err(GrpcError::from)?;
        let head = Head::grpc(&target.endpoint, &path, &plan.metadata, &[], deadline)
            .map_err(GrpcError::from)?;
        let (input, output) = (m.input(), m.output());
        let seq_out = numbered(&output, SEQ_FIELD);
        let bidi = m.is_client_streaming();
        let seq_in = match (bidi, numbered(&input, SEQ_FIELD), &seq_out) {
            (true, Some(f), Some(_)) => Some((
                DynamicMessage::decode(input, &message[..])
                    .map_err(|e| HeldError::Plan(e.to_string()))?,
                f,
            )),
            _ => None,
        };
        Ok(Call {
            head,
            stamp: numbered(&output, STAMP_FIELD),
            seq_out,
            seq_in,
            message,
            bidi,
            output,
        })
    }

    /// The bytes of each message sent, for a bidirectional call.
    pub fn echo_bytes(&self) -> Option<u64> {
        self.bidi.then_some(self.message.len() as u64)
    }

    /// Message `seq`, framed (5-byte prefix): numbered when both messages
    /// carry a `seq` field.
    pub(super) fn framed(&self, seq: u64) -> Bytes {
        let encoded = match &self.seq_in {
            Some((base, field)) => {
                let mut m = base.clone();
                if let Some(v) = value_of(field, seq) {
                    m.set_field(field, v);
                }
                m.encode_to_vec()
            }
            None => self.message.clone(),
        };
        let mut out = Vec::with_capacity(5 + encoded.len());
        out.push(0);
        out.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
        out.extend_from_slice(&encoded);
        Bytes::from(out)
    }
}

/// `desc`'s integer field `name`, if it has one.
fn numbered(desc: &MessageDescriptor, name: &str) -> Option<FieldDescriptor> {
    let f = desc.get_field_by_name(name)?;
    (!f.is_list() && value_of(&f, 0).is_some()).then_some(f)
}

/// `n` as a value of the integer field `f`.
fn value_of(f: &FieldDescriptor, n: u64) -> Option<Value> {
    Some(match f.kind() {
        Kind::Uint64 | Kind::Fixed64 => Value::U64(n),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(n as i64),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(n as u32),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(n as i32),
        _ => return None,
    })
}

/// An integer field's value as `u64` (negative: none).
pub(super) fn read_u64(m: &DynamicMessage, f: &FieldDescriptor) -> Option<u64> {
    match &*m.get_field(f) {
        Value::U64(n) => Some(*n),
        Value::U32(n) => Some(u64::from(*n)),
        Value::I64(n) => u64::try_from(*n).ok(),
        Value::I32(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}
