//! A request as bytes on the wire, rendered once before the run: request
//! line, `Host`, `User-Agent`, `Accept` (each unless the user set it), the
//! user's headers in order, `Content-Length` when there is a body or the
//! method usually carries one, then the body.

use iolab_model::request::RequestTemplate;

use crate::endpoint::Endpoint;

/// Methods whose requests carry a body by convention: they get
/// `Content-Length: 0` when the body is empty, as curl sends.
const BODY_METHODS: [&str; 3] = ["POST", "PUT", "PATCH"];

/// The `User-Agent` sent unless the user set one (HTTP/1.1 and HTTP/2).
pub fn user_agent() -> String {
    format!("iolab/{}", env!("CARGO_PKG_VERSION"))
}

/// `method target.path HTTP/1.1` with headers and body.
pub fn render(
    target: &Endpoint,
    method: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Vec<u8> {
    let set = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut head = format!("{method} {} HTTP/1.1\r\n", target.path);
    if !set("host") {
        head.push_str(&format!("Host: {}\r\n", target.host_header()));
    }
    if !set("user-agent") {
        head.push_str(&format!("User-Agent: {}\r\n", user_agent()));
    }
    if !set("accept") {
        head.push_str("Accept: */*\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || BODY_METHODS.contains(&method) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// The plain GET of `target`, as sent when no request is given.
pub fn plain_get(target: &Endpoint) -> Vec<u8> {
    render(target, "GET", &[], &[])
}

/// A request of a plan that cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Its method or a header.
    #[error("request {n}: {why}")]
    Request {
        /// 1-based.
        n: usize,
        /// What is wrong.
        why: iolab_model::request::RequestError,
    },
    /// Its URL.
    #[error(transparent)]
    Url(#[from] crate::endpoint::UrlError),
    /// Another origin than the first request's.
    #[error("request {n} goes to {to} but the first to {first}: one attack sends to one origin (run one attack per host)")]
    Origin {
        /// 1-based.
        n: usize,
        /// Its origin.
        to: String,
        /// The first request's.
        first: String,
    },
}

/// Every request of a plan, parsed and rendered: the targets must share one
/// origin (scheme, host, port), the first one's; the error is one line.
pub fn render_all(first: &Endpoint, list: &[RequestTemplate]) -> Result<Vec<Vec<u8>>, WireError> {
    if list.is_empty() {
        return Ok(vec![plain_get(first)]);
    }
    list.iter()
        .enumerate()
        .map(|(i, r)| {
            let n = i + 1;
            r.check().map_err(|why| WireError::Request { n, why })?;
            let t = Endpoint::parse(&r.url)?;
            if t.origin() != first.origin() {
                return Err(WireError::Origin {
                    n,
                    to: t.origin(),
                    first: first.origin(),
                });
            }
            Ok(render(&t, &r.method, &r.headers, &r.body))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: Vec<u8>) -> String {
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn get_is_the_fixed_request_it_always_was() {
        let t = Endpoint::parse("http://127.0.0.1:8080/work?steps=sleep:100").unwrap();
        assert_eq!(
            text(plain_get(&t)),
            format!(
                "GET /work?steps=sleep:100 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: iolab/{}\r\nAccept: */*\r\n\r\n",
                env!("CARGO_PKG_VERSION")
            )
        );
    }

    #[test]
    fn headers_replace_defaults_and_bodies_get_a_length() {
        let t = Endpoint::parse("https://api.test/orders").unwrap();
        let h = vec![
            ("accept".to_string(), "application/json".to_string()),
            ("X-Key".to_string(), "k".to_string()),
        ];
        let s = text(render(&t, "POST", &h, b"{\"a\":1}"));
        assert!(
            s.starts_with("POST /orders HTTP/1.1\r\nHost: api.test\r\n"),
            "{s}"
        );
        assert!(
            s.contains(
                "accept: application/json\r\nX-Key: k\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
            ),
            "{s}"
        );
        assert!(!s.contains("*/*"), "{s}");
        assert!(text(render(&t, "PUT", &[], b"")).contains("Content-Length: 0\r\n"));
        assert!(!text(render(&t, "DELETE", &[], b"")).contains("Content-Length"));
    }

    #[test]
    fn every_request_goes_to_one_origin() {
        let first = Endpoint::parse("http://h:1/a").unwrap();
        let ok = [
            RequestTemplate::get("http://h:1/a"),
            RequestTemplate::get("http://h:1/b?x"),
        ];
        assert_eq!(render_all(&first, &ok).unwrap().len(), 2);
        let e = render_all(&first, &[RequestTemplate::get("http://other:1/")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("one origin") && !e.contains('\n'), "{e}");
        let mut bad = RequestTemplate::get("http://h:1/");
        bad.method = "B AD".into();
        assert!(render_all(&first, &[bad])
            .unwrap_err()
            .to_string()
            .starts_with("request 1:"));
    }
}
