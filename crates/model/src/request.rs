//! What a request sends beyond a plain GET: method, headers and body, the way
//! curl (`-X`, `-H`, `--data`) and vegeta (a targets file) let a user say it.
//! Used by `iolab attack` ([`RequestSet`] in an
//! [`AttackPlan`](crate::attack::AttackPlan)) and by foreign targets in
//! presets ([`RequestTemplate`] with a path instead of a URL).
//!
//! The checks here are the ones that need no socket: a method is an HTTP
//! token, a header name a token and its value free of line breaks, and the
//! headers the generator sets itself (`Content-Length`, `Transfer-Encoding`,
//! `Connection`) are refused rather than silently doubled.

use serde::{Deserialize, Serialize};

use crate::protocol::Protocol;

/// A method or header that cannot be sent; one line naming the fault and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The method is not a token.
    #[error("method '{0}' is not an HTTP token (use e.g. GET, POST, PUT)")]
    Method(String),
    /// The header name is not a token.
    #[error("header name '{0}' is not an HTTP token (use e.g. -H 'X-Api-Key: secret')")]
    HeaderName(String),
    /// A line break in a header's value.
    #[error("header '{0}' has a line break in its value: give one line per header")]
    LineBreak(String),
    /// A header the generator sets itself.
    #[error("header '{0}' is set by iolab from the body and --new-connection: remove it")]
    Own(String),
    /// `Name: value` without the colon.
    #[error("header '{0}' has no ':' (use 'Name: value', e.g. 'Accept: application/json')")]
    NoColon(String),
}

/// One request: sent as written, with `Host`, `User-Agent`, `Accept` and
/// `Content-Length` added unless the headers set the first three.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestTemplate {
    /// HTTP method, e.g. `GET`, `POST`.
    pub method: String,
    /// A full URL (`iolab attack`) or a path with its query (a preset's
    /// `request.path`, joined to the target's base URL).
    pub url: String,
    /// Headers in order, `(name, value)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The body (empty: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<u8>,
}

impl RequestTemplate {
    /// A GET of `url` with no headers or body.
    pub fn get(url: impl Into<String>) -> RequestTemplate {
        RequestTemplate {
            method: "GET".into(),
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Check method and headers; the error is one line naming the fault and
    /// the fix.
    pub fn check(&self) -> Result<(), RequestError> {
        check_method(&self.method)?;
        for (name, value) in &self.headers {
            check_header(name, value)?;
        }
        Ok(())
    }

    /// The value of header `name` (case-insensitive), if set.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The requests of one attack, sent in turn, and how to treat TLS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestSet {
    /// Requests sent in turn (round robin); empty: a GET of the plan's
    /// `target`. Every URL must name the same scheme, host and port (one
    /// connection pool).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<RequestTemplate>,
    /// HTTPS: accept any certificate (a self-signed one in a test set-up).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// HTTP/1.1, HTTP/2 with its streams per connection, or a gRPC call.
    #[serde(default, skip_serializing_if = "Protocol::is_default")]
    pub protocol: Protocol,
    /// A replayed mix (`--replay`): the endpoint of each request of `list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<crate::replay::ReplayMix>,
}

impl RequestSet {
    /// A plain GET of the plan's target over a verified HTTP/1.1 connection.
    pub fn is_plain_get(&self) -> bool {
        self.list.is_empty() && !self.insecure && self.protocol.is_default() && self.mix.is_none()
    }
}

/// A foreign target: a user's own HTTP service, measured with a request of
/// their own instead of `/work?steps=` (no contract check; see
/// `crates/lab/src/targets/foreign.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForeignSpec {
    /// A service already running: its base URL, e.g. `http://127.0.0.1:8080`
    /// (`None`: iolab starts the target's `command`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// What each request sends; its `url` is the path (and query).
    pub request: RequestTemplate,
    /// The path that answers 200 once it is up (`None`: the request's path
    /// answering anything but a 5xx).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    /// Its PID, for `/proc` telemetry of a service iolab did not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its own Prometheus endpoint, a path or a URL (e.g. Spring Boot's
    /// `/actuator/prometheus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<String>,
    /// The series kept from `metrics` (empty: the busy threads and pool
    /// connections of Tomcat, Jetty and HikariCP).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<String>,
    /// HTTPS: accept any certificate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// HTTP/2 (`http2 = true` in a preset, with `streams`) or a gRPC call.
    #[serde(default, skip_serializing_if = "Protocol::is_default")]
    pub protocol: Protocol,
}

/// What a foreign target's run says about its gate (the report shows it).
pub const CONTRACT_SKIPPED: &str =
    "Foreign target: the contract check (iolab verify) was skipped; it was measured with its own request.";

impl ForeignSpec {
    /// The full URL of `path_or_url` on the service at `base`.
    pub fn join(base: &str, path_or_url: &str) -> String {
        if path_or_url.contains("://") {
            path_or_url.to_string()
        } else {
            format!("{}{}", base.trim_end_matches('/'), path_or_url)
        }
    }

    /// The requests sent to the service at `base`.
    pub fn requests(&self, base: &str) -> RequestSet {
        let mut r = self.request.clone();
        r.url = Self::join(base, &self.request.url);
        RequestSet {
            list: vec![r],
            insecure: self.insecure,
            protocol: self.protocol.clone(),
            mix: None,
        }
    }

    /// The series to keep from its metrics.
    pub fn series(&self) -> Vec<String> {
        if self.series.is_empty() {
            crate::capacity::gauges::default_series()
        } else {
            self.series.clone()
        }
    }
}

/// `tchar` of RFC 9110: what a method and a header name are made of.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A method is an HTTP token, e.g. `GET` or `POST`.
pub fn check_method(method: &str) -> Result<(), RequestError> {
    if is_token(method) {
        Ok(())
    } else {
        Err(RequestError::Method(method.to_string()))
    }
}

/// Headers the generator writes itself (framing and connection handling).
const OWN_HEADERS: [&str; 3] = ["content-length", "transfer-encoding", "connection"];

/// A header name is a token, its value has no line break, and it is not one
/// the generator must set itself.
pub fn check_header(name: &str, value: &str) -> Result<(), RequestError> {
    if !is_token(name) {
        return Err(RequestError::HeaderName(name.to_string()));
    }
    if value.contains(['\r', '\n', '\0']) {
        return Err(RequestError::LineBreak(name.to_string()));
    }
    if OWN_HEADERS.iter().any(|h| name.eq_ignore_ascii_case(h)) {
        return Err(RequestError::Own(name.to_string()));
    }
    Ok(())
}

/// Parse `Name: value` (curl's and vegeta's `-H`).
pub fn parse_header(text: &str) -> Result<(String, String), RequestError> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| RequestError::NoColon(text.to_string()))?;
    let (name, value) = (name.trim().to_string(), value.trim().to_string());
    check_header(&name, &value)?;
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_and_refuse_in_one_line() {
        assert_eq!(
            parse_header("X-Key:  a:b ").unwrap(),
            ("X-Key".to_string(), "a:b".to_string())
        );
        for bad in ["NoColon", "Bad Name: x", ": x", "Content-Length: 3"] {
            let e = parse_header(bad).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(check_header("X", "a\r\nInjected: 1").is_err());
        assert!(check_method("GET").is_ok() && check_method("G T").is_err());
        let mut t = RequestTemplate::get("http://x/");
        t.headers.push(("accept".into(), "text/plain".into()));
        assert_eq!(t.header("Accept"), Some("text/plain"));
        t.method = String::new();
        assert!(t.check().is_err());
    }
}
