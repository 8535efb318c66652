//! The endpoint attacked (a URL: scheme, host, port, path): parsed once and
//! resolved once; `wire` renders its requests once, so the hot path only
//! copies bytes. `grpc://` and `grpcs://` name a gRPC service (h2c, or h2
//! over TLS): the same endpoint, its calls made by [`crate::grpc`].

use std::net::{SocketAddr, ToSocketAddrs};

/// A URL that cannot be attacked; `url` is as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad URL '{url}': {why} (use e.g. http://127.0.0.1:8080/)")]
pub struct UrlError {
    /// As given.
    pub url: String,
    /// What is wrong with it.
    pub why: UrlFault,
}

/// What is wrong with a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UrlFault {
    /// A scheme other than the four.
    #[error("only http://, https://, grpc:// and grpcs:// are supported")]
    Scheme,
    /// No `scheme://`.
    #[error("missing http://")]
    NoScheme,
    /// `user@host`.
    #[error("user info is not supported")]
    UserInfo,
    /// `[::1` without `]`.
    #[error("unclosed '['")]
    Unclosed,
    /// Something other than `:PORT` after `]`.
    #[error("junk after ']'")]
    AfterBracket,
    /// No host.
    #[error("missing host")]
    NoHost,
    /// Spaces or control characters in the host.
    #[error("host has spaces")]
    HostSpaces,
    /// Spaces or control characters in the path.
    #[error("path has spaces (percent-encode them)")]
    PathSpaces,
    /// Not a port number, or 0.
    #[error("port must be 1-65535")]
    Port,
}

/// A host that resolves to no address (the target cannot be used).
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The lookup failed.
    #[error("cannot resolve '{host}': {why}")]
    Lookup {
        /// The host.
        host: String,
        /// What the resolver said.
        why: std::io::Error,
    },
    /// The lookup found nothing.
    #[error("'{0}' resolves to no address")]
    NoAddress(String),
}

/// A parsed `http[s]://host[:port][/path]` (or `grpc[s]://`) URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `https://` or `grpcs://`: TLS over the connection.
    pub tls: bool,
    /// `grpc://` or `grpcs://`: a gRPC service (its calls: `--call`).
    pub grpc: bool,
    /// Host name or address as written (IPv6 without brackets).
    pub host: String,
    /// Port (80 when not written).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

impl Endpoint {
    /// Parse a URL; the error is one line naming the fault and the fix.
    pub fn parse(url: &str) -> Result<Endpoint, UrlError> {
        let bad = |why| UrlError {
            url: url.to_string(),
            why,
        };
        let ((tls, grpc), rest) = match url.split_once("://") {
            Some(("http", rest)) => ((false, false), rest),
            Some(("https", rest)) => ((true, false), rest),
            Some(("grpc", rest)) => ((false, true), rest),
            Some(("grpcs", rest)) => ((true, true), rest),
            Some(_) => return Err(bad(UrlFault::Scheme)),
            None => return Err(bad(UrlFault::NoScheme)),
        };
        // A fragment ends the authority too (`http://h:8080#top`): it is
        // the client's alone and never sent, so it is dropped, as curl does.
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let path = path.split('#').next().unwrap_or("/").to_string();
        if authority.contains('@') {
            return Err(bad(UrlFault::UserInfo));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad(UrlFault::Unclosed))?;
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| bad(UrlFault::AfterBracket))?,
                ),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(bad(UrlFault::NoHost));
        }
        if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad(UrlFault::HostSpaces));
        }
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad(UrlFault::PathSpaces));
        }
        let port = match port {
            None if tls => 443,
            None => 80,
            Some(p) => match p.parse::<u16>() {
                Ok(0) | Err(_) => return Err(bad(UrlFault::Port)),
                Ok(p) => p,
            },
        };
        Ok(Endpoint {
            tls,
            grpc,
            host,
            port,
            path,
        })
    }

    /// Resolve to the first socket address (done once, before the run).
    pub fn resolve(&self) -> Result<SocketAddr, ResolveError> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|why| ResolveError::Lookup {
                host: self.host.clone(),
                why,
            })?
            .next()
            .ok_or_else(|| ResolveError::NoAddress(self.host.clone()))
    }

    /// The `Host` header value.
    pub(crate) fn host_header(&self) -> String {
        let h = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            h
        } else {
            format!("{h}:{}", self.port)
        }
    }

    /// Scheme, host and port: what one connection pool serves.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme(), self.host_header())
    }

    /// The URL's scheme: `http`, `https`, `grpc` or `grpcs`.
    pub fn scheme(&self) -> &'static str {
        match (self.grpc, self.tls) {
            (false, false) => "http",
            (false, true) => "https",
            (true, false) => "grpc",
            (true, true) => "grpcs",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms() {
        let t = Endpoint::parse("http://127.0.0.1:8080/work?steps=sleep:100").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8080, "/work?steps=sleep:100")
        );
        let t = Endpoint::parse("http://localhost").unwrap();
        assert_eq!((t.port, t.path.as_str()), (80, "/"));
        let t = Endpoint::parse("http://[::1]:9/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        assert_eq!(t.host_header(), "[::1]:9");
        let t = Endpoint::parse("http://h:1?q=1").unwrap();
        assert_eq!(t.path, "/?q=1");
        let t = Endpoint::parse("https://h/x").unwrap();
        assert_eq!(
            (t.tls, t.port, t.origin().as_str()),
            (true, 443, "https://h")
        );
        assert_eq!(
            Endpoint::parse("https://h:8443").unwrap().origin(),
            "https://h:8443"
        );
        let t = Endpoint::parse("grpcs://h:50051").unwrap();
        assert_eq!((t.tls, t.grpc, t.path.as_str()), (true, true, "/"));
        assert_eq!(t.origin(), "grpcs://h:50051");
        let t = Endpoint::parse("grpc://h:50051").unwrap();
        assert_eq!((t.tls, t.grpc), (false, true));
    }

    #[test]
    fn refuses_what_it_cannot_send() {
        for bad in [
            "ftp://x",
            "127.0.0.1:80",
            "http://",
            "http://x:0/",
            "http://x:99999/",
            "http://x/a b",
        ] {
            let e = Endpoint::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("bad URL") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn r30_18_a_fragment_after_the_port_is_dropped_not_a_bad_port() {
        for (url, path) in [
            ("http://h:8080#frag", "/"),
            ("http://h#frag", "/"),
            ("http://h:8080/x#frag", "/x"),
            ("http://h:8080?q=1#frag", "/?q=1"),
        ] {
            let t = Endpoint::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!((t.host.as_str(), t.path.as_str()), ("h", path), "{url}");
        }
        assert_eq!(Endpoint::parse("http://h:8080#frag").unwrap().port, 8080);
    }
}
