//! nginx and Apache access logs in the combined format, and nginx's with
//! `$request_time` after it:
//!
//! ```text
//! 127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a?x=1 HTTP/1.1" 200 612 "-" "curl/8" 0.004
//! ```
//!
//! Parsed by hand, line by line from a buffered reader, so a 1 GB log
//! streams in constant memory: the format is a few space-separated fields
//! and three quoted ones with `\"` escapes, where a regex engine would be
//! a dependency for the same loop, and slower. The common format (no
//! referer and user agent) is read too.

use std::io::BufRead;
use std::path::Path;

use super::clock::clf_ms;
use super::error::ReplayError;
use super::mix::Recorded;
use super::{path_of, Sink};

/// One parsed line.
#[derive(Debug, PartialEq)]
pub struct Line {
    pub method: String,
    pub target: String,
    pub at_ms: u64,
    pub status: u16,
    /// `$request_time`, seconds, when the line has it.
    pub request_time_s: Option<f64>,
}

/// Why a line is not in the format.
#[derive(Debug, PartialEq)]
pub enum Fault {
    /// Not the combined format at all.
    Format(&'static str),
    /// The format, but its request has no method and URL (`"-"`, a TLS
    /// handshake sent to a plain port, ...).
    NoRequest,
}

/// Does `head` (the file's first line) look like a combined access log?
pub fn looks_like(head: &str) -> bool {
    head.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| parse(l).is_ok())
}

/// Read the log at `file` line by line into `sink`.
pub fn load(file: &Path, sink: &mut Sink) -> Result<(), ReplayError> {
    let read_err = |e: std::io::Error| ReplayError::Read {
        file: file.to_path_buf(),
        why: e.to_string(),
    };
    let f = std::fs::File::open(file).map_err(read_err)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, f);
    let mut buf = Vec::with_capacity(1024);
    let mut n = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(read_err)? == 0 {
            return Ok(());
        }
        n += 1;
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        sink.line(recorded(file, n, line))?;
    }
}

fn recorded(file: &Path, n: u64, line: &str) -> Result<Recorded, ReplayError> {
    let at = format!("line {n}");
    let l = parse(line).map_err(|f| match f {
        Fault::Format(why) => ReplayError::bad(
            file,
            at.clone(),
            format!("not in the combined log format ({why})"),
            "name the format with --replay-format, or add --skip-bad to leave such lines out",
        ),
        Fault::NoRequest => ReplayError::bad(
            file,
            at.clone(),
            "the line has no request (no method and URL)",
            "add --skip-bad to leave such lines out",
        ),
    })?;
    Ok(Recorded {
        method: l.method,
        target: l.target,
        headers: Vec::new(),
        body: Vec::new(),
        at_ms: Some(l.at_ms),
        service_ms: l.request_time_s.map(|s| s * 1000.0),
    })
}

/// Parse one line of the combined (or common) format.
pub fn parse(line: &str) -> Result<Line, Fault> {
    let mut rest = line;
    for field in ["remote address", "identity", "user"] {
        let (tok, r) = rest.split_once(' ').ok_or(Fault::Format(field))?;
        if tok.is_empty() {
            return Err(Fault::Format(field));
        }
        rest = r;
    }
    let r = rest.strip_prefix('[').ok_or(Fault::Format("[time]"))?;
    let (time, r) = r.split_once("] ").ok_or(Fault::Format("[time]"))?;
    let at_ms = clf_ms(time).ok_or(Fault::Format("[time]"))?;
    let (request, r) = quoted(r).ok_or(Fault::Format("\"request\""))?;
    let mut fields = r.split_ascii_whitespace();
    let status: u16 = fields
        .next()
        .and_then(|s| s.parse().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or(Fault::Format("status"))?;
    let bytes = fields.next().ok_or(Fault::Format("bytes"))?;
    if bytes != "-" && bytes.parse::<u64>().is_err() {
        return Err(Fault::Format("bytes"));
    }
    let request_time_s = request_time(r);
    let mut parts = request.split(' ');
    let (method, target) = match (parts.next(), parts.next()) {
        (Some(m), Some(t)) if !m.is_empty() && m.bytes().all(|b| b.is_ascii_uppercase()) => (m, t),
        _ => return Err(Fault::NoRequest),
    };
    let target = match target.starts_with('/') {
        true => target.to_string(),
        false => path_of(target).ok_or(Fault::NoRequest)?,
    };
    Ok(Line {
        method: method.to_string(),
        target,
        at_ms,
        status,
        request_time_s,
    })
}

/// `"..."` at the start of `s` (with `\"` escapes), and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    out.push(n);
                }
            }
            '"' => return Some((out, body[i + 1..].trim_start())),
            c => out.push(c),
        }
    }
    None
}

/// The `$request_time` after the referer and user agent: the first
/// unquoted field that reads as seconds (`0.004`).
fn request_time(after_status: &str) -> Option<f64> {
    let mut rest = after_status.split_once(' ')?.1.trim_start();
    rest = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
    while rest.starts_with('"') {
        rest = quoted(rest)?.1;
    }
    let tok = rest.split_ascii_whitespace().next()?;
    tok.parse::<f64>()
        .ok()
        .filter(|t| t.is_finite() && *t >= 0.0 && tok.contains('.'))
}

#[cfg(test)]
mod tests;
