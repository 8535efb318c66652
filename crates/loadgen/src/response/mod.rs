//! The one HTTP/1.1 answer reader of the generator, shared by both engines
//! (the tokio client in [`crate::http`], the io_uring one in
//! [`crate::uring`]), so they cannot judge an answer differently. No IO
//! here: an engine receives bytes into its buffer and hands each chunk to
//! [`Reader::feed`], which says whether the answer is complete, where the
//! next receive writes, or what went wrong.
//!
//! Heads are parsed by `httparse` ([`head`]); interim answers (`100
//! Continue`, `103 Early Hints`, any 1xx but 101) are skipped and the final
//! answer after them is the one recorded; bodies are skipped by length,
//! chunked framing ([`chunked`]) or the peer's close.
//!
//! `verify`'s blocking client judges heads with the same code
//! ([`parse_kept`], which also keeps the headers) and decodes chunked bodies
//! with the same [`Chunked`], so it cannot read an answer otherwise either.

pub(crate) mod chunked;
mod head;
#[cfg(test)]
mod tests;

pub use chunked::Chunked;
pub use head::{parse_kept, Framing, Head, Limits, Malformed, DEFAULT_MAX_HEADERS, MAX_HEAD};

use crate::recorder::ErrorClass;

/// Most interim answers before a final one: a server that sends 1xx
/// forever is not answering.
pub const MAX_INTERIM: u32 = 32;

/// A complete answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// HTTP status code of the final answer.
    pub status: u16,
    /// The connection may carry another request.
    pub reusable: bool,
}

/// Which part of one answer the reader is in.
#[derive(Debug, Default)]
enum Part {
    /// Collecting a head: `len` bytes of it are at the buffer's start.
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
    part: Part,
    /// The request was `HEAD`: the answer ends at its head, whatever its
    /// Content-Length says.
    head_only: bool,
    /// Some byte of the answer came (an interim answer counts).
    started: bool,
    interim: u32,
    limits: Limits,
}

impl Reader {
    /// A reader of answers within `limits`.
    pub fn new(limits: Limits) -> Reader {
        Reader {
            limits,
            ..Reader::default()
        }
    }

    /// Ready for the answer to a new request (`head_only` for a `HEAD`).
    pub fn reset(&mut self, head_only: bool) {
        *self = Reader {
            head_only,
            limits: self.limits,
            ..Reader::default()
        };
    }

    /// Whether any byte of the answer has come: a connection that closes
    /// before one did may be retried ([`crate::retry`]).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Offset in the buffer the next receive writes at (also given by [`Fed::More`]).
    pub fn recv_at(&self) -> usize {
        match self.part {
            Part::Head => self.len,
            _ => 0,
        }
    }

    /// `n` new bytes were received at [`Reader::recv_at`]; the buffer may
    /// grow (only while reading a head).
    pub fn feed(&mut self, buf: &mut Vec<u8>, n: usize) -> Result<Fed, ErrorClass> {
        self.started |= n > 0;
        match &mut self.part {
            Part::Head => self.head(buf, n),
            Part::Length { left, answer } => {
                let n = n as u64;
                if n < *left {
                    *left -= n;
                    return Ok(Fed::More(0));
                }
                // Bytes past the body mean the peer is out of step: do not reuse.
                answer.reusable &= n == *left;
                Ok(Fed::Done(*answer))
            }
            Part::Chunked { dec, answer } => match dec.feed(&buf[..n]) {
                Ok(None) => Ok(Fed::More(0)),
                Ok(Some(rest)) => {
                    answer.reusable &= rest == 0;
                    Ok(Fed::Done(*answer))
                }
                Err(_) => Err(ErrorClass::Read),
            },
            Part::UntilClose { .. } => Ok(Fed::More(0)),
        }
    }

    /// The peer closed: complete only for a close-delimited body.
    pub fn eof(&self) -> Result<Answer, ErrorClass> {
        match self.part {
            Part::UntilClose { answer } => Ok(answer),
            _ => Err(ErrorClass::Reset),
        }
    }

    fn head(&mut self, buf: &mut Vec<u8>, n: usize) -> Result<Fed, ErrorClass> {
        self.len += n;
        loop {
            match head::parse(&buf[..self.len], &self.limits)? {
                Head::Partial if self.len < self.limits.max_head => {
                    if self.len == buf.len() {
                        let grown = (buf.len() * 2).clamp(1024, self.limits.max_head);
                        buf.resize(grown, 0);
                    }
                    return Ok(Fed::More(self.len));
                }
                Head::Partial => return Err(ErrorClass::Read),
                Head::Interim(len) => {
                    self.interim += 1;
                    if self.interim > MAX_INTERIM {
                        return Err(ErrorClass::Read);
                    }
                    // What followed the interim head starts the next one.
                    buf.copy_within(len..self.len, 0);
                    self.len -= len;
                }
                Head::Final {
                    status,
                    keep,
                    framing,
                    len,
                } => return self.body(buf, status, keep, framing, len),
            }
        }
    }

    /// The final head is in: how its body (of which `buf[head_len..len]`
    /// came with it) ends.
    fn body(
        &mut self,
        buf: &[u8],
        status: u16,
        keep: bool,
        framing: Framing,
        head_len: usize,
    ) -> Result<Fed, ErrorClass> {
        let framing = if self.head_only {
            Framing::Length(0)
        } else {
            framing
        };
        let answer = Answer {
            status,
            reusable: keep,
        };
        let have = (self.len - head_len) as u64;
        self.part = match framing {
            Framing::Length(want) if have >= want => {
                return Ok(Fed::Done(Answer {
                    reusable: keep && have == want,
                    ..answer
                }));
            }
            Framing::Length(want) => Part::Length {
                left: want - have,
                answer,
            },
            Framing::Chunked => {
                let mut dec = Chunked::default();
                match dec.feed(&buf[head_len..self.len]) {
                    Ok(Some(rest)) => {
                        return Ok(Fed::Done(Answer {
                            reusable: keep && rest == 0,
                            ..answer
                        }))
                    }
                    Ok(None) => Part::Chunked { dec, answer },
                    Err(_) => return Err(ErrorClass::Read),
                }
            }
            Framing::UntilClose => Part::UntilClose {
                answer: Answer {
                    reusable: false,
                    ..answer
                },
            },
        };
        Ok(Fed::More(0))
    }
}
