//! Where the live page is served: 127.0.0.1 on a free port unless an address
//! is asked for by name, bound before any load is sent, so that a busy port
//! is a one-line error and nothing else happens.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs};

/// A `--live` address that cannot be served on; `spec` is as given.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// The address does not resolve.
    #[error(
        "--live {spec}: {why} (give PORT, HOST:PORT, or --live alone for 127.0.0.1 on a free port)"
    )]
    Resolve {
        /// The address given (trimmed).
        spec: String,
        /// Why.
        why: ResolveFault,
    },
    /// It resolves, but cannot be bound.
    #[error("--live {spec}: {why}: choose another address, or give --live alone for a free port on 127.0.0.1")]
    Bind {
        /// The address given.
        spec: String,
        /// Why.
        why: BindFault,
    },
    /// Bound, but its address cannot be read back.
    #[error("--live {spec}: {why}")]
    Bound {
        /// The address given.
        spec: String,
        /// The OS error.
        why: io::Error,
    },
}

impl iolab_model::HasExitKind for ListenError {
    /// An address that cannot be served on: the user picks another.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

/// Why an address does not resolve.
#[derive(Debug, thiserror::Error)]
pub enum ResolveFault {
    /// A name without `:PORT`.
    #[error("no port")]
    NoPort,
    /// The lookup failed.
    #[error("{0}")]
    Lookup(io::Error),
    /// The name resolves to nothing.
    #[error("the name has no address")]
    NoAddress,
}

/// Why a resolved address cannot be bound.
#[derive(Debug, thiserror::Error)]
pub enum BindFault {
    /// Someone listens there already.
    #[error("port {0} is in use")]
    InUse(u16),
    /// The IP is not this machine's.
    #[error("{0} is not an address of this machine")]
    NotLocal(IpAddr),
    /// A port below 1024 without the right.
    #[error("port {0} needs privileges")]
    Privileged(u16),
    /// Anything else the OS says.
    #[error("{0}")]
    Other(io::Error),
}

/// What `--live` alone means: loopback, a free port.
pub const DEFAULT_ADDR: &str = "127.0.0.1:0";

/// A bound live address.
#[derive(Debug)]
pub struct Listener {
    /// The socket, listening.
    pub socket: TcpListener,
    /// The page's URL, `http://ADDR:PORT/`.
    pub url: String,
    /// Bound to a loopback address (nothing outside this machine can reach it).
    pub loopback: bool,
}

/// Bind `spec`: `PORT` (on 127.0.0.1), `HOST:PORT` or `[V6]:PORT`; `0` for
/// a free port. The error is one line naming the fault and the fix.
pub fn listen(spec: &str) -> Result<Listener, ListenError> {
    let addr = resolve(spec)?;
    let socket = TcpListener::bind(addr).map_err(|e| {
        let why = match e.kind() {
            io::ErrorKind::AddrInUse => BindFault::InUse(addr.port()),
            io::ErrorKind::AddrNotAvailable => BindFault::NotLocal(addr.ip()),
            io::ErrorKind::PermissionDenied => BindFault::Privileged(addr.port()),
            _ => BindFault::Other(e),
        };
        ListenError::Bind {
            spec: spec.to_string(),
            why,
        }
    })?;
    let bound = socket.local_addr().map_err(|why| ListenError::Bound {
        spec: spec.to_string(),
        why,
    })?;
    let host = match bound.ip() {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    Ok(Listener {
        socket,
        url: format!("http://{host}:{}/", bound.port()),
        loopback: bound.ip().is_loopback(),
    })
}

fn resolve(spec: &str) -> Result<SocketAddr, ListenError> {
    let spec = spec.trim();
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = spec.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bad = |why| ListenError::Resolve {
        spec: spec.to_string(),
        why,
    };
    if !spec.contains(':') {
        return Err(bad(ResolveFault::NoPort));
    }
    spec.to_socket_addrs()
        .map_err(|e| bad(ResolveFault::Lookup(e)))?
        .next()
        .ok_or_else(|| bad(ResolveFault::NoAddress))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_it_is_loopback_on_a_free_port() {
        let l = listen(DEFAULT_ADDR).expect("binds");
        assert!(l.loopback);
        assert!(l.url.starts_with("http://127.0.0.1:"), "{}", l.url);
        assert!(!l.url.ends_with(":0/"));
    }

    /// A port given alone is on 127.0.0.1, never on every interface.
    #[test]
    fn a_port_alone_is_on_loopback() {
        let port = listen(DEFAULT_ADDR)
            .unwrap()
            .socket
            .local_addr()
            .unwrap()
            .port();
        let l = listen(&port.to_string()).expect("free again");
        assert_eq!(l.url, format!("http://127.0.0.1:{port}/"));
    }

    #[test]
    fn a_busy_port_is_one_line_naming_it() {
        let held = listen(DEFAULT_ADDR).unwrap();
        let port = held.socket.local_addr().unwrap().port();
        let e = listen(&format!("127.0.0.1:{port}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("port {port} is in use")), "{e}");
        assert!(!e.contains('\n'));
        assert!(listen("nonsense")
            .unwrap_err()
            .to_string()
            .contains("no port"));
    }
}
