//! The protocol axis as one table: every protocol `iolab attack` speaks is
//! a row ([`ProtocolDef`]) naming its URL schemes, the flags that ask for
//! it, whether it is request/answer or held, and which engine carries it
//! over which transport. The engine's choice and its refusals
//! (`iolab_loadgen`'s `engine::resolve`), `iolab attack --help` and the
//! table in docs/attack.md are all made from these rows, so a new protocol
//! is one row here (and its module in `iolab_loadgen`).

use crate::engine::Engine;

/// One protocol the generator speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolKind {
    Http1,
    Http2,
    GrpcUnary,
    WebSocket,
    Sse,
    GrpcStream,
}

/// How a protocol's work is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Requests sent on a schedule or by clients, each answered (`requests`).
    RequestAnswer,
    /// Connections (or calls) opened, held, their messages counted
    /// (`connections`, `messages`).
    Held,
}

impl Shape {
    /// The word in help and docs.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::RequestAnswer => "request/answer",
            Shape::Held => "held",
        }
    }
}

/// The transports one engine carries a protocol over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transports {
    /// Plain TCP (`http://`, `ws://`, `grpc://`).
    pub plain: bool,
    /// TLS (`https://`, `wss://`, `grpcs://`).
    pub tls: bool,
}

impl Transports {
    const BOTH: Transports = Transports {
        plain: true,
        tls: true,
    };
    const PLAIN: Transports = Transports {
        plain: true,
        tls: false,
    };
    const NONE: Transports = Transports {
        plain: false,
        tls: false,
    };

    /// Whether the transport (TLS or not) is carried.
    pub fn carries(self, tls: bool) -> bool {
        match tls {
            true => self.tls,
            false => self.plain,
        }
    }

    /// The word in help and docs: `plain, TLS`, `plain`, or `no`.
    pub fn as_str(self) -> &'static str {
        match (self.plain, self.tls) {
            (true, true) => "plain, TLS",
            (true, false) => "plain",
            (false, true) => "TLS",
            (false, false) => "no",
        }
    }
}

/// One row of the protocol table.
#[derive(Debug)]
pub struct ProtocolDef {
    pub kind: ProtocolKind,
    /// The name in help, docs and refusals: `HTTP/2`.
    pub name: &'static str,
    /// The URL schemes, plain then TLS: `("http", "https")`.
    pub schemes: (&'static str, &'static str),
    /// What asks for it besides the scheme (`--http2`), empty when the
    /// scheme alone does.
    pub flags: &'static str,
    pub shape: Shape,
    /// What the epoll engine (tokio) carries it over.
    pub epoll: Transports,
    /// What the io_uring engine carries it over.
    pub io_uring: Transports,
    /// Why io_uring does not carry what it does not (docs and help).
    pub why_not_io_uring: &'static str,
}

/// Every protocol, in help and docs order.
pub const PROTOCOLS: &[ProtocolDef] = &[
    ProtocolDef {
        kind: ProtocolKind::Http1,
        name: "HTTP/1.1",
        schemes: ("http", "https"),
        flags: "",
        shape: Shape::RequestAnswer,
        epoll: Transports::BOTH,
        io_uring: Transports::PLAIN,
        why_not_io_uring: "the ring moves plain bytes and has no TLS session to drive",
    },
    ProtocolDef {
        kind: ProtocolKind::Http2,
        name: "HTTP/2",
        schemes: ("http", "https"),
        flags: "--http2",
        shape: Shape::RequestAnswer,
        epoll: Transports::BOTH,
        io_uring: Transports::NONE,
        why_not_io_uring: H2_ON_TOKIO,
    },
    ProtocolDef {
        kind: ProtocolKind::GrpcUnary,
        name: "gRPC",
        schemes: ("grpc", "grpcs"),
        flags: "--call",
        shape: Shape::RequestAnswer,
        epoll: Transports::BOTH,
        io_uring: Transports::NONE,
        why_not_io_uring: H2_ON_TOKIO,
    },
    ProtocolDef {
        kind: ProtocolKind::WebSocket,
        name: "WebSocket",
        schemes: ("ws", "wss"),
        flags: "--hold",
        shape: Shape::Held,
        epoll: Transports::BOTH,
        io_uring: Transports::NONE,
        why_not_io_uring: "tokio-tungstenite drives tokio streams",
    },
    ProtocolDef {
        kind: ProtocolKind::Sse,
        name: "SSE",
        schemes: ("http", "https"),
        flags: "--sse --hold",
        shape: Shape::Held,
        epoll: Transports::BOTH,
        io_uring: Transports::NONE,
        why_not_io_uring: "held connections run on tokio streams",
    },
    ProtocolDef {
        kind: ProtocolKind::GrpcStream,
        name: "gRPC streaming",
        schemes: ("grpc", "grpcs"),
        flags: "--call --hold",
        shape: Shape::Held,
        epoll: Transports::BOTH,
        io_uring: Transports::NONE,
        why_not_io_uring: H2_ON_TOKIO,
    },
];

/// Why the HTTP/2 rows stay off io_uring.
const H2_ON_TOKIO: &str = "the h2 crate drives tokio streams, not the ring's buffers";

impl ProtocolKind {
    /// Every protocol, in table order.
    pub fn all() -> impl Iterator<Item = ProtocolKind> {
        PROTOCOLS.iter().map(|d| d.kind)
    }

    /// Its row.
    pub fn def(self) -> &'static ProtocolDef {
        PROTOCOLS
            .iter()
            .find(|d| d.kind == self)
            .expect("every protocol has a row")
    }
}

impl ProtocolDef {
    /// What an engine carries this protocol over (`auto` as epoll: the one
    /// it falls back to).
    pub fn transports(&self, engine: Engine) -> Transports {
        match engine {
            Engine::IoUring => self.io_uring,
            Engine::Epoll | Engine::Auto => self.epoll,
        }
    }

    /// The URL schemes as written in help: `http(s)://`, `ws:// or wss://`.
    pub fn urls(&self) -> String {
        let (plain, tls) = self.schemes;
        match tls.strip_prefix(plain) {
            Some(tail) => format!("{plain}({tail})://"),
            None => format!("{plain}:// or {tls}://"),
        }
    }

    /// How it is asked for: `http(s)://`, `http(s):// with --http2`.
    pub fn asked_by(&self) -> String {
        match self.flags {
            "" => self.urls(),
            flags => format!("{} with {flags}", self.urls()),
        }
    }

    /// The refusal when `engine` does not carry it over `tls` (`None`: it
    /// does). One line naming the fault and the engine that does.
    pub fn refusal(&self, engine: Engine, tls: bool) -> Option<String> {
        let carried = self.transports(engine);
        if carried.carries(tls) {
            return None;
        }
        let fallback = ENGINES
            .iter()
            .find(|e| **e != engine && self.transports(**e).carries(tls))
            .map_or("none".into(), |e| {
                format!("--engine {} (or auto)", e.as_str())
            });
        Some(match carried.plain || carried.tls {
            // The protocol runs on this engine, only not over this transport.
            true => format!(
                "--engine {} does not speak {}: use {fallback} for {}://",
                engine.as_str(),
                if tls { "TLS" } else { "plain TCP" },
                if tls { self.schemes.1 } else { self.schemes.0 },
            ),
            false => format!(
                "--engine {} does not speak {}: use {fallback} for {}",
                engine.as_str(),
                self.name,
                self.asked_by(),
            ),
        })
    }
}

/// The engines a row can name (not `auto`: it chooses between them).
const ENGINES: [Engine; 2] = [Engine::Epoll, Engine::IoUring];

/// The protocols, one line each, for `iolab attack URL`'s help.
pub fn url_help() -> String {
    let rows: Vec<String> = PROTOCOLS
        .iter()
        .map(|d| format!("{} ({}): {}", d.name, d.shape.as_str(), d.asked_by()))
        .collect();
    format!(
        "URL to attack, e.g. http://127.0.0.1:8080/work?steps=sleep:100; or give --targets. By protocol: {}",
        rows.join("; ")
    )
}

/// What each engine carries, for `--engine`'s help.
pub fn engine_help() -> String {
    let on_uring: Vec<String> = PROTOCOLS
        .iter()
        .filter(|d| d.io_uring.plain || d.io_uring.tls)
        .map(|d| format!("{} over {}", d.name, d.io_uring.as_str()))
        .collect();
    format!(
        "Event-loop engine of the generator threads; both keep the same schedule and books; auto takes io_uring where the kernel allows it and the protocol runs on it (cheaper per request, docs/attack.md). io_uring carries {}; every other protocol and transport runs on epoll.",
        on_uring.join(", ")
    )
}

/// The table in docs/attack.md, as markdown (checked against the page by
/// the docs test).
pub fn markdown() -> String {
    let mut out = String::from(
        "| protocol | asked by | shape | epoll | io_uring | why not io_uring |\n|---|---|---|---|---|---|\n",
    );
    for d in PROTOCOLS {
        let why = match d.io_uring == Transports::BOTH {
            true => "",
            false => d.why_not_io_uring,
        };
        out.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {why} |\n",
            d.name,
            d.asked_by(),
            d.shape.as_str(),
            d.epoll.as_str(),
            d.io_uring.as_str(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row() {
        for kind in ProtocolKind::all() {
            assert_eq!(PROTOCOLS.iter().filter(|d| d.kind == kind).count(), 1);
            assert!(kind.def().epoll.plain, "{kind:?} runs on epoll");
        }
    }

    #[test]
    fn refusals_are_made_from_the_rows() {
        let h2 = ProtocolKind::Http2.def();
        assert_eq!(
            h2.refusal(Engine::IoUring, false).unwrap(),
            "--engine io_uring does not speak HTTP/2: use --engine epoll (or auto) for http(s):// with --http2"
        );
        let h1 = ProtocolKind::Http1.def();
        assert_eq!(h1.refusal(Engine::IoUring, false), None);
        assert_eq!(
            h1.refusal(Engine::IoUring, true).unwrap(),
            "--engine io_uring does not speak TLS: use --engine epoll (or auto) for https://"
        );
        for d in PROTOCOLS {
            for tls in [false, true] {
                assert_eq!(d.refusal(Engine::Epoll, tls), None, "{}", d.name);
            }
        }
    }

    #[test]
    fn help_and_docs_name_every_row() {
        let (url, docs) = (url_help(), markdown());
        for d in PROTOCOLS {
            assert!(url.contains(&d.asked_by()), "{url}");
            assert!(docs.contains(&format!("| {} |", d.name)), "{docs}");
        }
        assert!(engine_help().contains("HTTP/1.1 over plain"));
    }
}
