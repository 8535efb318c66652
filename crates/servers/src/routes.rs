//! The target contract, independent of how a model speaks HTTP: which path
//! means what, and the exact bytes of every answer (`vectors/contract.json`).

use std::time::Duration;

use bytes::Bytes;
use iolab_model::experiment::{UnknownWorkBody, WorkBody};
use iolab_model::steps::{self, Step, StepsError};
use iolab_model::ModelKind;

use crate::exec::StepResult;

/// What a request asks for.
#[derive(Debug)]
pub enum Route {
    /// `GET /health`.
    Health,
    /// `GET /metrics`.
    Metrics,
    /// `GET /spans` (the sample so far) or `GET /spans?open` (start a new
    /// one): the optional part of the contract (runtimes/README.md).
    Spans {
        /// `?open` was given.
        open: bool,
    },
    /// `GET /work?steps=...[&body=value]`, already parsed; `Err` is the 400 message.
    Work(Result<WorkRequest, WorkError>),
    /// Any other path.
    NotFound(String),
    /// A method other than GET/HEAD.
    MethodNotAllowed(String),
}

/// A parsed `/work` request: the workload and what to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkRequest {
    /// The workload (`steps=`).
    pub step: Step,
    /// The answer's body (`body=`, JSON by default).
    pub body: WorkBody,
}

/// The hint in the 400 answer for a `/work` without `steps`.
pub const MISSING_STEPS: &str = "missing query parameter 'steps', e.g. /work?steps=sleep:100";

/// The 400 answer for `body=value` on a workload that fetches no value.
pub const VALUE_NEEDS_MC: &str =
    "body=value answers the value of the last mc step, but steps has none: e.g. /work?steps=mc:test&body=value";

/// Why a `/work` request is refused: its 400 answer's message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkError {
    /// No `steps=`.
    #[error("{MISSING_STEPS}")]
    MissingSteps,
    /// `steps=` does not parse.
    #[error(transparent)]
    Steps(#[from] StepsError),
    /// `body=` names no answer kind.
    #[error(transparent)]
    Body(#[from] UnknownWorkBody),
    /// `body=value` without an `mc` step.
    #[error("{VALUE_NEEDS_MC}")]
    ValueNeedsMc,
    /// The query's percent-encoding is broken.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// A query that cannot be percent-decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// `%` not followed by two hex digits, at this byte.
    #[error("bad percent-encoding in query at {0}: expected %XX with two hex digits")]
    BadEscape(usize),
    /// The decoded bytes are not UTF-8.
    #[error("query is not UTF-8 after percent-decoding")]
    NotUtf8,
}

/// Decide the route of a request line's method and target (`/work?steps=..`).
pub fn route(method: &str, target: &str) -> Route {
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    if method != "GET" && method != "HEAD" {
        return Route::MethodNotAllowed(method.to_string());
    }
    match path {
        "/health" => Route::Health,
        "/metrics" => Route::Metrics,
        "/spans" => Route::Spans {
            open: query.is_some_and(|q| q.split('&').any(|p| p == "open")),
        },
        "/work" => Route::Work(work(query)),
        other => Route::NotFound(other.to_string()),
    }
}

/// The first value of query parameter `name`, percent-decoded.
fn param(query: Option<&str>, name: &str) -> Result<Option<String>, DecodeError> {
    query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .map(percent_decode)
        .transpose()
}

fn work(query: Option<&str>) -> Result<WorkRequest, WorkError> {
    let text = param(query, "steps")?.ok_or(WorkError::MissingSteps)?;
    let step = steps::parse(&text)?;
    let body = match param(query, "body")? {
        Some(b) => WorkBody::parse(&b)?,
        None => WorkBody::Json,
    };
    // A keyed call (a get) is what fetches a value; a timed call only waits.
    let fetches = step.io_calls().iter().any(|c| c.key().is_some());
    if body == WorkBody::Value && !fetches {
        return Err(WorkError::ValueNeedsMc);
    }
    Ok(WorkRequest { step, body })
}

/// Decode `%XX` escapes and `+` (form encoding's space).
pub fn percent_decode(raw: &str) -> Result<String, DecodeError> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                // Two hex digits exactly: `from_str_radix` alone takes a
                // sign, so `%+f` would decode as 0x0F.
                let hex = b
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or(DecodeError::BadEscape(i))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| DecodeError::NotUtf8)
}

/// One answer, before any model writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` header.
    pub content_type: &'static str,
    /// Body bytes (a `Bytes` so a fetched value is answered without a copy).
    pub body: Bytes,
}

/// JSON answers.
pub const JSON: &str = "application/json";
/// `body=value` answers: the raw bytes of a cached value.
pub const OCTET_STREAM: &str = "application/octet-stream";
/// Prometheus text format 0.0.4.
pub const PROMETHEUS: &str = "text/plain; version=0.0.4";

impl Reply {
    /// `{"ok":false,"error":"..."}` with `status`.
    pub fn error(status: u16, message: &str) -> Reply {
        let msg = serde_json::to_string(message).expect("a string serializes");
        Reply {
            status,
            content_type: JSON,
            body: format!("{{\"ok\":false,\"error\":{msg}}}").into(),
        }
    }

    /// `200 {"ok":true}` for `/health`.
    pub fn health() -> Reply {
        Reply {
            status: 200,
            content_type: JSON,
            body: Bytes::from_static(b"{\"ok\":true}"),
        }
    }

    /// `/metrics` text.
    pub fn metrics(text: String) -> Reply {
        Reply {
            status: 200,
            content_type: PROMETHEUS,
            body: text.into(),
        }
    }

    /// The answer to a finished `/work`: 200 with the contract body (or the
    /// fetched value for `body=value`), or the step's error with its status.
    pub fn work(model: ModelKind, work: &WorkRequest, result: StepResult, took: Duration) -> Reply {
        match (result, work.body) {
            (Ok(_), WorkBody::Json) => Reply {
                status: 200,
                content_type: JSON,
                body: format!(
                    "{{\"ok\":true,\"model\":\"{model}\",\"steps\":{},\"elapsed_ms\":{:.3}}}",
                    work.step.leaf_count(),
                    took.as_secs_f64() * 1e3
                )
                .into(),
            },
            (Ok(Some(value)), WorkBody::Value) => Reply {
                status: 200,
                content_type: OCTET_STREAM,
                body: value,
            },
            // Routing refuses body=value without an mc step, and an mc step
            // that succeeds always fetches: this is a bug, said as such.
            (Ok(None), WorkBody::Value) => {
                Reply::error(500, "body=value: the steps ran but fetched no value")
            }
            (Err(e), _) => Reply::error(e.status, &e.message),
        }
    }

    /// 404 for a path the contract does not have.
    pub fn not_found(path: &str) -> Reply {
        Reply::error(
            404,
            &format!("no such path '{path}' (the contract has /work?steps=..., /health, /metrics)"),
        )
    }

    /// 405 for anything but GET/HEAD.
    pub fn method_not_allowed(method: &str) -> Reply {
        Reply::error(405, &format!("method {method} not allowed (use GET)"))
    }

    /// 503 for a request refused because no thread could be had.
    pub fn overloaded(why: &str) -> Reply {
        Reply::error(503, why)
    }
}

/// Standard reason phrase of the statuses the targets use.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16, finding 16: `%+f` decoded as 0x0F (a sign taken as a
    /// digit); a percent escape is two hex digits or a 400.
    #[test]
    fn r16_16_a_percent_escape_is_two_hex_digits() {
        assert_eq!(percent_decode("a%2Cb%2c").unwrap(), "a,b,");
        for bad in ["%+f", "%-1", "% f", "%f", "%", "%zz", "%+0"] {
            assert!(percent_decode(bad).is_err(), "{bad}");
        }
        match route("GET", "/work?steps=sleep%3A1%+f") {
            Route::Work(Err(_)) => {} // answered 400 with this message
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn routes_and_decodes() {
        assert!(matches!(route("GET", "/health"), Route::Health));
        assert!(matches!(
            route("POST", "/health"),
            Route::MethodNotAllowed(_)
        ));
        assert!(matches!(route("GET", "/nope"), Route::NotFound(p) if p == "/nope"));
        match route("GET", "/work?x=1&steps=par%28sleep%3A10%2Csleep%3A10%29") {
            Route::Work(Ok(w)) => {
                assert_eq!(w.step.to_string(), "par(sleep:10,sleep:10)");
                assert_eq!(w.body, WorkBody::Json);
            }
            other => panic!("{other:?}"),
        }
        match route("GET", "/work") {
            Route::Work(Err(m)) => assert_eq!(m.to_string(), MISSING_STEPS),
            other => panic!("{other:?}"),
        }
        assert!(percent_decode("%2").is_err());
        assert!(percent_decode("%ff").is_err());
    }

    #[test]
    fn bodies_are_byte_exact() {
        let work = WorkRequest {
            step: steps::parse("par(sleep:1,sleep:2,cpu:3)").unwrap(),
            body: WorkBody::Json,
        };
        let r = Reply::work(
            ModelKind::Pool,
            &work,
            Ok(None),
            Duration::from_micros(12_300),
        );
        assert_eq!(
            r.body,
            "{\"ok\":true,\"model\":\"pool\",\"steps\":3,\"elapsed_ms\":12.300}"
        );
        let e = Reply::error(400, "steps: expected ')' at 21");
        assert_eq!(
            e.body,
            "{\"ok\":false,\"error\":\"steps: expected ')' at 21\"}"
        );
        assert_eq!(e.content_type, "application/json");
    }

    #[test]
    fn body_value_is_parsed_and_refused_without_an_mc_step() {
        match route("GET", "/work?steps=seq(sleep:1,mc:a,mc:b)&body=value") {
            Route::Work(Ok(w)) => assert_eq!(w.body, WorkBody::Value),
            other => panic!("{other:?}"),
        }
        match route("GET", "/work?body=json&steps=mc:a") {
            Route::Work(Ok(w)) => assert_eq!(w.body, WorkBody::Json),
            other => panic!("{other:?}"),
        }
        match route("GET", "/work?steps=sleep:1&body=value") {
            Route::Work(Err(m)) => assert_eq!(m.to_string(), VALUE_NEEDS_MC),
            other => panic!("{other:?}"),
        }
        match route("GET", "/work?steps=mc:a&body=html") {
            Route::Work(Err(m)) => assert!(
                m.to_string().contains("'json' (the default) or 'value'"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        // `bodyx=` is not `body=`.
        match route("GET", "/work?steps=sleep:1&bodyx=value") {
            Route::Work(Ok(w)) => assert_eq!(w.body, WorkBody::Json),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_value_answer_is_the_fetched_bytes_uncopied() {
        let work = WorkRequest {
            step: steps::parse("mc:test").unwrap(),
            body: WorkBody::Value,
        };
        let value = Bytes::from(vec![7u8; 1 << 20]);
        let ptr = value.as_ptr();
        let r = Reply::work(ModelKind::LoopAsync, &work, Ok(Some(value)), Duration::ZERO);
        assert_eq!((r.status, r.content_type), (200, OCTET_STREAM));
        assert_eq!(r.body.len(), 1 << 20);
        assert_eq!(r.body.as_ptr(), ptr, "the value is handed on, not copied");
        let err = Reply::work(
            ModelKind::LoopAsync,
            &work,
            Err(crate::exec::StepError {
                status: 502,
                message: "backend 'mc': key 'test' not found".into(),
            }),
            Duration::ZERO,
        );
        assert_eq!((err.status, err.content_type), (502, JSON));
    }
}
