//! The target contract, independent of how a model speaks HTTP: which path
//! means what, and the exact bytes of every answer (`vectors/contract.json`).

use std::time::Duration;

use iolab_model::steps::{self, Step};
use iolab_model::ModelKind;

use crate::exec::StepError;

/// What a request asks for.
#[derive(Debug)]
pub enum Route {
    /// `GET /health`.
    Health,
    /// `GET /metrics`.
    Metrics,
    /// `GET /work?steps=...`, already parsed; `Err` is the 400 message.
    Work(Result<Step, String>),
    /// Any other path.
    NotFound(String),
    /// A method other than GET/HEAD.
    MethodNotAllowed(String),
}

/// The hint in the 400 answer for a `/work` without `steps`.
pub const MISSING_STEPS: &str = "missing query parameter 'steps', e.g. /work?steps=sleep:100";

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
        "/work" => Route::Work(work_steps(query)),
        other => Route::NotFound(other.to_string()),
    }
}

fn work_steps(query: Option<&str>) -> Result<Step, String> {
    let raw = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("steps="))
        .ok_or_else(|| MISSING_STEPS.to_string())?;
    let text = percent_decode(raw)?;
    steps::parse(&text).map_err(|e| e.to_string())
}

/// Decode `%XX` escapes and `+` (form encoding's space).
pub fn percent_decode(raw: &str) -> Result<String, String> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        format!("bad percent-encoding in query at {i}: expected %XX with two hex digits")
                    })?;
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
    String::from_utf8(out).map_err(|_| "query is not UTF-8 after percent-decoding".to_string())
}

/// One answer, before any model writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` header.
    pub content_type: &'static str,
    /// Body bytes.
    pub body: String,
}

/// JSON answers.
pub const JSON: &str = "application/json";
/// Prometheus text format 0.0.4.
pub const PROMETHEUS: &str = "text/plain; version=0.0.4";

impl Reply {
    /// `{"ok":false,"error":"..."}` with `status`.
    pub fn error(status: u16, message: &str) -> Reply {
        let msg = serde_json::to_string(message).expect("a string serializes");
        Reply {
            status,
            content_type: JSON,
            body: format!("{{\"ok\":false,\"error\":{msg}}}"),
        }
    }

    /// `200 {"ok":true}` for `/health`.
    pub fn health() -> Reply {
        Reply {
            status: 200,
            content_type: JSON,
            body: "{\"ok\":true}".to_string(),
        }
    }

    /// `/metrics` text.
    pub fn metrics(text: String) -> Reply {
        Reply {
            status: 200,
            content_type: PROMETHEUS,
            body: text,
        }
    }

    /// The answer to a finished `/work`: 200 with the contract body, or the
    /// step's error with its status.
    pub fn work(
        model: ModelKind,
        step: &Step,
        result: Result<(), StepError>,
        took: Duration,
    ) -> Reply {
        match result {
            Ok(()) => Reply {
                status: 200,
                content_type: JSON,
                body: format!(
                    "{{\"ok\":true,\"model\":\"{model}\",\"steps\":{},\"elapsed_ms\":{:.3}}}",
                    step.leaf_count(),
                    took.as_secs_f64() * 1e3
                ),
            },
            Err(e) => Reply::error(e.status, &e.message),
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

    #[test]
    fn routes_and_decodes() {
        assert!(matches!(route("GET", "/health"), Route::Health));
        assert!(matches!(
            route("POST", "/health"),
            Route::MethodNotAllowed(_)
        ));
        assert!(matches!(route("GET", "/nope"), Route::NotFound(p) if p == "/nope"));
        match route("GET", "/work?x=1&steps=par%28sleep%3A10%2Csleep%3A10%29") {
            Route::Work(Ok(s)) => assert_eq!(s.to_string(), "par(sleep:10,sleep:10)"),
            other => panic!("{other:?}"),
        }
        match route("GET", "/work") {
            Route::Work(Err(m)) => assert_eq!(m, MISSING_STEPS),
            other => panic!("{other:?}"),
        }
        assert!(percent_decode("%2").is_err());
        assert!(percent_decode("%ff").is_err());
    }

    #[test]
    fn bodies_are_byte_exact() {
        let step = steps::parse("par(sleep:1,sleep:2,cpu:3)").unwrap();
        let r = Reply::work(
            ModelKind::Pool,
            &step,
            Ok(()),
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
}
