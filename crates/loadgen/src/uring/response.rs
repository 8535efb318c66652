//! Reading one HTTP/1.1 answer from bytes as they complete (no IO here): the
//! completion engine hands each received chunk to [`Reader::feed`] and learns
//! whether the answer is complete, where the next receive should write, or
//! what went wrong. Head parsing and body framing are the epoll client's own
//! ([`framing_of`], [`Chunked`]), so both engines judge answers alike.

use crate::http::{framing_of, Answer, Chunked, Framing, MAX_HEAD};
use crate::recorder::ErrorClass;

/// Where the reader is in one answer.
#[derive(Debug, Default)]
enum Phase {
    /// Collecting the head: `len` bytes of it are at the buffer's start.
    #[default]
    Head,
    /// A Content-Length body with `left` bytes to come.
    Length { left: u64, answer: Answer },
    /// A chunked body.
    Chunked { dec: Chunked, answer: Answer },
    /// A body delimited by the peer closing.
    UntilClose { answer: Answer },
}

/// What one received chunk led to.
#[derive(Debug, PartialEq, Eq)]
pub enum Fed {
    /// Receive more, into the buffer from this offset.
    More(usize),
    /// The answer is complete.
    Done(Answer),
}

/// One answer being read; [`Reader::reset`] before the next.
#[derive(Debug, Default)]
pub struct Reader {
    len: usize,
    phase: Phase,
    /// The request was `HEAD`: the answer ends at its head, whatever its
    /// Content-Length says.
    head_only: bool,
}

impl Reader {
    /// Ready for the answer to a new request (`head_only` for a `HEAD`).
    pub fn reset(&mut self, head_only: bool) {
        *self = Reader {
            head_only,
            ..Reader::default()
        };
    }

    /// Offset in the buffer the next receive writes at (also given by [`Fed::More`]).
    #[cfg(test)]
    pub fn recv_at(&self) -> usize {
        match self.phase {
            Phase::Head => self.len,
            _ => 0,
        }
    }

    /// `n` new bytes were received at [`Reader::recv_at`]; the buffer may
    /// grow (only while reading the head).
    pub fn feed(&mut self, buf: &mut Vec<u8>, n: usize) -> Result<Fed, ErrorClass> {
        match &mut self.phase {
            Phase::Head => self.head(buf, n),
            Phase::Length { left, answer } => {
                let n = n as u64;
                if n < *left {
                    *left -= n;
                    return Ok(Fed::More(0));
                }
                // Bytes past the body mean the peer is out of step: do not reuse.
                answer.reusable &= n == *left;
                Ok(Fed::Done(*answer))
            }
            Phase::Chunked { dec, answer } => match dec.feed(&buf[..n]) {
                Ok(None) => Ok(Fed::More(0)),
                Ok(Some(rest)) => {
                    answer.reusable &= rest == 0;
                    Ok(Fed::Done(*answer))
                }
                Err(()) => Err(ErrorClass::Read),
            },
            Phase::UntilClose { .. } => Ok(Fed::More(0)),
        }
    }

    /// The peer closed: complete only for a close-delimited body.
    pub fn eof(&self) -> Result<Answer, ErrorClass> {
        match self.phase {
            Phase::UntilClose { answer } => Ok(answer),
            _ => Err(ErrorClass::Reset),
        }
    }

    fn head(&mut self, buf: &mut Vec<u8>, n: usize) -> Result<Fed, ErrorClass> {
        self.len += n;
        let len = self.len;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut resp = httparse::Response::new(&mut headers);
        let (status, reusable, framing, head_len) = match resp.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(head_len)) => {
                let status = resp.code.unwrap_or(0);
                let (reusable, mut framing) = framing_of(&resp, status)?;
                if self.head_only {
                    framing = Framing::Length(0);
                }
                (status, reusable, framing, head_len)
            }
            Ok(httparse::Status::Partial) if len < MAX_HEAD => {
                if len == buf.len() {
                    buf.resize(buf.len() * 2, 0);
                }
                return Ok(Fed::More(len));
            }
            _ => return Err(ErrorClass::Read),
        };
        let answer = Answer { status, reusable };
        let have = (len - head_len) as u64;
        self.phase = match framing {
            Framing::Length(want) if have >= want => {
                return Ok(Fed::Done(Answer {
                    reusable: reusable && have == want,
                    ..answer
                }));
            }
            Framing::Length(want) => Phase::Length {
                left: want - have,
                answer,
            },
            Framing::Chunked => {
                let mut dec = Chunked::default();
                match dec.feed(&buf[head_len..len]) {
                    Ok(Some(rest)) => {
                        return Ok(Fed::Done(Answer {
                            reusable: reusable && rest == 0,
                            ..answer
                        }))
                    }
                    Ok(None) => Phase::Chunked { dec, answer },
                    Err(()) => return Err(ErrorClass::Read),
                }
            }
            Framing::UntilClose => Phase::UntilClose {
                answer: Answer {
                    reusable: false,
                    ..answer
                },
            },
        };
        Ok(Fed::More(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `wire` cut at every point into two receives.
    fn read_split(wire: &[u8]) -> Vec<Result<Answer, ErrorClass>> {
        (1..wire.len())
            .map(|cut| {
                let mut buf = vec![0u8; 16];
                let mut r = Reader::default();
                let mut fed = Fed::More(0);
                for part in [&wire[..cut], &wire[cut..]] {
                    let mut part = part;
                    while !part.is_empty() {
                        let at = r.recv_at();
                        let n = part.len().min(buf.len() - at);
                        buf[at..at + n].copy_from_slice(&part[..n]);
                        part = &part[n..];
                        fed = r.feed(&mut buf, n)?;
                        if let Fed::Done(a) = fed {
                            return Ok(a);
                        }
                    }
                }
                match fed {
                    Fed::Done(a) => Ok(a),
                    Fed::More(_) => r.eof(),
                }
            })
            .collect()
    }

    fn all_same(wire: &[u8], want: Result<Answer, ErrorClass>) {
        for (cut, got) in read_split(wire).into_iter().enumerate() {
            assert_eq!(got, want, "cut at {}", cut + 1);
        }
    }

    #[test]
    fn length_chunked_and_close_delimited_bodies_in_any_split() {
        let ok = |status, reusable| Ok(Answer { status, reusable });
        all_same(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            ok(200, true),
        );
        all_same(
            b"HTTP/1.1 404 X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            ok(404, true),
        );
        all_same(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close",
            ok(200, false),
        );
        all_same(
            b"HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n",
            ok(204, true),
        );
    }

    #[test]
    fn extra_bytes_forbid_reuse_and_garbage_or_a_cut_is_an_error() {
        // Whenever the stray byte comes with the body (every cut but the one
        // between the two), the connection is not reused.
        let extra = read_split(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab");
        let (last, rest) = extra.split_last().unwrap();
        assert!(rest.iter().all(|a| a.is_ok_and(|a| !a.reusable)));
        assert!(last.is_ok());
        all_same(b"NOT HTTP AT ALL\r\n\r\n", Err(ErrorClass::Read));
        all_same(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            Err(ErrorClass::Reset),
        );
    }

    #[test]
    fn a_long_head_grows_the_buffer_up_to_the_cap() {
        let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..50 {
            wire.extend_from_slice(format!("X-H{i}: {}\r\n", "v".repeat(40)).as_bytes());
        }
        wire.extend_from_slice(b"Content-Length: 0\r\n\r\n");
        let mut buf = vec![0u8; 64];
        let mut r = Reader::default();
        let mut sent = 0;
        loop {
            let at = r.recv_at();
            let n = (wire.len() - sent).min(buf.len() - at);
            buf[at..at + n].copy_from_slice(&wire[sent..sent + n]);
            sent += n;
            if let Fed::Done(a) = r.feed(&mut buf, n).unwrap() {
                assert_eq!(a.status, 200);
                break;
            }
        }
        assert!(buf.len() >= wire.len());
    }
}
