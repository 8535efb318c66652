//! Where the live page is served: 127.0.0.1 on a free port unless an address
//! is asked for by name, bound before any load is sent, so that a busy port
//! is a one-line error and nothing else happens.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs};

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
pub fn listen(spec: &str) -> Result<Listener, String> {
    let addr = resolve(spec)?;
    let socket = TcpListener::bind(addr).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::AddrInUse => format!("port {} is in use", addr.port()),
            std::io::ErrorKind::AddrNotAvailable => {
                format!("{} is not an address of this machine", addr.ip())
            }
            std::io::ErrorKind::PermissionDenied => {
                format!("port {} needs privileges", addr.port())
            }
            _ => e.to_string(),
        };
        format!("--live {spec}: {why}: choose another address, or give --live alone for a free port on 127.0.0.1")
    })?;
    let bound = socket
        .local_addr()
        .map_err(|e| format!("--live {spec}: {e}"))?;
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

fn resolve(spec: &str) -> Result<SocketAddr, String> {
    let spec = spec.trim();
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = spec.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bad = |why: &str| {
        format!("--live {spec}: {why} (give PORT, HOST:PORT, or --live alone for 127.0.0.1 on a free port)")
    };
    if !spec.contains(':') {
        return Err(bad("no port"));
    }
    spec.to_socket_addrs()
        .map_err(|e| bad(&e.to_string()))?
        .next()
        .ok_or_else(|| bad("the name has no address"))
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
        let e = listen(&format!("127.0.0.1:{port}")).unwrap_err();
        assert!(e.contains(&format!("port {port} is in use")), "{e}");
        assert!(!e.contains('\n'));
        assert!(listen("nonsense").unwrap_err().contains("no port"));
    }
}
