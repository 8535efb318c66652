//! Accepting on a blocking std listener without missing a shutdown: wait for
//! a connection with `poll(2)` in short ticks, then `accept`.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::{ServeError, Shutdown};

/// How often a waiting acceptor looks at the shutdown trigger.
pub const TICK: Duration = Duration::from_millis(100);

/// Set the kernel listen backlog (a second `listen(2)` on Linux resizes it)
/// and make `accept` non-blocking, so a tick never hangs in it.
pub fn prepare(listener: &TcpListener, backlog: u32) -> Result<(), ServeError> {
    socket2::SockRef::from(listener)
        .listen(backlog.min(i32::MAX as u32) as i32)
        .map_err(ServeError::io("setting the listen backlog"))?;
    listener
        .set_nonblocking(true)
        .map_err(ServeError::io("making the listener non-blocking"))
}

/// The next connection, or `None` once `shutdown` fires. Out of file
/// descriptors (EMFILE) backs off briefly and tries again, as Tomcat does.
pub fn next(listener: &TcpListener, shutdown: &Shutdown) -> Option<TcpStream> {
    loop {
        if shutdown.is_triggered() {
            return None;
        }
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, count 1.
        let n = unsafe { libc::poll(&mut pfd, 1, TICK.as_millis() as i32) };
        if n <= 0 {
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                return Some(stream);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
