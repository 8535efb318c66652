//! Where connections come from: the source addresses a plan spreads its
//! connections over (`--source-addrs`), and the plain socket addresses the
//! io_uring engine hands the kernel.
//!
//! Why spread them: `connect()` looks for a free ephemeral port by walking
//! the range, even ports first (28,232 ports here, so 14,116 even ones); past
//! ~14,000 connections from one address to one server every new connection
//! walks the whole even half first, and that search took 76% of the
//! generator's CPU at 16,000 (docs/serve.md). Each source address has a
//! port range of its own. The port is still the kernel's choice, made at
//! `connect()` (`IP_BIND_ADDRESS_NO_PORT`), so a source address costs no
//! search of its own.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The source addresses of a run, taken in turn by new connections.
#[derive(Debug, Default)]
pub struct Sources {
    addrs: Vec<IpAddr>,
    next: AtomicUsize,
}

impl Sources {
    pub fn new(addrs: Vec<IpAddr>) -> Sources {
        Sources {
            addrs,
            next: AtomicUsize::new(0),
        }
    }

    /// The address the next connection binds to; `None`: the kernel's choice.
    pub fn pick(&self) -> Option<IpAddr> {
        match self.addrs.len() {
            0 => None,
            1 => Some(self.addrs[0]),
            n => Some(self.addrs[self.next.fetch_add(1, Relaxed) % n]),
        }
    }
}

/// Most source addresses a plan may name.
pub const MAX_SOURCES: usize = 256;

/// A `--source-addrs` list that cannot reach the target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// More addresses than a plan may name.
    #[error("--source-addrs names {0} addresses: at most {MAX_SOURCES}")]
    TooMany(usize),
    /// `0.0.0.0` or `::`: no address to connect from.
    #[error(
        "--source-addrs {0} is no address: name the addresses to connect from (e.g. 127.0.0.2)"
    )]
    Unspecified(IpAddr),
    /// IPv4 beside an IPv6 target, or the reverse.
    #[error(
        "--source-addrs {ip} cannot connect to {target}: give addresses of the target's family"
    )]
    Family {
        /// The source address.
        ip: IpAddr,
        /// The target.
        target: SocketAddr,
    },
    /// Not loopback, beside a loopback target.
    #[error("--source-addrs {ip} cannot reach the loopback target {target}: use 127.x.y.z addresses (all of 127.0.0.0/8 is this machine)")]
    NotLoopback {
        /// The source address.
        ip: IpAddr,
        /// The target.
        target: SocketAddr,
    },
}

/// Every source address can reach `target`: same family, not unspecified,
/// and on loopback when the target is (no other address reaches it).
pub fn check(sources: &[IpAddr], target: SocketAddr) -> Result<(), SourceError> {
    if sources.len() > MAX_SOURCES {
        return Err(SourceError::TooMany(sources.len()));
    }
    for &ip in sources {
        if ip.is_unspecified() {
            return Err(SourceError::Unspecified(ip));
        }
        if ip.is_ipv4() != target.is_ipv4() {
            return Err(SourceError::Family { ip, target });
        }
        if target.ip().is_loopback() && !ip.is_loopback() {
            return Err(SourceError::NotLoopback { ip, target });
        }
    }
    Ok(())
}

/// Turn on a boolean socket option of `fd` (best effort: a kernel without
/// it leaves the socket as it was).
pub(crate) fn set_flag(fd: RawFd, level: libc::c_int, option: libc::c_int) {
    let one: libc::c_int = 1;
    // SAFETY: fd is the caller's socket; the option value is a live c_int.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            option,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

/// Bind `fd` to `ip`, the port left to `connect()` (older kernels without
/// the option pick the port at bind).
pub(crate) fn bind_source(fd: RawFd, ip: IpAddr) -> io::Result<()> {
    set_flag(fd, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT);
    let a = sockaddr(SocketAddr::new(ip, 0));
    // SAFETY: `a` is a valid socket address of `a.len` bytes.
    let rc = unsafe {
        libc::bind(
            fd,
            (&a.storage as *const libc::sockaddr_storage).cast(),
            a.len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A socket address the kernel can read while a connect is pending.
pub(crate) struct Addr {
    pub storage: libc::sockaddr_storage,
    pub len: libc::socklen_t,
    pub family: libc::c_int,
}

pub(crate) fn sockaddr(addr: SocketAddr) -> Addr {
    // SAFETY: sockaddr_storage is plain data, large enough for both families.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let (len, family) = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            (std::mem::size_of::<libc::sockaddr_in>(), libc::AF_INET)
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            (std::mem::size_of::<libc::sockaddr_in6>(), libc::AF_INET6)
        }
    };
    Addr {
        storage,
        len: len as libc::socklen_t,
        family,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_taken_in_turn() {
        let ips: Vec<IpAddr> = vec!["127.0.0.2".parse().unwrap(), "127.0.0.3".parse().unwrap()];
        let s = Sources::new(ips.clone());
        let picked: Vec<_> = (0..4).map(|_| s.pick().unwrap()).collect();
        assert_eq!(picked, [ips[0], ips[1], ips[0], ips[1]]);
        assert_eq!(Sources::default().pick(), None);
    }

    #[test]
    fn sources_that_cannot_reach_the_target_are_refused() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let ok: Vec<IpAddr> = vec!["127.0.0.2".parse().unwrap()];
        assert!(check(&ok, loopback).is_ok());
        for (bad, word) in [
            ("10.0.0.5", "loopback target"),
            ("::1", "family"),
            ("0.0.0.0", "no address"),
        ] {
            let e = check(&[bad.parse().unwrap()], loopback)
                .unwrap_err()
                .to_string();
            assert!(e.contains(word) && e.starts_with("--source-addrs"), "{e}");
        }
        let many = vec![ok[0]; MAX_SOURCES + 1];
        assert!(check(&many, loopback)
            .unwrap_err()
            .to_string()
            .contains("at most"));
    }
}
