//! Connection slots on one ring: a request's life as completions (connect,
//! send, receive, close), its deadline, and its record. A slot is one
//! connection at a time; the drivers ([`super::open`], [`super::closed`])
//! decide what a slot that became free does next.
//!
//! Per request on a kept-alive connection: one send (whose completion the
//! kernel skips on success) and one receive (polled first, since the answer
//! cannot be there yet), both submitted with the next wait. The clock is read
//! once per round of completions, not per request.
//!
//! A failed send is not the request's end: the receive posted with it
//! decides, so an early answer (a `413` and a close before the body was
//! read) is the answer, as on the tokio engine. A reused connection that
//! closes before any byte of the answer sends the request again once, on a
//! new connection ([`crate::retry`]); what each completion does is
//! [`complete`].

use std::io;
use std::os::fd::RawFd;

use io_uring::{opcode, squeue, types};

use super::deadlines::Deadlines;
use super::ring::{token, Ring, CANCEL, CONNECT, RECV, SEND};
use crate::http::{connect_class, Answer};
use crate::recorder::{ErrorClass, Recorder};
use crate::response::Reader;
use crate::run_ctx::RunCtx;
use crate::source::{bind_source, set_flag, sockaddr, Addr};

mod complete;

/// First receive buffer of a connection (grows for long heads).
const BUF: usize = 4 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No connection.
    Free,
    /// A kept-alive connection with no request.
    Idle,
    Connecting,
    /// Request sent or being sent, answer being read.
    Busy,
    /// Closing: waiting for pending operations to come back.
    Closing,
}

/// One request in progress.
#[derive(Debug, Clone, Copy, Default)]
struct Req {
    intended: u64,
    sent: u64,
    /// Which of the run's requests (an index into `RunCtx::requests`).
    request: usize,
    /// Sent again already, on a new connection.
    retried: bool,
    /// The send failed with this class; the receive decides the outcome.
    send_failed: Option<ErrorClass>,
}

#[derive(Debug)]
struct Slot {
    fd: RawFd,
    gen: u32,
    state: State,
    /// Operations in flight whose completion always comes (connect, recv).
    pending: u8,
    active: bool,
    /// Its last request ended without an answer, and not by its timeout
    /// (refused, reset, out of ports): the closed loop backs off.
    unanswered: bool,
    req: Req,
    /// Answers completed on this connection.
    answered: u64,
    buf: Vec<u8>,
    reader: Reader,
}

/// Every slot of one generator thread, its ring, deadlines and recorder.
pub struct Conns<'a> {
    pub ctx: &'a RunCtx,
    pub rec: Recorder,
    /// The run clock as of the latest round of completions.
    pub now: u64,
    ring: Ring,
    slots: Vec<Slot>,
    addr: Box<Addr>,
    deadlines: Deadlines,
    /// Slots not Free and not Idle (a request or a close in progress).
    pub busy: usize,
    /// Slots holding a connection or trying to (not Free).
    pub open: usize,
    /// Slots that became Free or Idle: the driver gives them work or parks them.
    pub ready: Vec<u32>,
    cqes: Vec<(u64, i32)>,
}

impl<'a> Conns<'a> {
    /// A ring sized for `cap` connections.
    pub fn new(ctx: &'a RunCtx, rec: Recorder, ring: Ring) -> Self {
        Conns {
            ctx,
            rec,
            now: crate::clock::now_ns(),
            ring,
            slots: Vec::new(),
            addr: Box::new(sockaddr(ctx.dial.addr)),
            deadlines: Deadlines::default(),
            busy: 0,
            open: 0,
            ready: Vec::new(),
            cqes: Vec::new(),
        }
    }

    /// A new slot with no connection; returns its index.
    pub fn add_slot(&mut self) -> u32 {
        self.slots.push(Slot {
            fd: -1,
            gen: 0,
            state: State::Free,
            pending: 0,
            active: false,
            unanswered: false,
            req: Req::default(),
            answered: 0,
            buf: Vec::new(),
            reader: Reader::new(self.ctx.dial.limits),
        });
        self.deadlines.grow(self.slots.len());
        (self.slots.len() - 1) as u32
    }

    /// The slot's last request ended without an answer (not a timeout).
    pub fn unanswered(&self, slot: u32) -> bool {
        self.slots[slot as usize].unanswered
    }

    /// The slot has a kept-alive connection waiting for a request.
    pub fn is_idle(&self, slot: u32) -> bool {
        self.slots[slot as usize].state == State::Idle
    }

    /// Start a request on a Free or Idle slot: it is sent now.
    pub fn start(&mut self, slot: u32, intended: u64, track_lag: bool) -> io::Result<()> {
        let now = self.now;
        self.rec.sent(intended, now, track_lag);
        let deadline = (intended + self.ctx.timeout_ns).min(self.ctx.hard_end_ns);
        let s = &mut self.slots[slot as usize];
        debug_assert!(matches!(s.state, State::Free | State::Idle));
        s.active = true;
        s.req = Req {
            intended,
            sent: now,
            request: self.ctx.next_index(),
            ..Req::default()
        };
        self.deadlines.insert(slot, deadline);
        self.busy += 1;
        if s.state == State::Idle {
            s.state = State::Busy;
            return self.exchange(slot);
        }
        self.open += 1;
        self.connect(slot)
    }

    fn connect(&mut self, slot: u32) -> io::Result<()> {
        let family = self.addr.family;
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe {
            libc::socket(
                family,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        let opened = if fd < 0 {
            Err(io::Error::last_os_error())
        } else if let Some(ip) = self.ctx.dial.sources.pick() {
            // SAFETY: closing the socket just made, which nothing else holds.
            bind_source(fd, ip).inspect_err(|_| unsafe {
                libc::close(fd);
            })
        } else {
            Ok(())
        };
        let s = &mut self.slots[slot as usize];
        if let Err(e) = opened {
            // No socket (out of file descriptors) or no source address: a
            // failed connect, counted now (and the clock moved on, so a
            // closed loop's duration ends).
            s.state = State::Connecting;
            let class = connect_class(&e);
            self.now = crate::clock::now_ns();
            self.finish(slot, Err(class));
            return Ok(());
        }
        set_flag(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY);
        s.fd = fd;
        s.answered = 0;
        s.state = State::Connecting;
        s.pending += 1;
        if s.buf.is_empty() {
            s.buf = vec![0; BUF];
        }
        let addr = (&self.addr.storage as *const libc::sockaddr_storage).cast();
        let e = opcode::Connect::new(types::Fd(fd), addr, self.addr.len)
            .build()
            .user_data(token(slot, s.gen, CONNECT));
        self.ring.push(&e)
    }

    /// Send the request and post the receive of its answer.
    fn exchange(&mut self, slot: u32) -> io::Result<()> {
        let s = &mut self.slots[slot as usize];
        let ctx = self.ctx;
        let req = &ctx.requests[s.req.request];
        s.req.send_failed = None;
        s.reader.reset(req.starts_with(b"HEAD "));
        let mut send = opcode::Send::new(types::Fd(s.fd), req.as_ptr(), req.len() as u32)
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build()
            .user_data(token(slot, s.gen, SEND));
        if self.ring.skip_success {
            send = send.flags(squeue::Flags::SKIP_SUCCESS);
        }
        self.ring.push(&send)?;
        self.recv(slot, 0)
    }

    fn recv(&mut self, slot: u32, at: usize) -> io::Result<()> {
        let s = &mut self.slots[slot as usize];
        s.pending += 1;
        let buf = &mut s.buf[at..];
        let e = opcode::Recv::new(types::Fd(s.fd), buf.as_mut_ptr(), buf.len() as u32)
            // IORING_RECVSEND_POLL_FIRST: the answer cannot be there yet.
            .ioprio(1)
            .build()
            .user_data(token(slot, s.gen, RECV));
        self.ring.push(&e)
    }

    /// Record the request's end; keep the connection when it may carry
    /// another, else close it.
    fn finish(&mut self, slot: u32, outcome: Result<Answer, ErrorClass>) {
        let now = self.now;
        let s = &mut self.slots[slot as usize];
        s.active = false;
        s.unanswered = matches!(outcome, Err(e) if e != ErrorClass::Timeout);
        let r = s.req;
        self.deadlines.remove(slot);
        let status = outcome.map(|a| a.status);
        self.rec.done(r.intended, r.sent, now, status);
        let ep = self.ctx.endpoint(r.request);
        self.rec.endpoint_done(ep, r.intended, now, status);
        if outcome.is_ok() {
            s.answered += 1;
        }
        match outcome {
            Ok(a) if a.reusable && !self.ctx.new_connection => {
                s.state = State::Idle;
                self.busy -= 1;
                self.ready.push(slot);
            }
            _ => self.close(slot),
        }
    }

    /// Close the slot's connection once nothing is pending on it; a pending
    /// connect is cancelled, a pending receive woken by shutting the socket.
    fn close(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        if s.pending > 0 {
            if s.state != State::Closing {
                if s.state == State::Connecting {
                    let e = opcode::AsyncCancel::new(token(slot, s.gen, CONNECT))
                        .build()
                        .user_data(token(slot, s.gen, CANCEL));
                    let _ = self.ring.push(&e);
                } else {
                    // SAFETY: shutting down our own socket.
                    unsafe { libc::shutdown(s.fd, libc::SHUT_RDWR) };
                }
                s.state = State::Closing;
            }
            return;
        }
        if s.fd >= 0 {
            // SAFETY: closing our own socket; no operation is pending on it.
            unsafe { libc::close(s.fd) };
        }
        s.fd = -1;
        s.gen = s.gen.wrapping_add(1);
        if s.state != State::Idle {
            self.busy -= 1;
        }
        s.state = State::Free;
        self.open -= 1;
        self.ready.push(slot);
    }

    /// Time out every request whose deadline has passed.
    pub fn expire(&mut self) {
        while let Some((slot, deadline)) = self.deadlines.first() {
            if deadline > self.now {
                break;
            }
            self.finish(slot, Err(ErrorClass::Timeout));
        }
    }

    /// The soonest deadline of a request in progress.
    pub fn next_deadline(&self) -> Option<u64> {
        self.deadlines.first().map(|(_, d)| d)
    }

    /// Close every connection left (the run is over) and give the recorder back.
    pub fn into_recorder(self) -> Recorder {
        for s in &self.slots {
            if s.fd >= 0 {
                // SAFETY: closing our own sockets; the ring goes with them.
                unsafe { libc::close(s.fd) };
            }
        }
        self.rec
    }
}
