//! The `pool` model's poller (Tomcat NIO's Poller): idle keep-alive
//! connections are parked here without a thread; when one becomes readable
//! it is handed on (to the FIFO queue of the worker pool). Linux epoll,
//! one-shot, so a connection is owned by exactly one place at a time.

use std::collections::HashMap;
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A held connection: its stream, bytes read past the last request, and a
/// guard that frees its slot under `--max-connections` when dropped.
#[derive(Debug)]
pub struct Conn {
    /// The socket (blocking).
    pub stream: TcpStream,
    /// Bytes already read that belong to the next request.
    pub buf: Vec<u8>,
    /// When it was parked.
    since: Instant,
    /// When the first byte of a request head not yet whole arrived: a
    /// head read piece by piece between parkings still has
    /// [`REQUEST_TIMEOUT`](crate::http1::REQUEST_TIMEOUT) in all.
    pub head_since: Option<Instant>,
    registered: bool,
    _slot: Slot,
}

impl Conn {
    /// Wrap an accepted stream that holds one slot of `limit`.
    pub fn new(stream: TcpStream, slot: Slot) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
            since: Instant::now(),
            head_since: None,
            registered: false,
            _slot: slot,
        }
    }
}

/// The `--max-connections` count: a slot is taken on accept and given back
/// when its [`Conn`] is dropped (closed).
#[derive(Debug, Default)]
pub struct ConnLimit {
    open: Mutex<usize>,
    freed: Condvar,
}

/// One taken slot of a [`ConnLimit`].
#[derive(Debug)]
pub struct Slot(Arc<ConnLimit>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.0.open.lock() {
            *open -= 1;
        }
        self.0.freed.notify_one();
    }
}

impl ConnLimit {
    /// Wait (in ticks of `tick`, while `go_on()` holds) for a free slot and take it.
    pub fn take(
        self: &Arc<Self>,
        max: usize,
        tick: Duration,
        go_on: impl Fn() -> bool,
    ) -> Option<Slot> {
        let mut open = self.open.lock().ok()?;
        while *open >= max {
            if !go_on() {
                return None;
            }
            open = self.freed.wait_timeout(open, tick).ok()?.0;
        }
        *open += 1;
        Some(Slot(self.clone()))
    }

    /// Connections held now.
    pub fn open(&self) -> usize {
        self.open.lock().map(|o| *o).unwrap_or(0)
    }
}

/// Idle connections waiting for their next request.
#[derive(Debug)]
pub struct Poller {
    epfd: OwnedFd,
    idle: Mutex<HashMap<RawFd, Conn>>,
}

impl Poller {
    /// A new epoll instance.
    pub fn new() -> io::Result<Poller> {
        // SAFETY: plain syscall; the fd is owned below.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Poller {
            // SAFETY: fd is a fresh, valid descriptor we own.
            epfd: unsafe { OwnedFd::from_raw_fd(fd) },
            idle: Mutex::new(HashMap::new()),
        })
    }

    /// Park `conn` until it is readable (or closed by the peer).
    pub fn park(&self, mut conn: Conn) -> io::Result<()> {
        let fd = conn.stream.as_raw_fd();
        let op = if conn.registered {
            libc::EPOLL_CTL_MOD
        } else {
            libc::EPOLL_CTL_ADD
        };
        conn.registered = true;
        conn.since = Instant::now();
        let mut idle = self
            .idle
            .lock()
            .map_err(|_| io::Error::other("poller lock"))?;
        idle.insert(fd, conn);
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLONESHOT) as u32,
            u64: fd as u64,
        };
        // SAFETY: valid epoll fd and socket fd; ev lives across the call.
        if unsafe { libc::epoll_ctl(self.epfd.as_raw_fd(), op, fd, &mut ev) } != 0 {
            let e = io::Error::last_os_error();
            idle.remove(&fd);
            return Err(e);
        }
        Ok(())
    }

    /// Wait up to `timeout` and hand every readable connection to `ready`.
    pub fn wait(&self, timeout: Duration, ready: &mut dyn FnMut(Conn)) -> io::Result<()> {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 256];
        // SAFETY: the buffer holds 256 events.
        let n = unsafe {
            libc::epoll_wait(
                self.epfd.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                timeout.as_millis() as i32,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        let conns: Vec<Conn> = {
            let mut idle = self
                .idle
                .lock()
                .map_err(|_| io::Error::other("poller lock"))?;
            events[..n as usize]
                .iter()
                .filter_map(|ev| idle.remove(&(ev.u64 as RawFd)))
                .collect()
        };
        conns.into_iter().for_each(ready);
        Ok(())
    }

    /// Close connections idle longer than `max_idle` (all of them if zero).
    pub fn close_idle(&self, max_idle: Duration) {
        let closed: Vec<Conn> = match self.idle.lock() {
            Ok(mut idle) => {
                let old: Vec<RawFd> = idle
                    .iter()
                    .filter(|(_, c)| c.since.elapsed() >= max_idle)
                    .map(|(fd, _)| *fd)
                    .collect();
                old.iter().filter_map(|fd| idle.remove(fd)).collect()
            }
            Err(_) => Vec::new(),
        };
        drop(closed);
    }
}
