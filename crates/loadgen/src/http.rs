//! A minimal keep-alive HTTP/1.1 client on a tokio `TcpStream`, or TLS over
//! it ([`tls`](crate::tls)) (what wrk does): write a pre-rendered request, parse the status line and headers with
//! `httparse`, skip the body by Content-Length, chunked framing or EOF, and
//! keep the connection when the server allows. Errors map onto [`ErrorClass`].

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::recorder::ErrorClass;
use crate::tls::{Stream, Tls};

/// Largest response head accepted.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// An open connection with its reusable read buffer.
pub struct Conn {
    stream: Stream,
    buf: Vec<u8>,
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

/// How the body of a response ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// A complete answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The connection may carry another request.
    pub reusable: bool,
}

/// Connect from `ip`, the port still the kernel's (see [`crate::source`]).
async fn connect_from(addr: SocketAddr, ip: IpAddr) -> io::Result<TcpStream> {
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
    ) -> Result<Conn, ErrorClass> {
        Ok(Conn {
            stream: open_stream(addr, source, tls).await?,
            buf: vec![0; 8 * 1024],
        })
    }

    /// Send `request` and read one complete answer (none of a body after a
    /// `HEAD`, whatever its Content-Length says).
    pub async fn exchange(&mut self, request: &[u8]) -> Result<Answer, ErrorClass> {
        self.stream
            .write_all(request)
            .await
            .map_err(|e| io_class(&e))?;
        self.read_answer(request.starts_with(b"HEAD ")).await
    }

    async fn fill(&mut self, at: usize) -> Result<usize, ErrorClass> {
        if at == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        self.stream
            .read(&mut self.buf[at..])
            .await
            .map_err(|e| io_class(&e))
    }

    async fn read_answer(&mut self, head_only: bool) -> Result<Answer, ErrorClass> {
        let mut len = 0;
        let (status, mut reusable, framing, head_len) = loop {
            let n = self.fill(len).await?;
            if n == 0 {
                return Err(ErrorClass::Reset);
            }
            len += n;
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut resp = httparse::Response::new(&mut headers);
            match resp.parse(&self.buf[..len]) {
                Ok(httparse::Status::Complete(head_len)) => {
                    let status = resp.code.unwrap_or(0);
                    let (reusable, mut framing) = framing_of(&resp, status)?;
                    if head_only {
                        framing = Framing::Length(0);
                    }
                    break (status, reusable, framing, head_len);
                }
                Ok(httparse::Status::Partial) if len < MAX_HEAD => continue,
                _ => return Err(ErrorClass::Read),
            }
        };
        let have = len - head_len;
        match framing {
            Framing::Length(want) => {
                let mut have = have as u64;
                while have < want {
                    let n = self.fill(0).await?;
                    if n == 0 {
                        return Err(ErrorClass::Reset);
                    }
                    have += n as u64;
                }
                // Bytes past the body mean the peer is out of step: do not reuse.
                reusable &= have == want;
            }
            Framing::UntilClose => {
                reusable = false;
                while self.fill(0).await? > 0 {}
            }
            Framing::Chunked => {
                let mut dec = Chunked::default();
                let mut done = dec
                    .feed(&self.buf[head_len..len])
                    .map_err(|_| ErrorClass::Read)?;
                while done.is_none() {
                    let n = self.fill(0).await?;
                    if n == 0 {
                        return Err(ErrorClass::Reset);
                    }
                    done = dec.feed(&self.buf[..n]).map_err(|_| ErrorClass::Read)?;
                }
                reusable &= done == Some(0);
            }
        }
        Ok(Answer { status, reusable })
    }
}

/// Keep-alive and body framing from a parsed head.
pub(crate) fn framing_of(
    resp: &httparse::Response,
    status: u16,
) -> Result<(bool, Framing), ErrorClass> {
    let mut keep = resp.version == Some(1);
    let mut length = None;
    let mut chunked = false;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value).map_err(|_| ErrorClass::Read)?;
            length = Some(v.trim().parse::<u64>().map_err(|_| ErrorClass::Read)?);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h.value.eq_ignore_ascii_case(b"chunked")
                || h.value.to_ascii_lowercase().ends_with(b"chunked");
        } else if h.name.eq_ignore_ascii_case("connection") {
            let v = h.value.to_ascii_lowercase();
            if v.windows(5).any(|w| w == b"close") {
                keep = false;
            } else if v.windows(10).any(|w| w == b"keep-alive") {
                keep = true;
            }
        }
    }
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::Length(0)
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok((keep, framing))
}

/// Incremental chunked-body decoder that only finds the end of the body.
#[derive(Debug, Default)]
pub(crate) struct Chunked {
    state: ChunkState,
    size: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Ext,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    Trailer,
    TrailerLf,
    EndLf,
}

impl Chunked {
    /// Feed bytes; `Ok(Some(rest))` when the body ended with `rest` bytes left over.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) -> Result<Option<usize>, ()> {
        use ChunkState::*;
        while !bytes.is_empty() {
            if self.state == Data {
                let take = (self.size.min(bytes.len() as u64)) as usize;
                self.size -= take as u64;
                bytes = &bytes[take..];
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = bytes[0];
            bytes = &bytes[1..];
            self.state = match (self.state, b) {
                (Size, b) if b.is_ascii_hexdigit() => {
                    let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                    self.size = self.size.checked_mul(16).ok_or(())? + d;
                    Size
                }
                (Size, b';' | b' ' | b'\t') | (Ext, _) if b != b'\r' => Ext,
                (Size | Ext, b'\r') => SizeLf,
                (SizeLf, b'\n') if self.size == 0 => TrailerStart,
                (SizeLf, b'\n') => Data,
                (DataCr, b'\r') => DataLf,
                (DataLf, b'\n') => Size,
                (TrailerStart, b'\r') => EndLf,
                (TrailerStart | Trailer, b) if b != b'\r' => Trailer,
                (Trailer, b'\r') => TrailerLf,
                (TrailerLf, b'\n') => TrailerStart,
                (EndLf, b'\n') => return Ok(Some(bytes.len())),
                _ => return Err(()),
            };
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_finds_the_end_in_any_split() {
        let body = b"5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\nX-T: 1\r\n\r\n";
        for cut in 0..body.len() {
            let mut d = Chunked::default();
            let first = d.feed(&body[..cut]).unwrap();
            let end = match first {
                Some(rest) => Some(rest),
                None => d.feed(&body[cut..]).unwrap(),
            };
            assert_eq!(end, Some(0), "cut at {cut}");
        }
        assert!(Chunked::default().feed(b"zz\r\n").is_err());
        assert_eq!(Chunked::default().feed(b"0\r\n\r\nGET"), Ok(Some(3)));
    }

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
