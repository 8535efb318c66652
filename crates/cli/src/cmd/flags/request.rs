//! What each request sends, for `iolab attack` and `iolab capacity`:
//! method, headers, body and TLS, as curl and vegeta take them, a vegeta
//! targets file (`--targets`, parsed by `iolab_loadgen`), HTTP/2, and a
//! gRPC call (`--call`, `--proto`, `--data`, ghz's names).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use iolab_model::limits::{MAX_BODY_BYTES, MAX_TARGETS_BYTES};
use iolab_model::protocol::{GrpcCall, HttpVersion, Protocol};
use iolab_model::request::{parse_header, RequestSet, RequestTemplate};

use crate::CliError;

/// Request flags.
#[derive(Debug, Clone, clap::Args)]
pub struct RequestFlags {
    /// HTTP method of every request.
    #[arg(long, short = 'm', value_name = "M", default_value = "GET")]
    pub method: String,
    /// A header sent with every request, 'Name: value'; repeat the flag for more.
    #[arg(long = "header", short = 'H', value_name = "H")]
    pub headers: Vec<String>,
    /// The body of every request (Content-Length is set from it).
    #[arg(long, value_name = "TEXT", conflicts_with = "body_file")]
    pub body: Option<String>,
    /// The body of every request, read from FILE (any bytes).
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// Requests from a vegeta targets file (- reads stdin), sent in turn:
    /// `METHOD URL` lines, then `Name: value` headers, then `@path` for a
    /// body; a blank line between targets. -H headers and --body apply to
    /// each (its own win).
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
    /// HTTPS: accept the server's certificate whatever it is (self-signed).
    #[arg(long, short = 'k')]
    pub insecure: bool,
    /// HTTP/2: h2 by ALPN on https://, h2c with prior knowledge on http://.
    #[arg(long, conflicts_with = "http1_1")]
    pub http2: bool,
    /// HTTP/1.1, one request at a time per connection (the default).
    #[arg(long = "http1.1")]
    pub http1_1: bool,
    /// HTTP/2: requests in flight on each connection, so connections x
    /// streams in all; a server allowing fewer makes the rest wait (timed).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub streams: u32,
    /// gRPC: call this unary method, package.Service/Method, on a grpc://
    /// (h2c) or grpcs:// (TLS) URL; -H adds metadata, --timeout is its deadline.
    #[arg(long, value_name = "METHOD", conflicts_with_all = ["body", "body_file", "targets", "http1_1"])]
    pub call: Option<String>,
    /// gRPC: a .proto file defining the method (repeat for more; imports are
    /// found beside each file); without one, the server's reflection is asked.
    #[arg(long = "proto", value_name = "FILE", requires = "call")]
    pub protos: Vec<PathBuf>,
    /// gRPC: the request message as protobuf JSON, e.g. '{"name":"x"}'
    /// [default: {}, every field at its default].
    #[arg(long, value_name = "JSON", requires = "call")]
    pub data: Option<String>,
}

impl RequestFlags {
    /// The URL attacked and the requests: one from `url`, -m, -H and the
    /// body, or a targets file's with -H and the body added where a target
    /// has none.
    pub fn requests(&self, url: Option<&str>) -> Result<(String, RequestSet), CliError> {
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h).map_err(|e| CliError::usage(format!("-H: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let body = match (&self.body, &self.body_file) {
            (Some(text), _) => text.clone().into_bytes(),
            (None, Some(path)) => read_file("--body-file", path)?,
            (None, None) => Vec::new(),
        };
        let list = match (url, &self.targets) {
            (Some(_), Some(_)) => {
                return Err(CliError::usage(
                    "give a URL or --targets FILE, not both (a targets file names each URL)",
                ))
            }
            (Some(url), None) => {
                let t = RequestTemplate {
                    method: self.method.clone(),
                    url: url.to_string(),
                    headers,
                    body,
                };
                t.check().map_err(CliError::usage)?;
                if t == RequestTemplate::get(url) {
                    Vec::new()
                } else {
                    vec![t]
                }
            }
            (None, Some(path)) => self.file(path, &headers, &body)?,
            (None, None) => return Err(CliError::usage("give a URL or --targets FILE")),
        };
        let target = match (url, list.first()) {
            (Some(url), _) => url.to_string(),
            (None, Some(first)) => first.url.clone(),
            (None, None) => return Err(CliError::usage("--targets: the file has no requests")),
        };
        let grpc = self.call.as_ref().map(|method| GrpcCall {
            method: method.clone(),
            data: self.data.clone().unwrap_or_else(|| "{}".into()),
            protos: self.protos.clone(),
        });
        let protocol = Protocol {
            http: match self.http2 || grpc.is_some() {
                true => HttpVersion::Http2,
                false => HttpVersion::Http1,
            },
            streams: self.streams,
            grpc,
        };
        // A grpc:// URL without --call lacks its method, whatever else is
        // asked (`--streams` included): the plan's check names `--call`.
        let scheme = target.split("://").next().unwrap_or_default();
        let grpc_url = ["grpc", "grpcs"]
            .iter()
            .any(|s| scheme.eq_ignore_ascii_case(s));
        if !(grpc_url && protocol.grpc.is_none()) {
            protocol.check().map_err(CliError::usage)?;
        }
        let set = RequestSet {
            list,
            insecure: self.insecure,
            protocol,
            mix: None,
        };
        Ok((target, set))
    }

    fn file(
        &self,
        path: &Path,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<Vec<RequestTemplate>, CliError> {
        if self.method != "GET" {
            return Err(CliError::usage(
                "-m/--method applies to a URL; a targets file names the method of each request",
            ));
        }
        let text = String::from_utf8(read_file("--targets", path)?).map_err(|_| {
            CliError::usage(format!("--targets {}: is not UTF-8 text", path.display()))
        })?;
        let read = |p: &str| {
            iolab_files::read(Path::new(p), MAX_BODY_BYTES)
                .map_err(|e| format!("cannot read body file {p}: {e}"))
        };
        let mut list = iolab_loadgen::parse_request_list(&text, &path.display().to_string(), &read)
            .map_err(CliError::usage)?;
        for t in &mut list {
            for (name, value) in headers {
                if t.header(name).is_none() {
                    t.headers.push((name.clone(), value.clone()));
                }
            }
            if t.body.is_empty() {
                t.body = body.to_vec();
            }
        }
        Ok(list)
    }
}

/// A file named by a flag, with the flag in the error; `-` is stdin (a
/// pipe or a redirected file, read by the same reader with its caps).
fn read_file(flag: &str, path: &Path) -> Result<Vec<u8>, CliError> {
    let cap = match flag {
        "--targets" => MAX_TARGETS_BYTES,
        _ => MAX_BODY_BYTES,
    };
    let shown = path.display().to_string();
    let path = if path == Path::new("-") {
        if std::io::stdin().is_terminal() {
            return Err(CliError::usage(format!(
                "{flag} -: stdin is a terminal: pipe the requests in (e.g. echo 'GET http://127.0.0.1:8080/' | iolab attack {flag} - --rate 50 -d 10s)"
            )));
        }
        Path::new("/dev/stdin")
    } else {
        path
    };
    iolab_files::read(path, cap).map_err(|e| CliError::usage(format!("{flag} {shown}: {e}")))
}
