//! An HTTP/1.1 server whose delays are exact, for measuring a generator's
//! open-loop error: `GET /delay?ms=N` answers N ms after its request was read,
//! `GET /lateness` answers how late those answers went out (`p50_us p99_us
//! max_us count`, plain text).
//!
//! Usage: `delay_server [PORT]` (default 0 = any free port); prints
//! `listening on 127.0.0.1:PORT` and serves until killed. Pin it to a CPU of
//! its own (`taskset -c 0`): it never sleeps.
//!
//! Why by hand and not on tokio: a server that sleeps until each answer is
//! due pays the wake-up of an idle CPU (on this VM a 0.5 ms sleep overshoots
//! by 1.2 ms at p99 and up to 5 ms), which the generator's error would carry.
//! Here one thread spins on `epoll_wait(.., 0)` and a heap of due answers, so
//! an answer leaves within microseconds of its time, and the lateness it
//! reports says so.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Instant;

use hdrhistogram::Histogram;

const LISTENER: u64 = u64::MAX;

/// One connection: its socket, unparsed bytes and a generation, so an answer
/// due on a connection closed and replaced (same fd) is not sent to the new one.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    gen: u64,
}

struct Server {
    epoll: i32,
    start: Instant,
    conns: HashMap<u64, Conn>,
    /// (due in ns from start, fd, generation)
    due: BinaryHeap<Reverse<(u64, u64, u64)>>,
    next_gen: u64,
    lateness: Histogram<u64>,
}

fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(0, |p| p.parse().expect("PORT must be a number"));
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind 127.0.0.1");
    listener.set_nonblocking(true).expect("nonblocking");
    println!("listening on {}", listener.local_addr().expect("address"));
    // SAFETY: plain syscall; the result is checked.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(epoll >= 0, "epoll_create1 failed");
    let mut s = Server {
        epoll,
        start: Instant::now(),
        conns: HashMap::new(),
        due: BinaryHeap::new(),
        next_gen: 0,
        lateness: Histogram::new(3).expect("3 significant digits"),
    };
    s.watch(listener.as_raw_fd(), LISTENER);
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    loop {
        s.answer_due();
        // SAFETY: `events` outlives the call and its length is passed.
        let n = unsafe { libc::epoll_wait(epoll, events.as_mut_ptr(), events.len() as i32, 0) };
        for ev in events.iter().take(n.max(0) as usize) {
            match ev.u64 {
                LISTENER => s.accept(&listener),
                fd => s.read(fd),
            }
        }
    }
}

impl Server {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn watch(&self, fd: i32, key: u64) {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: key,
        };
        // SAFETY: `ev` is a valid event for the duration of the call.
        let rc = unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_ADD, fd, &mut ev) };
        assert_eq!(rc, 0, "epoll_ctl failed");
    }

    fn accept(&mut self, listener: &TcpListener) {
        while let Ok((stream, _)) = listener.accept() {
            let _ = stream.set_nodelay(true);
            let _ = stream.set_nonblocking(true);
            let fd = stream.as_raw_fd();
            self.watch(fd, fd as u64);
            self.next_gen += 1;
            let conn = Conn {
                stream,
                buf: Vec::new(),
                gen: self.next_gen,
            };
            self.conns.insert(fd as u64, conn);
        }
    }

    /// Read what is there; queue an answer per complete request head.
    fn read(&mut self, fd: u64) {
        let now = self.now_ns();
        let Some(conn) = self.conns.get_mut(&fd) else {
            return;
        };
        let mut chunk = [0u8; 4096];
        let closed = loop {
            match conn.stream.read(&mut chunk) {
                Ok(0) => break true,
                Ok(n) => conn.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
                Err(_) => break true,
            }
        };
        while let Some(end) = find(&conn.buf, b"\r\n\r\n") {
            let head: Vec<u8> = conn.buf.drain(..end + 4).collect();
            match delay_ms(&head) {
                Some(ms) => self.due.push(Reverse((now + ms * 1_000_000, fd, conn.gen))),
                None => {
                    let body = lateness_text(&self.lateness);
                    let _ = conn.stream.write_all(reply(&body).as_bytes());
                }
            }
        }
        if closed {
            // Dropping the stream closes the fd, which leaves the epoll set.
            self.conns.remove(&fd);
        }
    }

    fn answer_due(&mut self) {
        let now = self.now_ns();
        while let Some(&Reverse((at, fd, gen))) = self.due.peek() {
            if at > now {
                return;
            }
            self.due.pop();
            if let Some(conn) = self.conns.get_mut(&fd).filter(|c| c.gen == gen) {
                let _ = conn.stream.write_all(reply("ok").as_bytes());
                self.lateness.saturating_record((now - at) / 1_000);
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `Some(ms)` for `/delay?ms=N` (and any other path: 0 ms), `None` for `/lateness`.
fn delay_ms(head: &[u8]) -> Option<u64> {
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let target = line.split(|&b| b == b' ').nth(1).unwrap_or_default();
    let target = std::str::from_utf8(target).unwrap_or("/");
    if target.starts_with("/lateness") {
        return None;
    }
    Some(
        target
            .split_once("ms=")
            .and_then(|(_, v)| v.split('&').next()?.parse().ok())
            .unwrap_or(0),
    )
}

fn lateness_text(h: &Histogram<u64>) -> String {
    format!(
        "p50_us {} p99_us {} max_us {} count {}\n",
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.99),
        h.max(),
        h.len()
    )
}

fn reply(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\ncontent-type: text/plain\r\n\r\n{body}",
        body.len()
    )
}
