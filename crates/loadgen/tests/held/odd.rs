//! Odd servers, each written here in a few lines over a real socket, and
//! the class each lands in: a 200 instead of 101, a handshake never
//! answered, every close code, a ping never answered, an event stream
//! without line ends, cut mid-event, or with a 10 MB event. Each run is
//! bounded in time (and by the event cap in memory) and keeps the identities.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

use super::{run, sections, sse, ws};

/// Serve every connection with `f` on its own thread.
fn spawn(f: impl Fn(TcpStream) + Send + Sync + Copy + 'static) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || f(s));
        }
    });
    addr
}

/// Read a request head; its `Sec-WebSocket-Key`, if any.
fn read_head(s: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).ok()? == 0 {
            return None;
        }
        buf.push(b[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    head.lines()
        .find_map(|l| {
            l.strip_prefix("Sec-WebSocket-Key: ")
                .or(l.strip_prefix("sec-websocket-key: "))
        })
        .map(|k| k.trim().to_string())
}

fn sse_head(s: &mut TcpStream) {
    let _ = read_head(s);
    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
}

fn short(mut plan: iolab_model::attack::HeldPlan) -> iolab_model::attack::HeldPlan {
    plan.timeout = Duration::from_millis(300);
    plan
}

#[test]
fn a_200_instead_of_101_is_refused_by_its_status() {
    let addr = spawn(|mut s| {
        let _ = read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        std::thread::sleep(Duration::from_millis(500));
    });
    let r = run(
        &ws(&format!("ws://{addr}/ws"), 3, Duration::from_secs(1), 5.0),
        Duration::from_secs(3),
    );
    let (c, m) = sections(&r.result);
    assert_eq!(
        (c.established, c.failed.get("status_200")),
        (0, Some(&3)),
        "{c:?}"
    );
    assert_eq!((m.sent, r.result.requests.non_2xx), (0, 3));
}

#[test]
fn a_handshake_never_answered_fails_at_the_timeout() {
    let addr = spawn(|mut s| {
        let _ = read_head(&mut s);
        std::thread::sleep(Duration::from_secs(5));
    });
    let plan = short(ws(
        &format!("ws://{addr}/ws"),
        2,
        Duration::from_secs(10),
        5.0,
    ));
    let r = run(&plan, Duration::from_secs(2));
    let (c, _) = sections(&r.result);
    assert_eq!(c.failed.get("handshake_timeout"), Some(&2), "{c:?}");
    assert_eq!(r.result.errors.timeout, 2);
}

fn close_after_first(s: TcpStream, code: u16) {
    let Ok(mut ws) = tokio_tungstenite::tungstenite::accept(s) else {
        return;
    };
    let _ = ws.read();
    let frame = CloseFrame {
        code: CloseCode::from(code),
        reason: "odd".into(),
    };
    let _ = ws.close(Some(frame));
    while ws.read().is_ok() {}
}

#[test]
fn a_server_close_is_counted_by_its_code_and_its_messages_lost() {
    // Every code a server may send (RFC 6455 7.4.1, IANA, and the
    // registered and private ranges) but 1014, which tungstenite refuses.
    let codes = [
        1000u16, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 3000, 4999,
    ];
    for code in codes {
        let addr = spawn(move |s| close_after_first(s, code));
        let plan = ws(&format!("ws://{addr}/ws"), 2, Duration::from_secs(3), 20.0);
        let r = run(&plan, Duration::from_secs(2));
        let (c, m) = sections(&r.result);
        assert_eq!(
            c.closed_by_server.get(&code.to_string()),
            Some(&2),
            "{code}: {c:?}"
        );
        assert_eq!((c.held, m.answered), (0, 0), "{code}");
        assert_eq!(
            m.lost, m.sent,
            "{code}: unanswered when the server closed: {m:?}"
        );
    }
}

#[test]
fn a_server_that_never_answers_a_ping_is_no_pong() {
    let addr = spawn(|mut s| {
        let Some(key) = read_head(&mut s) else { return };
        let head = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            derive_accept_key(key.as_bytes())
        );
        let _ = s.write_all(head.as_bytes());
        let mut sink = [0u8; 4096];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    let plan = short(ws(
        &format!("ws://{addr}/ws"),
        2,
        Duration::from_secs(10),
        0.0,
    ));
    let r = run(&plan, Duration::from_secs(2));
    let (c, _) = sections(&r.result);
    assert_eq!(c.broken.get("no_pong"), Some(&2), "{c:?}");
}

#[test]
fn an_event_stream_without_line_ends_stops_at_the_cap() {
    let addr = spawn(|mut s| {
        sse_head(&mut s);
        let _ = s.write_all(b"data: ");
        let junk = vec![b'x'; 64 << 10];
        while s.write_all(&junk).is_ok() {}
    });
    let r = run(
        &sse(&format!("http://{addr}/events"), 2, Duration::from_secs(10)),
        Duration::from_secs(3),
    );
    let (c, m) = sections(&r.result);
    assert_eq!(c.broken.get("oversize"), Some(&2), "{c:?}");
    assert_eq!(m.answered, 0);
}

#[test]
fn a_10_mb_event_is_oversize_not_memory() {
    let addr = spawn(|mut s| {
        sse_head(&mut s);
        let _ = s.write_all(b"id: 1\ndata: {\"seq\":1}\n\nid: 2\ndata: ");
        let _ = s.write_all(&vec![b'y'; 10 << 20]);
        let _ = s.write_all(b"\n\n");
    });
    let r = run(
        &sse(&format!("http://{addr}/events"), 1, Duration::from_secs(10)),
        Duration::from_secs(3),
    );
    let (c, m) = sections(&r.result);
    assert_eq!(
        (c.broken.get("oversize"), m.answered),
        (Some(&1), 1),
        "{c:?} {m:?}"
    );
}

#[test]
fn an_event_cut_without_its_line_end_is_truncated() {
    let addr = spawn(|mut s| {
        sse_head(&mut s);
        let _ = s.write_all(b"id: 1\ndata: {}\n\nid: 3\ndata: {}\n\nid: 4\ndata: half");
    });
    let r = run(
        &sse(&format!("http://{addr}/events"), 1, Duration::from_secs(10)),
        Duration::from_secs(3),
    );
    let (c, m) = sections(&r.result);
    assert_eq!(c.broken.get("truncated"), Some(&1), "{c:?}");
    assert_eq!(
        (m.sent, m.answered, m.lost),
        (3, 2, 1),
        "id 2 never came: {m:?}"
    );
}

#[test]
fn a_200_that_is_not_an_event_stream_is_its_class() {
    let addr = spawn(|mut s| {
        let _ = read_head(&mut s);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
        );
    });
    let r = run(
        &sse(&format!("http://{addr}/events"), 2, Duration::from_secs(1)),
        Duration::from_secs(3),
    );
    let (c, _) = sections(&r.result);
    assert_eq!(c.failed.get("not_event_stream"), Some(&2), "{c:?}");
}

#[test]
fn wss_echoes_over_tls_with_a_certificate_made_now() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let config = crate::common::echo::tls_config();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let conn = rustls::ServerConnection::new(config).unwrap();
                let tls = rustls::StreamOwned::new(conn, tcp);
                let Ok(mut ws) = tokio_tungstenite::tungstenite::accept(tls) else {
                    return;
                };
                while let Ok(msg) = ws.read() {
                    if msg.is_text() && ws.send(msg).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let mut plan = ws(
        &format!("wss://localhost:{}/ws", addr.port()),
        3,
        Duration::from_secs(1),
        10.0,
    );
    plan.insecure = true;
    let r = run(&plan, Duration::from_secs(6));
    let (c, m) = sections(&r.result);
    assert_eq!((c.established, c.held), (3, 3), "{c:?}");
    assert!(m.sent >= 27 && m.answered == m.sent, "{m:?}");

    // Without --insecure the certificate (self-signed) is refused: `tls`.
    plan.insecure = false;
    let r = run(&plan, Duration::from_secs(6));
    assert_eq!(sections(&r.result).0.failed.get("tls"), Some(&3));
}

#[test]
fn r52_1_a_chunked_event_stream_ending_in_one_read_keeps_its_events() {
    let addr = spawn(|mut s| {
        let _ = read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
        // Events split across chunks anywhere, then the last chunk.
        for piece in [&b"id: 1\ndata: {}\n"[..], b"\nid: 2\nda", b"ta: {}\n\n"] {
            let _ = write!(s, "{:x}\r\n", piece.len());
            let _ = s.write_all(piece);
            let _ = s.write_all(b"\r\n");
        }
        let _ = s.write_all(b"0\r\n\r\n");
        std::thread::sleep(Duration::from_millis(300));
    });
    let r = run(
        &sse(&format!("http://{addr}/events"), 1, Duration::from_secs(10)),
        Duration::from_secs(3),
    );
    let (c, m) = sections(&r.result);
    assert_eq!((m.sent, m.answered, m.lost), (2, 2, 0), "{m:?}");
    assert_eq!(
        c.broken.get("eof"),
        Some(&1),
        "the stream's last chunk ends it: {c:?}"
    );
}

#[test]
fn a_server_that_never_reads_ends_within_the_timeout_not_never() {
    let addr = spawn(|mut s| {
        let Some(key) = read_head(&mut s) else { return };
        let head = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
            derive_accept_key(key.as_bytes())
        );
        let _ = s.write_all(head.as_bytes());
        std::thread::sleep(Duration::from_secs(8));
    });
    let mut plan = short(ws(
        &format!("ws://{addr}/ws"),
        1,
        Duration::from_secs(10),
        1000.0,
    ));
    plan.message = "z".repeat(64 << 10);
    let r = run(&plan, Duration::from_secs(3));
    let (c, m) = sections(&r.result);
    let broken: Vec<&str> = c.broken.keys().map(String::as_str).collect();
    assert!(broken == ["stalled"] || broken == ["no_pong"], "{c:?}");
    assert_eq!((m.answered, m.lost), (0, m.sent), "{m:?}");
}

/// The 101 a raw server answers, from the request's key.
fn upgrade(s: &mut TcpStream) -> bool {
    let Some(key) = read_head(s) else {
        return false;
    };
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        derive_accept_key(key.as_bytes())
    );
    s.write_all(head.as_bytes()).is_ok()
}

#[test]
fn r52_3_a_close_code_no_server_may_send_is_not_taken_for_1002() {
    // 1006 (abnormal closure) is reserved: never on the wire.
    let addr = spawn(|mut s| {
        if upgrade(&mut s) {
            let _ = s.write_all(&[0x88, 0x02, 0x03, 0xEE]);
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    let r = run(
        &ws(&format!("ws://{addr}/ws"), 2, Duration::from_secs(3), 5.0),
        Duration::from_secs(2),
    );
    let (c, _) = sections(&r.result);
    assert_eq!(c.broken.get("bad_close_code"), Some(&2), "{c:?}");
    assert!(c.closed_by_server.is_empty(), "{c:?}");
}

#[test]
fn a_close_frame_without_a_code_is_counted_as_none() {
    let addr = spawn(|mut s| {
        if upgrade(&mut s) {
            let _ = s.write_all(&[0x88, 0x00]);
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    let r = run(
        &ws(&format!("ws://{addr}/ws"), 2, Duration::from_secs(3), 5.0),
        Duration::from_secs(2),
    );
    let (c, _) = sections(&r.result);
    assert_eq!(c.closed_by_server.get("none"), Some(&2), "{c:?}");
}

#[test]
fn a_frame_past_the_cap_is_oversize_before_it_is_read() {
    let addr = spawn(|mut s| {
        if upgrade(&mut s) {
            // A binary frame announcing 8 MiB: refused from its header.
            let mut frame = vec![0x82, 127];
            frame.extend_from_slice(&(8u64 << 20).to_be_bytes());
            let _ = s.write_all(&frame);
            let _ = s.write_all(&vec![0u8; 64 << 10]);
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    let r = run(
        &ws(&format!("ws://{addr}/ws"), 2, Duration::from_secs(3), 5.0),
        Duration::from_secs(2),
    );
    let (c, _) = sections(&r.result);
    assert_eq!(c.broken.get("oversize"), Some(&2), "{c:?}");
}
