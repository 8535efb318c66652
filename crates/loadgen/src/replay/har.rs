//! HAR 1.2 (browser DevTools, k6 Studio, proxies): `log.entries[]`, each a
//! request (method, URL, headers, `postData` with its content type), when it
//! started and the server's part of its time (`timings.wait`, else `time`). Read with serde_json: a HAR is one JSON document, so it is
//! parsed whole, and a file above [`MAX_HAR_BYTES`] is refused before it
//! is read. Each entry is read on its own, so one bad entry is named by
//! its number and the rest still load under `--skip-bad`.

use std::path::Path;

use serde::Deserialize;

use super::clock::iso8601_ms;
use super::error::ReplayError;
use super::mix::Recorded;
use super::{path_of, Sink};

/// Largest HAR read (it is parsed whole): 256 MiB.
pub const MAX_HAR_BYTES: u64 = 256 << 20;

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    entries: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    started_date_time: Option<String>,
    time: Option<f64>,
    timings: Option<Timings>,
    request: Request,
}

/// The phases of an entry's time; `wait` is the server's part (from the
/// request sent to the first byte of the answer), -1 when not known.
#[derive(Deserialize)]
struct Timings {
    wait: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    headers: Vec<Header>,
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    #[serde(default)]
    mime_type: String,
    text: Option<String>,
    encoding: Option<String>,
}

/// Does `head` (the file's first bytes) look like a HAR?
pub fn looks_like(head: &str) -> bool {
    head.trim_start().starts_with('{')
}

/// Read the HAR at `file` into `sink`, refusing one over `limit` bytes.
pub fn load(file: &Path, limit: u64, sink: &mut Sink) -> Result<(), ReplayError> {
    let read_err = |e: std::io::Error| ReplayError::Read {
        file: file.to_path_buf(),
        why: e.to_string(),
    };
    let size = std::fs::metadata(file).map_err(read_err)?.len();
    if size > limit {
        return Err(ReplayError::TooLarge {
            file: file.to_path_buf(),
            size,
            limit,
        });
    }
    let bytes = std::fs::read(file).map_err(read_err)?;
    let har: Har = serde_json::from_slice(&bytes).map_err(|e| ReplayError::BadHar {
        file: file.to_path_buf(),
        why: e.to_string(),
    })?;
    for (i, value) in har.log.entries.into_iter().enumerate() {
        let at = format!("entry {}", i + 1);
        sink.line(entry(file, &at, value))?;
    }
    Ok(())
}

fn entry(file: &Path, at: &str, value: serde_json::Value) -> Result<Recorded, ReplayError> {
    let fix = "correct it, or add --skip-bad to replay the other entries";
    let e: Entry = serde_json::from_value(value)
        .map_err(|e| ReplayError::bad(file, at.into(), format!("not a HAR entry ({e})"), fix))?;
    let r = e.request;
    if r.url.trim().is_empty() {
        return Err(ReplayError::bad(
            file,
            at.into(),
            "the request has no URL",
            fix,
        ));
    }
    let target = path_of(&r.url).ok_or_else(|| {
        ReplayError::bad(
            file,
            at.into(),
            format!("'{}' is not an absolute URL", short(&r.url)),
            fix,
        )
    })?;
    let mut headers: Vec<(String, String)> =
        r.headers.into_iter().map(|h| (h.name, h.value)).collect();
    let body = match r.post_data {
        Some(p) => {
            let typed = headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
            if !typed && !p.mime_type.is_empty() {
                headers.push(("Content-Type".into(), p.mime_type.clone()));
            }
            body(p).map_err(|why| ReplayError::bad(file, at.into(), why.to_string(), fix))?
        }
        None => Vec::new(),
    };
    let known = |t: &f64| t.is_finite() && *t >= 0.0;
    let wait = e.timings.and_then(|t| t.wait).filter(known);
    Ok(Recorded {
        method: r.method,
        target,
        headers,
        body,
        at_ms: e.started_date_time.as_deref().and_then(iso8601_ms),
        service_ms: wait.or(e.time.filter(known)),
    })
}

/// A body a HAR keeps lossily: its media type, shortened.
#[derive(Debug, thiserror::Error)]
#[error("a binary body ({0}) cannot be replayed from a HAR")]
struct BinaryBody(String);

/// A text body; binary ones (base64, NUL bytes, media types) are refused:
/// a HAR keeps them lossily, so what would be replayed is not what was sent.
fn body(p: PostData) -> Result<Vec<u8>, BinaryBody> {
    let text = p.text.unwrap_or_default();
    let mime = p.mime_type.to_ascii_lowercase();
    let binary_type = ["image/", "audio/", "video/", "application/octet-stream"]
        .iter()
        .any(|t| mime.starts_with(t));
    if p.encoding.is_some_and(|e| e.eq_ignore_ascii_case("base64"))
        || text.contains('\0')
        || (binary_type && !text.is_empty())
    {
        return Err(BinaryBody(short(&p.mime_type)));
    }
    Ok(text.into_bytes())
}

fn short(s: &str) -> String {
    s.chars().take(60).collect()
}
