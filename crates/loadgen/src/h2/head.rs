//! A request as HTTP/2 sends it, built once before the run: method, URI
//! (its scheme and authority become `:scheme` and `:authority`), headers
//! and body. The defaults are HTTP/1.1's (`user-agent`, `accept`,
//! `content-length` from the body); a `Host` header becomes the authority.
//! A gRPC call is a POST of one length-prefixed message with
//! `content-type: application/grpc`, `te: trailers` and `grpc-timeout`.

use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Method, Request, Uri};
use iolab_model::request::RequestTemplate;

use crate::endpoint::{Endpoint, UrlError};

/// A request HTTP/2 cannot carry.
#[derive(Debug, thiserror::Error)]
pub enum HeadError {
    /// Its URL cannot be used.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The method is not a token.
    #[error("method '{0}' is not an HTTP token")]
    Method(String),
    /// Authority and path make no URI.
    #[error("cannot make an HTTP/2 request of {at}: {why}")]
    Uri {
        /// Authority and path.
        at: String,
        /// Why.
        why: http::uri::InvalidUri,
    },
    /// A header name is not a token.
    #[error("header name '{0}' is not an HTTP token")]
    HeaderName(String),
    /// A header value HTTP/2 cannot carry.
    #[error("header '{0}' has a value HTTP/2 cannot carry")]
    HeaderValue(String),
    /// A gRPC message past its 4 GiB length prefix.
    #[error("the gRPC request message is over 4 GiB")]
    MessageTooBig,
}

/// Methods that get `content-length: 0` when their body is empty, as over HTTP/1.1.
const BODY_METHODS: [&str; 3] = ["POST", "PUT", "PATCH"];

/// One request's head and body.
#[derive(Debug, Clone)]
pub struct Head {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    /// The body, sent with END_STREAM (empty: none, END_STREAM on the head).
    pub body: Bytes,
    /// A gRPC call: its answer ends with `grpc-status`.
    pub grpc: bool,
}

impl Head {
    /// The request to send (cheap: the URI and body are shared bytes).
    pub fn request(&self) -> Request<()> {
        let mut r = Request::new(());
        *r.method_mut() = self.method.clone();
        *r.uri_mut() = self.uri.clone();
        *r.headers_mut() = self.headers.clone();
        r
    }

    /// The path requested (`/package.Service/Method` for gRPC).
    pub fn path(&self) -> &str {
        self.uri.path()
    }

    /// The head's size as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC
    /// 9113 6.5.2: each field's name and value octets plus 32), the
    /// pseudo-headers included: a server's limit below it refuses the head.
    pub fn list_size(&self) -> u64 {
        let field = |name: usize, value: usize| (name + value + 32) as u64;
        let uri = &self.uri;
        let authority = uri.authority().map_or(0, |a| a.as_str().len());
        let path = uri.path_and_query().map_or(1, |p| p.as_str().len());
        let scheme = uri.scheme_str().map_or(0, str::len);
        let pseudo = field(7, self.method.as_str().len())
            + field(7, scheme)
            + field(10, authority)
            + field(5, path);
        let fields = self.headers.iter();
        pseudo
            + fields
                .map(|(n, v)| field(n.as_str().len(), v.len()))
                .sum::<u64>()
    }

    /// A request from a template (method, URL, headers, body).
    pub fn of(t: &RequestTemplate) -> Result<Head, HeadError> {
        let target = Endpoint::parse(&t.url)?;
        let method = Method::from_bytes(t.method.as_bytes())
            .map_err(|_| HeadError::Method(t.method.clone()))?;
        let authority = t
            .header("host")
            .map_or_else(|| target.host_header(), str::to_string);
        let mut headers = user_headers(&t.headers)?;
        default(&mut headers, "user-agent", &crate::wire::user_agent());
        default(&mut headers, "accept", "*/*");
        if !t.body.is_empty() || BODY_METHODS.contains(&t.method.as_str()) {
            headers.insert(
                http::header::CONTENT_LENGTH,
                HeaderValue::from(t.body.len()),
            );
        }
        Ok(Head {
            method,
            uri: uri(&target, &authority, &target.path)?,
            headers,
            body: Bytes::from(t.body.clone()),
            grpc: false,
        })
    }

    /// A gRPC unary call of `path` (`/package.Service/Method`) carrying
    /// `message` (the encoded request, not yet framed), with `metadata`.
    pub fn grpc(
        target: &Endpoint,
        path: &str,
        metadata: &[(String, String)],
        message: &[u8],
        timeout: Duration,
    ) -> Result<Head, HeadError> {
        let mut headers = user_headers(metadata)?;
        headers.insert("content-type", HeaderValue::from_static("application/grpc"));
        headers.insert("te", HeaderValue::from_static("trailers"));
        headers.insert("grpc-timeout", grpc_timeout(timeout));
        default(&mut headers, "user-agent", &crate::wire::user_agent());
        let mut body = Vec::with_capacity(5 + message.len());
        body.push(0); // not compressed
        let len = u32::try_from(message.len()).map_err(|_| HeadError::MessageTooBig)?;
        body.extend_from_slice(&len.to_be_bytes());
        body.extend_from_slice(message);
        Ok(Head {
            method: Method::POST,
            uri: uri(target, &target.host_header(), path)?,
            headers,
            body: Bytes::from(body),
            grpc: true,
        })
    }
}

/// `scheme://authority/path`: what h2 turns into the pseudo-headers.
fn uri(target: &Endpoint, authority: &str, path: &str) -> Result<Uri, HeadError> {
    let scheme = if target.tls { "https" } else { "http" };
    format!("{scheme}://{authority}{path}")
        .parse()
        .map_err(|why| HeadError::Uri {
            at: format!("{authority}{path}"),
            why,
        })
}

/// The user's headers, names lower-cased as HTTP/2 requires; `Host`
/// left out (it is the authority).
fn user_headers(list: &[(String, String)]) -> Result<HeaderMap, HeadError> {
    let mut headers = HeaderMap::new();
    for (name, value) in list {
        if name.eq_ignore_ascii_case("host") {
            continue;
        }
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HeadError::HeaderName(name.clone()))?;
        let v = HeaderValue::from_str(value).map_err(|_| HeadError::HeaderValue(name.clone()))?;
        headers.append(n, v);
    }
    Ok(headers)
}

fn default(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if !headers.contains_key(name) {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(name, v);
        }
    }
}

/// `grpc-timeout`: at most 8 digits and a unit; milliseconds while they
/// fit, else seconds, else hours.
fn grpc_timeout(t: Duration) -> HeaderValue {
    let ms = t.as_millis().max(1);
    let text = if ms < 100_000_000 {
        format!("{ms}m")
    } else if t.as_secs() < 100_000_000 {
        format!("{}S", t.as_secs())
    } else {
        format!("{}H", (t.as_secs() / 3600).min(99_999_999))
    };
    HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("99999999H"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_carry_the_template_with_http1s_defaults() {
        let mut t = RequestTemplate::get("https://api.test:8443/orders?x=1");
        t.method = "POST".into();
        t.headers = vec![
            ("X-Key".into(), "k".into()),
            ("Host".into(), "front.test".into()),
        ];
        t.body = b"{}".to_vec();
        let h = Head::of(&t).unwrap();
        let r = h.request();
        assert_eq!(r.uri().to_string(), "https://front.test/orders?x=1");
        assert_eq!(r.headers()["x-key"], "k");
        assert_eq!(r.headers()["content-length"], "2");
        assert!(r.headers().contains_key("user-agent") && !r.headers().contains_key("host"));
        assert_eq!(h.body, Bytes::from_static(b"{}"));
    }

    #[test]
    fn a_grpc_call_is_one_framed_message_with_its_deadline() {
        let target = Endpoint::parse("grpc://127.0.0.1:50051").unwrap();
        let meta = vec![("authorization".to_string(), "Bearer t".to_string())];
        let h = Head::grpc(
            &target,
            "/p.S/M",
            &meta,
            b"\x0a\x01x",
            Duration::from_secs(2),
        )
        .unwrap();
        let r = h.request();
        assert_eq!(r.uri().to_string(), "http://127.0.0.1:50051/p.S/M");
        assert_eq!(r.method(), Method::POST);
        assert_eq!(r.headers()["grpc-timeout"], "2000m");
        assert_eq!(r.headers()["te"], "trailers");
        assert_eq!(&h.body[..], b"\0\0\0\0\x03\x0a\x01x");
        assert_eq!(grpc_timeout(Duration::from_secs(200_000)), "200000S");
    }
}
