//! A list of requests in vegeta's HTTP format (vegeta calls it a targets
//! file; `iolab attack --targets FILE` reads it, so files written for vegeta
//! work unchanged): a `METHOD URL` line, then `Name: value` header lines,
//! then optionally `@path` (the body, read from that file, relative to the
//! current folder as vegeta reads it); a blank line (or the next
//! `METHOD URL` line) ends a request; `#` starts a comment line.
//!
//! ```text
//! GET http://127.0.0.1:8080/api/orders?id=1
//! Accept: application/json
//!
//! POST http://127.0.0.1:8080/api/orders
//! Content-Type: application/json
//! @order.json
//! ```

use std::fmt::Display;

use iolab_model::request::{check_method, parse_header, RequestError, RequestTemplate};

/// A request list that cannot be read; `origin` names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    /// A line that cannot be used.
    #[error("{origin}:{line}: {why}")]
    Line {
        /// The list's name.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        why: LineFault,
    },
    /// No request at all.
    #[error("{0}: no requests (write one `METHOD URL` line per request, e.g. GET http://127.0.0.1:8080/)")]
    Empty(String),
}

/// What is wrong with a line of a request list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineFault {
    /// Neither a request line nor a header of an open request.
    #[error("'{0}' is not a `METHOD URL` line (e.g. GET http://127.0.0.1:8080/)")]
    NotRequest(String),
    /// A request line whose URL has no scheme.
    #[error("'{url}' is not an absolute URL (write `{method} http://HOST:PORT/PATH`)")]
    NotAbsolute {
        /// The method.
        method: String,
        /// The URL as written (its first 60 characters).
        url: String,
    },
    /// A method or header that cannot be sent.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The `@path` body could not be read (the reader's message).
    #[error("{0}")]
    Body(String),
}

/// Parse a request list; `origin` names it in errors (`FILE:LINE: ...`) and
/// `read` loads an `@path` body (its error is the reader's own message).
pub fn parse_request_list<E: Display>(
    text: &str,
    origin: &str,
    read: &dyn Fn(&str) -> Result<Vec<u8>, E>,
) -> Result<Vec<RequestTemplate>, ListError> {
    let mut out: Vec<RequestTemplate> = Vec::new();
    let mut open = false;
    for (i, raw) in text.lines().enumerate() {
        let at = |why: LineFault| ListError::Line {
            origin: origin.to_string(),
            line: i + 1,
            why,
        };
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            open = false;
            continue;
        }
        if let Some(request) = request_line(line) {
            let (method, url) = request.map_err(at)?;
            out.push(RequestTemplate::get(url));
            out.last_mut().expect("just pushed").method = method;
            open = true;
            continue;
        }
        let Some(current) = out.last_mut().filter(|_| open) else {
            return Err(at(LineFault::NotRequest(short(line))));
        };
        if let Some(path) = line.strip_prefix('@') {
            current.body = read(path.trim()).map_err(|e| at(LineFault::Body(e.to_string())))?;
            open = false;
        } else {
            current
                .headers
                .push(parse_header(line).map_err(|e| at(e.into()))?);
        }
    }
    if out.is_empty() {
        return Err(ListError::Empty(origin.to_string()));
    }
    Ok(out)
}

/// `Some` when the line is a request line, `METHOD SP URL` with METHOD
/// upper-case letters only (as vegeta's own parser, which matches a list of
/// upper-case methods): a header line is `Name: value`, and its name ends in
/// a colon, so `Referer: http://h/` or `Origin: http://h` (a URL as the value)
/// is never taken for a request. The URL must have a scheme.
fn request_line(line: &str) -> Option<Result<(String, String), LineFault>> {
    let (method, url) = line.split_once(char::is_whitespace)?;
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let url = url.trim();
    if !url.contains("://") || url.contains(char::is_whitespace) {
        return Some(Err(LineFault::NotAbsolute {
            method: method.to_string(),
            url: short(url),
        }));
    }
    Some(
        check_method(method)
            .map(|_| (method.to_string(), url.to_string()))
            .map_err(LineFault::from),
    )
}

fn short(s: &str) -> String {
    s.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> std::io::Result<Vec<u8>> {
        match path {
            "order.json" => Ok(b"{\"id\":1}".to_vec()),
            p => Err(std::io::Error::other(format!("cannot read body file {p}"))),
        }
    }

    #[test]
    fn reads_a_vegeta_request_list() {
        let text = "# orders\nGET http://h:1/a?x=1\nAccept: application/json\n\n\
                    POST http://h:1/orders\nContent-Type: application/json\n@order.json\n\
                    DELETE http://h:1/orders/1\n";
        let t = parse_request_list(text, "t.txt", &read).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(
            (t[0].method.as_str(), t[0].url.as_str()),
            ("GET", "http://h:1/a?x=1")
        );
        assert_eq!(t[0].header("accept"), Some("application/json"));
        assert_eq!(t[1].body, b"{\"id\":1}");
        assert_eq!(t[2].method, "DELETE");
        assert!(t[2].headers.is_empty());
    }

    #[test]
    fn faults_name_file_and_line() {
        for (text, line) in [
            ("Accept: x\n", 1),
            ("GET http://h/\nnot a header\n", 2),
            ("GET http://h/\n@missing.json\n", 2),
            ("G/T http://h/\n", 1),
            ("GET http://h/\n\nX: 1\n", 3),
        ] {
            let e = parse_request_list(text, "t.txt", &read)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("t.txt:{line}: ")) && !e.contains('\n'),
                "{e}"
            );
        }
        assert!(parse_request_list("# nothing\n", "t.txt", &read)
            .unwrap_err()
            .to_string()
            .contains("no requests"));
    }

    #[test]
    fn r30_16_a_header_whose_value_is_a_url_is_a_header() {
        let text = "GET http://h:1/a\nReferer: http://h:1/from\nOrigin: https://site.example\n\
                    X-Next: GET http://h:1/b\n\nPOST http://h:1/c\nReferer: http://h:1/a\n";
        let t = parse_request_list(text, "t.txt", &read).unwrap();
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!(t[0].header("referer"), Some("http://h:1/from"));
        assert_eq!(t[0].header("origin"), Some("https://site.example"));
        assert_eq!(t[0].header("x-next"), Some("GET http://h:1/b"));
        assert_eq!(
            (t[1].method.as_str(), t[1].url.as_str()),
            ("POST", "http://h:1/c")
        );
        assert_eq!(t[1].header("referer"), Some("http://h:1/a"));
        // A header line with a URL value and no request open is still a
        // fault of the file, named as such; so is a request without a URL.
        let e = parse_request_list("Referer: http://h/\n", "t.txt", &read)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.txt:1: ") && e.contains("METHOD URL"),
            "{e}"
        );
        let e = parse_request_list("GET /a\n", "t.txt", &read)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.txt:1: ") && e.contains("absolute URL"),
            "{e}"
        );
    }
}
