//! The endpoint attacked (a URL: scheme, host, port, path): parsed once and
//! resolved once; `wire` renders its requests once, so the hot path only
//! copies bytes. `grpc://` and `grpcs://` name a gRPC service (h2c, or h2
//! over TLS): the same endpoint, its calls made by [`crate::grpc`].

use std::net::{SocketAddr, ToSocketAddrs};

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
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let bad = |why: &str| format!("bad URL '{url}': {why} (use e.g. http://127.0.0.1:8080/)");
        let ((tls, grpc), rest) = match url.split_once("://") {
            Some(("http", rest)) => ((false, false), rest),
            Some(("https", rest)) => ((true, false), rest),
            Some(("grpc", rest)) => ((false, true), rest),
            Some(("grpcs", rest)) => ((true, true), rest),
            Some(_) => {
                return Err(bad(
                    "only http://, https://, grpc:// and grpcs:// are supported",
                ))
            }
            None => return Err(bad("missing http://")),
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
            return Err(bad("user info is not supported"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad("junk after ']'"))?),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("host has spaces"));
        }
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("path has spaces (percent-encode them)"));
        }
        let port = match port {
            None if tls => 443,
            None => 80,
            Some(p) => match p.parse::<u16>() {
                Ok(0) | Err(_) => return Err(bad("port must be 1-65535")),
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
    pub fn resolve(&self) -> Result<SocketAddr, String> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve '{}': {e}", self.host))?
            .next()
            .ok_or_else(|| format!("'{}' resolves to no address", self.host))
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
            let e = Endpoint::parse(bad).unwrap_err();
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
