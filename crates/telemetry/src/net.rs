//! What the kernel knows about a target's port, without the target's help:
//! the listen socket's accept queue (connections the kernel completed that
//! the target has not accepted yet: `rx_queue` of the LISTEN row of
//! `/proc/net/tcp`, as `ss -lnt` shows it in Recv-Q) and the connections
//! established on the port. A drowning target cannot hide either.

/// The kernel's view of one port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortView {
    /// Connections waiting in the listen socket's accept queue.
    pub accept_queue: u64,
    /// Connections established on the port (accepted or not).
    pub established: u64,
}

/// TCP states of `/proc/net/tcp` (include/net/tcp_states.h).
const ESTABLISHED: u8 = 0x01;
const LISTEN: u8 = 0x0A;

/// The view of `port` from `/proc/net/tcp` and `/proc/net/tcp6`; `None` when
/// neither can be read or no socket listens on the port.
pub fn port_view(port: u16) -> Option<PortView> {
    let mut view = PortView::default();
    let mut listening = false;
    let mut read_any = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        read_any = true;
        listening |= add_rows(&text, port, &mut view);
    }
    (read_any && listening).then_some(view)
}

/// Add the rows of one table for `port`; true when a LISTEN row was there.
fn add_rows(text: &str, port: u16, view: &mut PortView) -> bool {
    let mut listening = false;
    for row in text.lines().skip(1) {
        let f: Vec<&str> = row.split_whitespace().collect();
        let (Some(local), Some(state), Some(queues)) = (f.get(1), f.get(3), f.get(4)) else {
            continue;
        };
        let local_port = local
            .rsplit_once(':')
            .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
        if local_port != Some(port) {
            continue;
        }
        match u8::from_str_radix(state, 16) {
            Ok(LISTEN) => {
                listening = true;
                let rx = queues
                    .split_once(':')
                    .and_then(|(_, rx)| u64::from_str_radix(rx, 16).ok());
                view.accept_queue += rx.unwrap_or(0);
            }
            Ok(ESTABLISHED) => view.established += 1,
            _ => {}
        }
    }
    listening
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_accept_queue_and_connections_of_a_port() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000064:00000003 00:00000000 00000000     0        0 1 1\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 2 1\n\
   2: 0100007F:1F90 0100007F:C351 01 00000000:00000000 00:00000000 00000000     0        0 3 1\n\
   3: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4 1\n";
        let mut v = PortView::default();
        assert!(add_rows(text, 0x1F90, &mut v));
        assert_eq!(
            v,
            PortView {
                accept_queue: 3,
                established: 2
            }
        );
        let mut none = PortView::default();
        assert!(!add_rows(text, 9, &mut none));
    }

    #[test]
    fn sees_a_real_listen_queue_fill() {
        // A listener that never accepts: connections wait in its queue.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let _c: Vec<_> = (0..3)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let v = port_view(port).expect("a listening port");
        assert_eq!(v.accept_queue, 3, "{v:?}");
        assert!(v.established >= 3, "{v:?}");
    }
}
