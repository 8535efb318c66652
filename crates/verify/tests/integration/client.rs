//! The one HTTP GET against real servers on loopback, well-behaved and not:
//! one that never answers, one that trickles a byte every 2 s (in the head
//! and in the body), and ones that stream a body without end. Each call ends
//! by its deadline or its body cap, and says which.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use iolab_verify::client::{get, Endpoint, Limits};

/// A server for one connection: reads the request head, then hands the
/// socket to `then`, whose result the handle returns.
fn serve<T: Send + 'static>(
    then: impl FnOnce(TcpStream) -> T + Send + 'static,
) -> (Endpoint, JoinHandle<T>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let h = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut req = Vec::new();
        let mut b = [0u8; 1024];
        while !req.ends_with(b"\r\n\r\n") {
            let n = s.read(&mut b).unwrap();
            assert!(n > 0, "request cut short");
            req.extend_from_slice(&b[..n]);
        }
        then(s)
    });
    (Endpoint::parse(&url).unwrap(), h)
}

/// Write `bytes` one at a time, `every` apart, until the client leaves.
fn trickle(mut s: TcpStream, bytes: &'static [u8], every: Duration) {
    for b in bytes {
        if s.write_all(&[*b]).is_err() {
            return;
        }
        thread::sleep(every);
    }
}

/// Write `head`, then zeros (raw, or as 64 KiB chunks) until the client
/// leaves; returns the bytes written.
fn endless(mut s: TcpStream, head: &'static str, chunked: bool) -> u64 {
    let zeros = vec![b'0'; 64 * 1024];
    let mut sent = 0u64;
    let _ = s.write_all(head.as_bytes());
    loop {
        let r = if chunked {
            s.write_all(b"10000\r\n")
                .and_then(|_| s.write_all(&zeros))
                .and_then(|_| s.write_all(b"\r\n"))
        } else {
            s.write_all(&zeros)
        };
        if r.is_err() || sent > 8 << 30 {
            return sent;
        }
        sent += zeros.len() as u64;
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

#[test]
fn reads_length_and_chunked_bodies() {
    let (t, h) = serve(|mut s| {
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
    });
    let r = t.get("/health", Duration::from_secs(2)).unwrap();
    assert_eq!((r.status, r.body.as_str()), (200, "ok"));
    h.join().unwrap();

    let (t, h) = serve(|mut s| {
        s.write_all(b"HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n")
            .unwrap();
    });
    let url = format!("http://{}/metrics?x=1", t.addr);
    let r = get(&url, Duration::from_secs(2)).unwrap();
    assert_eq!((r.status, r.body.as_str()), (503, "abcdef"));
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    h.join().unwrap();
    let refused = get(&url, Duration::from_millis(200)).unwrap_err();
    assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn a_server_that_never_answers_is_left_at_the_deadline() {
    let (t, h) = serve(|mut s| {
        // Hold the connection, silent, until the client leaves.
        let _ = s.read(&mut [0u8; 16]);
    });
    let (r, took) = timed(|| t.get("/health", Duration::from_millis(500)));
    let e = r.unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
    assert!(e.to_string().contains("within 500ms"), "{e}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    h.join().unwrap();
}

/// A byte every 2 s is more often than a 2.5 s read timeout fires: only one
/// deadline for the whole call ends it.
#[test]
fn a_trickled_head_cannot_outlast_the_deadline() {
    let (t, _h) = serve(|s| {
        trickle(
            s,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            Duration::from_secs(2),
        )
    });
    let (r, took) = timed(|| t.get("/health", Duration::from_millis(2500)));
    assert_eq!(r.unwrap_err().kind(), io::ErrorKind::TimedOut);
    assert!(took < Duration::from_millis(3500), "{took:?}");
}

#[test]
fn a_trickled_body_cannot_outlast_the_deadline() {
    let (t, _h) = serve(|mut s| {
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            .unwrap();
        trickle(s, &[b'x'; 1000], Duration::from_secs(2));
    });
    let (r, took) = timed(|| t.get("/metrics", Duration::from_millis(2500)));
    assert_eq!(r.unwrap_err().kind(), io::ErrorKind::TimedOut);
    assert!(took < Duration::from_millis(3500), "{took:?}");
}

#[test]
fn a_100_gb_content_length_fails_at_once_naming_the_cap() {
    let head = "HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n";
    let (t, h) = serve(move |s| endless(s, head, false));
    let (r, took) = timed(|| t.get("/metrics", Duration::from_secs(10)));
    let e = r.unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("16 MiB cap"), "{e}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(h.join().unwrap() < 64 << 20, "the client stopped reading");
}

#[test]
fn endless_bodies_are_read_up_to_the_cap_only() {
    let limits = Limits {
        max_body: 1 << 20,
        ..Limits::within(Duration::from_secs(20))
    };
    for (head, chunked) in [
        ("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            true,
        ),
    ] {
        let (t, h) = serve(move |s| endless(s, head, chunked));
        let (r, took) = timed(|| t.get_with("/metrics", &limits));
        let e = r.unwrap_err();
        assert!(e.to_string().contains("longer than the 1 MiB cap"), "{e}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // The client left after about 1 MiB: the server could not write much more.
        let sent = h.join().unwrap();
        assert!(sent < 64 << 20, "{sent} bytes sent");
    }
}
