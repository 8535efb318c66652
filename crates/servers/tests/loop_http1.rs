//! The event-loop models' own HTTP/1.1 connections (src/loop_http1.rs, which
//! replaced hyper's so that a waiting request holds no buffer): keep-alive,
//! pipelining, heads that arrive in pieces, bodies read and dropped, HEAD,
//! Connection: close and HTTP/1.0, against a real server on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use iolab_model::ModelKind;
use iolab_servers::{start, Running, ServeConfig};

fn serve() -> (Running, String) {
    let mut config = ServeConfig::new(ModelKind::LoopAsync);
    config.grace = Duration::from_secs(1);
    let server = start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.url().trim_start_matches("http://").to_string();
    (server, addr)
}

fn connect(addr: &str) -> TcpStream {
    let c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c
}

/// One answer: status, headers (lowercase names), body.
fn read_answer(r: &mut BufReader<TcpStream>) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':').unwrap();
        headers.push((n.to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    (status, headers, body)
}

fn closed(r: &mut BufReader<TcpStream>) -> bool {
    let mut rest = Vec::new();
    matches!(r.read_to_end(&mut rest), Ok(0))
}

#[test]
fn keep_alive_pipelining_and_split_heads_are_answered_in_order() {
    let (server, addr) = serve();
    let mut c = connect(&addr);
    let mut r = BufReader::new(c.try_clone().unwrap());
    // Two requests in one write: answered in order on the one connection.
    c.write_all(b"GET /work?steps=sleep:30 HTTP/1.1\r\nHost: x\r\n\r\nGET /work?steps=cpu:10 HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (s1, _, b1) = read_answer(&mut r);
    let (s2, _, b2) = read_answer(&mut r);
    assert_eq!((s1, s2), (200, 200));
    assert!(String::from_utf8_lossy(&b1).contains("\"steps\":1"));
    assert!(String::from_utf8_lossy(&b2).contains("\"model\":\"loop-async\""));
    // A head in three pieces, a body that is read and dropped, then HEAD.
    for piece in [
        "GET /wo",
        "rk?steps=sleep:1 HT",
        "TP/1.1\r\nHost: x\r\n\r\n",
    ] {
        c.write_all(piece.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_eq!(read_answer(&mut r).0, 200);
    c.write_all(
        b"GET /health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloHEAD /health HTTP/1.1\r\n\r\n",
    )
    .unwrap();
    assert_eq!(read_answer(&mut r).0, 200);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    let mut head = String::new();
    while {
        head.clear();
        r.read_line(&mut head).unwrap();
        head.trim_end() != ""
    } {}
    // HEAD carried no body: the next answer starts right after its head.
    c.write_all(b"GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (s, headers, _) = read_answer(&mut r);
    assert_eq!(s, 404);
    assert!(headers.contains(&("connection".into(), "close".into())));
    assert!(closed(&mut r), "Connection: close was not honoured");
    server.stop().unwrap();
}

#[test]
fn http_1_0_closes_and_garbage_is_a_400() {
    let (server, addr) = serve();
    let mut c = connect(&addr);
    let mut r = BufReader::new(c.try_clone().unwrap());
    c.write_all(b"GET /health HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(read_answer(&mut r).0, 200);
    assert!(closed(&mut r));
    let mut c = connect(&addr);
    let mut r = BufReader::new(c.try_clone().unwrap());
    c.write_all(b"nonsense\r\n\r\n").unwrap();
    assert_eq!(read_answer(&mut r).0, 400);
    assert!(closed(&mut r));
    server.stop().unwrap();
}

/// A connection that never sends a whole request does not keep the server
/// from stopping.
#[test]
fn idle_and_half_sent_connections_do_not_hold_a_shutdown() {
    let (server, addr) = serve();
    let _idle = connect(&addr);
    let mut half = connect(&addr);
    half.write_all(b"GET /work?steps=sleep:1 HTTP/1.1\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = std::time::Instant::now();
    server.stop().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}
