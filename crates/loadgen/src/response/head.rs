//! One answer's head: the status line and headers parsed by `httparse`, and
//! what they say about the body (its framing) and the connection (kept or
//! not). Every framing conflict is a malformed answer (`read`), never a
//! guess: two different Content-Lengths, a signed or empty one, a transfer
//! coding this client does not know or `chunked` anywhere but last, a status
//! below 100, or `101 Switching Protocols` (this client never asks to
//! upgrade, so a 101 is not an answer it can read). Each refusal says why
//! ([`Malformed`]): the generator counts it `read`, `verify` prints it.

use crate::recorder::ErrorClass;

/// Bounds on one answer's head; `--max-headers` sets the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most header lines in one head (interim heads included, each alone).
    pub max_headers: usize,
    /// Most bytes of one head.
    pub max_head: usize,
}

/// Headers an answer may carry by default: hyper's default is 100, curl and
/// Go bound the head's bytes only; real answers behind a few proxies and a
/// CDN carry 60 to 80 (finding 6: 64 was too few).
pub const DEFAULT_MAX_HEADERS: usize = 256;
/// Largest head read (Go's client allows 10 MB, curl 300 KB).
pub const MAX_HEAD: usize = 1 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_headers: DEFAULT_MAX_HEADERS,
            max_head: MAX_HEAD,
        }
    }
}

/// How the body of an answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// After this many bytes.
    Length(u64),
    /// At the chunked coding's last chunk ([`crate::response::Chunked`]).
    Chunked,
    /// When the peer closes.
    UntilClose,
}

/// Why a head is not one this client can read: a malformed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

impl From<Malformed> for ErrorClass {
    fn from(_: Malformed) -> Self {
        ErrorClass::Read
    }
}

/// What a buffer that starts with a head holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Not all of the head yet.
    Partial,
    /// An interim answer (1xx but 101) of this many bytes: skip it, a final
    /// answer follows.
    Interim(usize),
    /// The final answer's head, `len` bytes long.
    Final {
        /// Its status code.
        status: u16,
        /// The connection may carry another request.
        keep: bool,
        /// How its body ends.
        framing: Framing,
        /// Its length in bytes.
        len: usize,
    },
}

/// Headers parsed on the stack; more only when an answer has more.
const STACK_HEADERS: usize = 64;

/// Parse the head at the start of `buf`.
pub(crate) fn parse(buf: &[u8], limits: &Limits) -> Result<Head, Malformed> {
    parse_then(buf, limits, judge).map(|h| h.unwrap_or(Ok(Head::Partial)))?
}

/// Parse the head at the start of `buf` as [`parse`] does (the same
/// judgement), and keep the final head's headers: names lower-cased, values
/// as text (lossy UTF-8) without surrounding blanks. For a client that shows
/// what it read (`verify`); the engines keep nothing.
pub fn parse_kept(buf: &[u8], limits: &Limits) -> Result<(Head, Vec<(String, String)>), Malformed> {
    let kept = parse_then(buf, limits, |resp, len| {
        let head = judge(resp, len)?;
        let headers = match head {
            Head::Final { .. } => resp
                .headers
                .iter()
                .map(|h| {
                    let value = String::from_utf8_lossy(h.value).trim().to_string();
                    (h.name.to_ascii_lowercase(), value)
                })
                .collect(),
            _ => Vec::new(),
        };
        Ok((head, headers))
    })?;
    kept.unwrap_or(Ok((Head::Partial, Vec::new())))
}

/// Run `then` on the head at the start of `buf` once it is complete (`None`
/// while partial): headers on the stack, on the heap only past
/// [`STACK_HEADERS`].
fn parse_then<T>(
    buf: &[u8],
    limits: &Limits,
    then: impl Fn(&httparse::Response, usize) -> T,
) -> Result<Option<T>, Malformed> {
    let mut stack = [httparse::EMPTY_HEADER; STACK_HEADERS];
    let n = limits.max_headers.min(STACK_HEADERS);
    match parse_with(buf, &mut stack[..n], &then) {
        Err(httparse::Error::TooManyHeaders) if limits.max_headers > STACK_HEADERS => {
            let mut heap = vec![httparse::EMPTY_HEADER; limits.max_headers];
            parse_with(buf, &mut heap, &then).map_err(syntax)
        }
        r => r.map_err(syntax),
    }
}

fn parse_with<'b, T>(
    buf: &'b [u8],
    headers: &mut [httparse::Header<'b>],
    then: &impl Fn(&httparse::Response, usize) -> T,
) -> Result<Option<T>, httparse::Error> {
    let mut resp = httparse::Response::new(headers);
    Ok(match resp.parse(buf)? {
        httparse::Status::Partial => None,
        httparse::Status::Complete(len) => Some(then(&resp, len)),
    })
}

/// httparse's refusal, said.
fn syntax(e: httparse::Error) -> Malformed {
    Malformed(match e {
        httparse::Error::TooManyHeaders => "more headers than the limit (--max-headers)",
        httparse::Error::Status => "bad status code",
        httparse::Error::Version => "not HTTP/1.x",
        httparse::Error::HeaderName => "bad header name",
        httparse::Error::HeaderValue => "bad header value",
        httparse::Error::NewLine => "bad line ending",
        httparse::Error::Token => "bad token",
    })
}

fn judge(resp: &httparse::Response, len: usize) -> Result<Head, Malformed> {
    let status = resp.code.ok_or(Malformed("no status code"))?;
    match status {
        0..=99 => return Err(Malformed("status below 100")),
        101 => return Err(Malformed("101 Switching Protocols, never asked for")),
        100..=199 => return Ok(Head::Interim(len)),
        _ => {}
    }
    let mut keep = resp.version == Some(1);
    let mut length: Option<u64> = None;
    let mut codings = Codings::default();
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            for v in h.value.split(|&b| b == b',') {
                let n = content_length(v)?;
                if length.is_some_and(|l| l != n) {
                    return Err(Malformed("two different Content-Lengths"));
                }
                length = Some(n);
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            for c in h.value.split(|&b| b == b',') {
                codings.add(c.trim_ascii())?;
            }
        } else if h.name.eq_ignore_ascii_case("connection") {
            for t in h.value.split(|&b| b == b',') {
                let t = t.trim_ascii();
                if t.eq_ignore_ascii_case(b"close") {
                    keep = false;
                } else if t.eq_ignore_ascii_case(b"keep-alive") && !has_close(resp) {
                    keep = true;
                }
            }
        }
    }
    let framing = if status == 204 || status == 304 {
        Framing::Length(0)
    } else if codings.any {
        // Transfer-Encoding overrides Content-Length; both at once is how
        // requests are smuggled, so the connection is not used again.
        keep &= length.is_none();
        if codings.chunked_last {
            Framing::Chunked
        } else {
            keep = false;
            Framing::UntilClose
        }
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok(Head::Final {
        status,
        keep,
        framing,
        len,
    })
}

fn has_close(resp: &httparse::Response) -> bool {
    resp.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("connection")
            && h.value
                .split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"))
    })
}

/// One Content-Length value: decimal digits only (no sign, no space inside,
/// not empty), within u64.
fn content_length(v: &[u8]) -> Result<u64, Malformed> {
    let v = v.trim_ascii();
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return Err(Malformed("Content-Length not a decimal number"));
    }
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(Malformed("Content-Length past 2^64"))
}

/// The transfer codings of an answer, in order.
#[derive(Debug, Default)]
struct Codings {
    any: bool,
    chunked_last: bool,
}

impl Codings {
    /// The codings RFC 9112 registers; anything else is an answer this
    /// client cannot frame. `chunked` must be last and once.
    fn add(&mut self, c: &[u8]) -> Result<(), Malformed> {
        const KNOWN: [&[u8]; 6] = [
            b"gzip",
            b"x-gzip",
            b"deflate",
            b"compress",
            b"x-compress",
            b"identity",
        ];
        if self.chunked_last {
            return Err(Malformed("a transfer coding after chunked"));
        }
        self.any = true;
        if c.eq_ignore_ascii_case(b"chunked") {
            self.chunked_last = true;
            Ok(())
        } else if KNOWN.iter().any(|k| c.eq_ignore_ascii_case(k)) {
            Ok(())
        } else {
            Err(Malformed("a transfer coding this client does not know"))
        }
    }
}
