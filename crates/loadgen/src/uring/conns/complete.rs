//! What each completion of a slot's operations does ([`Conns::poll`]): a
//! connect opens the exchange, a send's failure waits for the receive
//! posted with it, a receive feeds the answer's reader or ends it, and a
//! receive that ended without an answer is retried once on a new
//! connection when [`should_retry`] says so.

use std::io;

use super::super::ring::{untoken, CANCEL, CONNECT, SEND};
use super::{Conns, State};
use crate::http::{connect_class, io_class};
use crate::recorder::ErrorClass;
use crate::response::Fed;
use crate::retry::should_retry;

impl Conns<'_> {
    /// Submit, wait up to `timeout_ns` for completions and handle them;
    /// returns how many came.
    pub fn poll(&mut self, timeout_ns: u64) -> io::Result<usize> {
        self.ring.wait(timeout_ns)?;
        self.now = crate::clock::now_ns();
        let mut cqes = std::mem::take(&mut self.cqes);
        self.ring.reap(&mut cqes);
        let n = cqes.len();
        for (tag, res) in cqes.drain(..) {
            let (slot, gen, kind) = untoken(tag);
            if kind == CANCEL || self.slots[slot as usize].gen & 0x00FF_FFFF != gen {
                continue;
            }
            self.complete(slot, kind, res)?;
        }
        self.cqes = cqes;
        Ok(n)
    }

    fn complete(&mut self, slot: u32, kind: u8, res: i32) -> io::Result<()> {
        let s = &mut self.slots[slot as usize];
        if kind != SEND {
            s.pending -= 1;
        }
        if s.state == State::Closing || !s.active {
            if s.state == State::Closing && s.pending == 0 {
                self.close(slot);
            }
            return Ok(());
        }
        let err = |res: i32| io::Error::from_raw_os_error(-res);
        match kind {
            CONNECT if res < 0 => self.finish(slot, Err(connect_class(&err(res)))),
            CONNECT => {
                s.state = State::Busy;
                return self.exchange(slot);
            }
            // The receive posted with the send decides (an early answer).
            SEND if res < 0 => s.req.send_failed = Some(io_class(&err(res))),
            SEND => {}
            _ if res < 0 => return self.failed(slot, io_class(&err(res))),
            _ if res == 0 => match s.reader.eof() {
                Ok(answer) => self.finish(slot, Ok(answer)),
                Err(class) => return self.failed(slot, class),
            },
            _ => match s.reader.feed(&mut s.buf, res as usize) {
                Ok(Fed::More(at)) => return self.recv(slot, at),
                Ok(Fed::Done(mut answer)) => {
                    answer.reusable &= s.req.send_failed.is_none();
                    self.finish(slot, Ok(answer));
                }
                Err(class) => self.finish(slot, Err(class)),
            },
        }
        Ok(())
    }

    /// The receive ended without an answer (nothing is pending on the
    /// slot): retried on a new connection if [`should_retry`] says so, else
    /// the request's end, in the send's class if the send failed first.
    fn failed(&mut self, slot: u32, class: ErrorClass) -> io::Result<()> {
        let s = &mut self.slots[slot as usize];
        let class = s.req.send_failed.unwrap_or(class);
        let idle_close = s.answered > 0 && !s.reader.started();
        let request = &self.ctx.requests[s.req.request];
        if !should_retry(request, class, idle_close, s.req.retried) {
            self.finish(slot, Err(class));
            return Ok(());
        }
        self.rec.retried();
        s.req.retried = true;
        // SAFETY: closing our own socket; no operation is pending on it.
        unsafe { libc::close(s.fd) };
        s.fd = -1;
        s.gen = s.gen.wrapping_add(1);
        // Still busy and open: the same request, on a new connection.
        self.connect(slot)
    }
}
