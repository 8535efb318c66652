//! A TLS server that ends its answers by closing, with and without
//! `close_notify` (issue 30, finding 10): a real rustls server on 127.0.0.1
//! with a certificate made now by rcgen.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

use common::{open, run};
use iolab_model::attack::AttackResult;

/// How the server ends each connection after writing its answer.
#[derive(Debug, Clone, Copy)]
enum End {
    /// `close_notify`, then the TCP close.
    CloseNotify,
    /// The TCP close alone.
    Unclean,
}

/// A server answering `answer` once per connection, then ending it by `end`.
fn spawn(answer: &'static [u8], end: End) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let config = common::echo::tls_config();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || connection(tcp, config, answer, end));
        }
    });
    addr
}

fn connection(tcp: TcpStream, config: Arc<rustls::ServerConfig>, answer: &[u8], end: End) {
    let conn = rustls::ServerConnection::new(config).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tls.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    if tls.write_all(answer).and_then(|()| tls.flush()).is_err() {
        return;
    }
    if let End::CloseNotify = end {
        tls.conn.send_close_notify();
        let _ = tls.flush();
    }
    let _ = tls.sock.shutdown(Shutdown::Both);
}

fn attack(addr: SocketAddr) -> AttackResult {
    let mut plan = open(&format!("https://{addr}/"), 20.0, 0.5);
    plan.request.insecure = true;
    run(&plan).result
}

const UNTIL_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello, until close";

#[test]
fn r30_10_a_close_delimited_body_ended_without_close_notify_is_an_answer() {
    let r = attack(spawn(UNTIL_CLOSE, End::Unclean));
    let q = &r.requests;
    assert!(q.planned > 0 && q.sent > 0, "{q:?}");
    assert_eq!(
        (q.ok, r.errors.total()),
        (q.sent, 0),
        "{q:?} {:?}",
        r.errors
    );
    // Counted apart: every one of them ended so.
    assert_eq!(q.unclean_tls_close, q.ok, "{q:?}");
}

#[test]
fn r30_10_a_clean_close_is_not_counted_and_a_cut_length_stays_a_reset() {
    let r = attack(spawn(UNTIL_CLOSE, End::CloseNotify));
    let q = &r.requests;
    assert_eq!(
        (q.ok, q.unclean_tls_close),
        (q.sent, 0),
        "{q:?} {:?}",
        r.errors
    );
    // A Content-Length body cut short by the same close is a cut, seen as one.
    let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this";
    let r = attack(spawn(cut, End::Unclean));
    let q = &r.requests;
    assert_eq!((q.ok, q.unclean_tls_close), (0, 0), "{q:?}");
    assert_eq!(r.errors.reset, q.sent, "{:?}", r.errors);
}
