//! A minimal keep-alive HTTP/1.1 client on a tokio `TcpStream`, or TLS over
//! it ([`tls`](crate::tls)) (what wrk does): write a pre-rendered request and
//! read its answer with the generator's one answer reader
//! ([`crate::response`]), keeping the connection when the server allows.
//! Errors map onto [`ErrorClass`].

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::recorder::ErrorClass;
use crate::tls::{Stream, Tls};

pub use crate::response::Answer;
use crate::response::{Fed, Limits, Reader};

/// An open connection with its reusable read buffer.
pub struct Conn {
    stream: Stream,
    buf: Vec<u8>,
    reader: Reader,
    /// Answers completed on this connection: from the first on, a close
    /// before any byte of the next answer may be the server's idle timeout.
    answered: u64,
    /// The last answer's close-delimited body ended with the TLS peer
    /// closing without `close_notify`.
    unclean_close: bool,
}

/// A request that got no complete answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed {
    pub class: ErrorClass,
    /// The connection had carried an answer before and closed (or reset)
    /// before any byte of this one: [`crate::retry`] decides on a retry.
    pub idle_close: bool,
}

impl From<ErrorClass> for Failed {
    fn from(class: ErrorClass) -> Self {
        Failed {
            class,
            idle_close: false,
        }
    }
}

/// Class of a failed connect.
pub(crate) fn connect_class(e: &io::Error) -> ErrorClass {
    match e.raw_os_error() {
        Some(libc::ECONNREFUSED) => ErrorClass::Refused,
        Some(libc::EADDRNOTAVAIL) => ErrorClass::AddrUnavailable,
        Some(libc::ECONNRESET) => ErrorClass::Reset,
        // The generator's own limit (ulimit -n), not the target's fault.
        Some(libc::EMFILE | libc::ENFILE) => ErrorClass::FdLimit,
        _ => ErrorClass::ConnectOther,
    }
}

/// Class of a failed read or write on an open connection.
pub(crate) fn io_class(e: &io::Error) -> ErrorClass {
    match e.raw_os_error() {
        Some(libc::ECONNRESET) | Some(libc::EPIPE) | Some(libc::ECONNABORTED) => ErrorClass::Reset,
        _ => match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted => ErrorClass::Reset,
            _ => ErrorClass::Read,
        },
    }
}

/// Connect from `ip`, the port still the kernel's (see [`crate::source`]).
pub(crate) async fn connect_from(addr: SocketAddr, ip: IpAddr) -> io::Result<TcpStream> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    crate::source::bind_source(socket.as_raw_fd(), ip)?;
    socket.connect(addr).await
}

/// Open a TCP connection from `source` (else the kernel's choice),
/// TCP_NODELAY on, with a TLS handshake when `tls` is given: what HTTP/1.1
/// and HTTP/2 connections both start from. Errors as they happened.
pub(crate) async fn open_stream_io(
    addr: SocketAddr,
    source: Option<IpAddr>,
    tls: Option<&Tls>,
) -> io::Result<Stream> {
    let tcp = match source {
        None => TcpStream::connect(addr).await,
        Some(ip) => connect_from(addr, ip).await,
    }?;
    let _ = tcp.set_nodelay(true);
    Ok(match tls {
        None => Stream::Plain(tcp),
        Some(tls) => Stream::Tls(Box::new(tls.wrap(tcp).await?)),
    })
}

/// [`open_stream_io`], its failure classed (a failed handshake is a
/// connect failure).
pub(crate) async fn open_stream(
    addr: SocketAddr,
    source: Option<IpAddr>,
    tls: Option<&Tls>,
) -> Result<Stream, ErrorClass> {
    open_stream_io(addr, source, tls)
        .await
        .map_err(|e| connect_class(&e))
}

impl Conn {
    /// Open a connection (TCP_NODELAY on), with a TLS handshake when `tls`
    /// is given (a failed handshake is a connect failure).
    /// `source`: the address to connect from (`--source-addrs`), else the
    /// kernel's choice.
    pub async fn connect(
        addr: SocketAddr,
        source: Option<IpAddr>,
        tls: Option<&Tls>,
        limits: Limits,
    ) -> Result<Conn, ErrorClass> {
        Ok(Conn {
            stream: open_stream(addr, source, tls).await?,
            buf: vec![0; 8 * 1024],
            reader: Reader::new(limits),
            answered: 0,
            unclean_close: false,
        })
    }

    /// Send `request` and read one complete answer (none of a body after a
    /// `HEAD`, whatever its Content-Length says).
    ///
    /// A write that fails may have met an early answer (a `413` and a close
    /// before the body was read): what the server sent is read before the
    /// write's failure is taken, so both engines record the `413`.
    pub async fn exchange(&mut self, request: &[u8]) -> Result<Answer, Failed> {
        self.reader.reset(request.starts_with(b"HEAD "));
        self.unclean_close = false;
        let outcome = match self.stream.write_all(request).await {
            Ok(()) => self.read_answer().await,
            Err(e) => match self.read_answer().await {
                Ok(answer) => Ok(Answer {
                    reusable: false,
                    ..answer
                }),
                Err(_) => Err(io_class(&e)),
            },
        };
        outcome
            .map_err(|class| Failed {
                class,
                idle_close: self.answered > 0 && !self.reader.started(),
            })
            .inspect(|_| self.answered += 1)
    }

    /// The last answer's body ran to a TLS close without `close_notify`
    /// (taken as complete; [`Conn::read_answer`] says why).
    pub fn unclean_tls_close(&self) -> bool {
        self.unclean_close
    }

    async fn read_answer(&mut self) -> Result<Answer, ErrorClass> {
        loop {
            let at = self.reader.recv_at();
            let n = match self.stream.read(&mut self.buf[at..]).await {
                Ok(n) => n,
                // rustls: the peer closed TCP without `close_notify`. Where
                // the body is delimited by the close, that close is its end
                // as the server meant it (curl and most clients accept it,
                // many servers skip close_notify); the answer is complete
                // and counted apart, since a cut could not be told from it
                // (issue 30, finding 10). Anywhere else it is a `reset`.
                Err(e)
                    if e.kind() == io::ErrorKind::UnexpectedEof
                        && matches!(self.stream, Stream::Tls(_)) =>
                {
                    let answer = self.reader.eof()?;
                    self.unclean_close = true;
                    return Ok(answer);
                }
                Err(e) => return Err(io_class(&e)),
            };
            if n == 0 {
                return self.reader.eof();
            }
            if let Fed::Done(answer) = self.reader.feed(&mut self.buf, n)? {
                return Ok(answer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16, finding 14: the generator's own EMFILE was counted as the
    /// target's `connect_other`.
    #[test]
    fn r16_14_out_of_file_descriptors_is_the_generators_class() {
        let class = |errno| connect_class(&io::Error::from_raw_os_error(errno));
        assert_eq!(class(libc::EMFILE), ErrorClass::FdLimit);
        assert_eq!(class(libc::ENFILE), ErrorClass::FdLimit);
        assert_eq!(class(libc::ECONNREFUSED), ErrorClass::Refused);
        assert_eq!(class(libc::EHOSTUNREACH), ErrorClass::ConnectOther);
    }
}
