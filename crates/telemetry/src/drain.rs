//! Between runs: wait for the previous target's sockets to drain, so the next
//! run does not start with the last one's connections still closing or the
//! machine short of ephemeral ports (TIME_WAIT lasts 60 s on Linux).

use std::thread;
use std::time::{Duration, Instant};

/// TCP states in `/proc/net/tcp` (hex).
const TIME_WAIT: &str = "06";
const LISTEN: &str = "0A";
const CLOSE: &str = "07";

/// Socket counts that involve one port.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PortSockets {
    /// Still open or closing (not TIME_WAIT, not LISTEN).
    pub active: usize,
    /// In TIME_WAIT.
    pub time_wait: usize,
}

/// Count sockets on `port` (local or remote), IPv4 and IPv6, and all
/// TIME_WAIT sockets on the machine.
pub fn count(port: u16) -> (PortSockets, usize) {
    let mut s = PortSockets::default();
    let mut all_tw = 0;
    let hex = format!(":{port:04X}");
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 {
                continue;
            }
            let (local, remote, state) = (f[1], f[2], f[3]);
            if state == TIME_WAIT {
                all_tw += 1;
            }
            if !(local.ends_with(&hex) || remote.ends_with(&hex)) {
                continue;
            }
            match state {
                TIME_WAIT => s.time_wait += 1,
                LISTEN | CLOSE => {}
                _ => s.active += 1,
            }
        }
    }
    (s, all_tw)
}

/// Wait (at most `max`) until nothing on `port` is still open or closing and
/// the machine's TIME_WAIT sockets hold under half of `ephemeral` ports.
/// Returns how long it waited.
pub fn wait(port: u16, ephemeral: usize, max: Duration) -> Duration {
    let start = Instant::now();
    let tw_limit = (ephemeral / 2).max(1_000);
    loop {
        let (s, all_tw) = count(port);
        if (s.active == 0 && all_tw < tw_limit) || start.elapsed() >= max {
            return start.elapsed();
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn sees_an_open_connection_and_its_drain() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (s, _) = l.accept().unwrap();
        let (n, _) = count(port);
        assert!(n.active >= 2, "{n:?}");
        drop(c);
        drop(s);
        drop(l);
        // Only this port's drain is under test: the machine's own TIME_WAIT sockets (15-28k
        // from other work on a shared machine) must not decide it, so their limit is set
        // above any count.
        let waited = wait(port, usize::MAX, Duration::from_secs(5));
        assert!(waited < Duration::from_secs(5));
        assert_eq!(count(port).0.active, 0);
    }
}
