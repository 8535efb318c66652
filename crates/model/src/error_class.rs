//! The classes a failed request lands in: one table ([`error_classes!`]
//! below), from which the class enum the generator records, the counts of
//! `iolab.attack/1` (`errors`), their order for renderers, their sum and
//! their merge are all generated. Adding a class is one line of the table.
//!
//! Two classes carry a code, counted again by code under `errors.by_code`:
//! a stream reset (the HTTP/2 reason, e.g. `CANCEL`) and a gRPC call that
//! ended with a status other than `OK` (e.g. `UNAVAILABLE`). The classes
//! added after the first documents are written only when some happened, so
//! older documents read the same and old readers see what they knew.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Serialize a class's count always (the classes of the first documents).
fn never(_: &u64) -> bool {
    false
}

/// Serialize a class's count only when some happened (later classes).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The table: `field => Variant(code type)?, "skip_serializing_if";`.
macro_rules! error_classes {
    ($( $(#[doc = $doc:literal])* $field:ident => $Variant:ident $(($code:ty))?, $skip:literal; )*) => {
        /// The class a failed request lands in (exactly one).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorClass {
            $( $(#[doc = $doc])* $Variant $(($code))?, )*
        }

        impl ErrorClass {
            /// Every class's name, in the table's order.
            pub const NAMES: [&'static str; ErrorClass::COUNT] = [$(stringify!($field)),*];
            /// How many classes there are.
            pub const COUNT: usize = [$(stringify!($field)),*].len();

            /// The name used in results, CSV rows and text.
            pub fn name(self) -> &'static str {
                match self {
                    $( ErrorClass::$Variant { .. } => stringify!($field), )*
                }
            }
        }

        /// Failures by class; a request lands in exactly one.
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        pub struct ErrorCounts {
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = $skip)]
                pub $field: u64,
            )*
            /// The coded classes again, by code: `{"stream_reset":
            /// {"CANCEL": 3}, "grpc_status": {"UNAVAILABLE": 10}}`.
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            pub by_code: BTreeMap<String, BTreeMap<String, u64>>,
        }

        impl ErrorCounts {
            /// `(class, count)` pairs in the table's order, for renderers.
            pub fn classes(&self) -> [(&'static str, u64); ErrorClass::COUNT] {
                [$((stringify!($field), self.$field)),*]
            }

            /// The counter of `class`.
            fn slot(&mut self, class: ErrorClass) -> &mut u64 {
                match class {
                    $( ErrorClass::$Variant { .. } => &mut self.$field, )*
                }
            }

            /// Add `other`'s counts, every class and code (saturating).
            pub fn add(&mut self, other: &ErrorCounts) {
                $( self.$field = self.$field.saturating_add(other.$field); )*
                for (class, codes) in &other.by_code {
                    let into = self.by_code.entry(class.clone()).or_default();
                    for (code, n) in codes {
                        let c = into.entry(code.clone()).or_default();
                        *c = c.saturating_add(*n);
                    }
                }
            }
        }
    };
}

error_classes! {
    /// No complete answer within the timeout.
    timeout => Timeout, "never";
    /// Connection refused (nothing listening, or the backlog overflowed).
    refused => Refused, "never";
    /// Connection reset or closed before a complete answer.
    reset => Reset, "never";
    /// EADDRNOTAVAIL: the client ran out of ephemeral ports.
    addr_unavailable => AddrUnavailable, "never";
    /// Any other connect failure (a failed TLS handshake among them).
    connect_other => ConnectOther, "never";
    /// A malformed answer or other read failure.
    read => Read, "never";
    /// EMFILE/ENFILE: the generator itself ran out of file descriptors
    /// (its `ulimit -n`), a fault of the load, not of the target.
    fd_limit => FdLimit, "is_zero";
    /// HTTP/2: the server reset the request's stream (RST_STREAM), with
    /// the reason code it gave (other than REFUSED_STREAM).
    stream_reset => StreamReset(u32), "is_zero";
    /// HTTP/2: refused by a GOAWAY: the server said it would not process
    /// streams past the last one it named, this one among them.
    goaway => Goaway, "is_zero";
    /// HTTP/2: reset with REFUSED_STREAM: not processed, safe to retry
    /// (a server over its stream limit says this).
    refused_stream => RefusedStream, "is_zero";
    /// HTTP/2: the connection failed with an error of the protocol (a
    /// GOAWAY with an error code, or a frame or setting the client found
    /// broken), by code.
    protocol_error => ProtocolError(u32), "is_zero";
    /// gRPC: the call ended with a `grpc-status` other than OK, by code.
    grpc_status => GrpcStatus(u32), "is_zero";
}

impl ErrorClass {
    /// The code a coded class carries, by name (`CANCEL`, `UNAVAILABLE`).
    pub fn code(self) -> Option<String> {
        match self {
            ErrorClass::StreamReset(c) | ErrorClass::ProtocolError(c) => Some(h2_reason(c)),
            ErrorClass::GrpcStatus(c) => Some(grpc_status(c)),
            _ => None,
        }
    }

    /// `stream_reset:CANCEL` for a coded class, else the name.
    pub fn label(self) -> String {
        match self.code() {
            Some(code) => format!("{}:{code}", self.name()),
            None => self.name().to_string(),
        }
    }
}

impl ErrorCounts {
    /// Count one failed request of `class` (and its code).
    pub fn record(&mut self, class: ErrorClass) {
        let n = self.slot(class);
        *n = n.saturating_add(1);
        if let Some(code) = class.code() {
            let codes = self.by_code.entry(class.name().to_string()).or_default();
            *codes.entry(code).or_default() += 1;
        }
    }

    /// All errors together (saturating: a hostile document's counts may
    /// add past `u64::MAX`, and rendering it must not panic).
    pub fn total(&self) -> u64 {
        self.classes()
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n))
    }

    /// The coded classes' counts by code add up to the class's count;
    /// the error names the class that does not.
    pub fn check_codes(&self) -> Result<(), CodesError> {
        for (class, codes) in &self.by_code {
            let count = self.classes().into_iter().find(|(name, _)| name == class);
            let Some((_, count)) = count else {
                return Err(CodesError::NoClass(class.clone()));
            };
            let sum = codes.values().fold(0u64, |s, n| s.saturating_add(*n));
            if sum != count {
                return Err(CodesError::Sum {
                    class: class.clone(),
                    sum,
                    count,
                });
            }
        }
        Ok(())
    }
}

/// Errors by code that do not add to their class.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodesError {
    /// A class that does not exist.
    #[error("errors.by_code names no class '{0}'")]
    NoClass(String),
    /// Codes adding to another count than the class's.
    #[error("errors.by_code.{class} adds to {sum}, not errors.{class} = {count}")]
    Sum {
        /// The class.
        class: String,
        /// Its codes' sum.
        sum: u64,
        /// Its count.
        count: u64,
    },
}

/// HTTP/2 error codes by name (RFC 9113, section 7).
const H2_REASONS: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// The name of HTTP/2 error code `code` (`0x2a` for one the RFC lacks).
pub fn h2_reason(code: u32) -> String {
    match H2_REASONS.get(code as usize) {
        Some(name) => name.to_string(),
        None => format!("{code:#x}"),
    }
}

/// gRPC status codes by name (grpc/doc/statuscodes.md).
pub const GRPC_STATUS: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The name of gRPC status `code` (its number for one not defined).
pub fn grpc_status(code: u32) -> String {
    match GRPC_STATUS.get(code as usize) {
        Some(name) => name.to_string(),
        None => code.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_counted_in_its_own_field_and_codes_add_up() {
        let all = [
            ErrorClass::Timeout,
            ErrorClass::Refused,
            ErrorClass::Reset,
            ErrorClass::AddrUnavailable,
            ErrorClass::ConnectOther,
            ErrorClass::Read,
            ErrorClass::FdLimit,
            ErrorClass::StreamReset(8),
            ErrorClass::Goaway,
            ErrorClass::RefusedStream,
            ErrorClass::ProtocolError(1),
            ErrorClass::GrpcStatus(14),
        ];
        assert_eq!(all.len(), ErrorClass::COUNT);
        let mut e = ErrorCounts::default();
        for (i, class) in all.iter().enumerate() {
            for _ in 0..=i {
                e.record(*class);
            }
        }
        for (i, (name, n)) in e.classes().into_iter().enumerate() {
            assert_eq!((name, n), (all[i].name(), i as u64 + 1));
            assert_eq!(name, ErrorClass::NAMES[i]);
        }
        assert_eq!(e.by_code["stream_reset"]["CANCEL"], 8);
        assert_eq!(e.by_code["grpc_status"]["UNAVAILABLE"], 12);
        assert_eq!(e.by_code["protocol_error"]["PROTOCOL_ERROR"], 11);
        e.check_codes().unwrap();
        let mut twice = e.clone();
        twice.add(&e);
        assert_eq!(twice.total(), 2 * e.total());
        twice.check_codes().unwrap();
        twice.grpc_status += 1;
        assert!(twice
            .check_codes()
            .unwrap_err()
            .to_string()
            .contains("grpc_status"));
        assert_eq!(
            ErrorClass::GrpcStatus(14).label(),
            "grpc_status:UNAVAILABLE"
        );
        assert_eq!(h2_reason(0x2a), "0x2a");
    }

    /// A document of the first classes reads, and writes back unchanged:
    /// the later classes appear only when some happened.
    #[test]
    fn old_documents_read_and_write_the_same() {
        let old = r#"{"timeout":1,"refused":0,"reset":2,"addr_unavailable":0,"connect_other":0,"read":0}"#;
        let e: ErrorCounts = serde_json::from_str(old).unwrap();
        assert_eq!(e.total(), 3);
        assert_eq!(serde_json::to_string(&e).unwrap(), old);
    }
}
