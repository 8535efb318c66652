//! Both engines against the same odd but ordinary servers, over real
//! loopback sockets (issue 30): interim answers, many headers, framing
//! conflicts, idle kept-alive connections the server closes, early answers.
//! Every answer is judged by the one reader (`src/response/`), so the
//! engines must keep the same books. Tests named `r30_NN_*` reproduce
//! finding NN.

mod common;

use std::time::Duration;

use common::odd::{spawn, Odd};
use iolab_loadgen::io_uring_available;
use iolab_model::attack::{AttackPlan, AttackResult, Engine};
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::request::{RequestSet, RequestTemplate};

fn engines() -> Vec<Engine> {
    match io_uring_available() {
        Ok(()) => vec![Engine::Epoll, Engine::IoUring],
        Err(why) => {
            eprintln!("io_uring half skipped: {why}");
            vec![Engine::Epoll]
        }
    }
}

/// `n` requests, one client, on `engine`.
fn closed(url: &str, engine: Engine, n: u64) -> AttackPlan {
    AttackPlan {
        timeout: Duration::from_secs(2),
        threads: Some(1),
        engine,
        ..AttackPlan::new(
            url,
            Driver::Closed {
                concurrency: 1,
                requests: Some(n),
                duration: None,
            },
        )
    }
}

fn run(plan: &AttackPlan) -> AttackResult {
    common::run(plan).result
}

fn status(r: &AttackResult, code: u16) -> u64 {
    r.status_codes.get(&code.to_string()).copied().unwrap_or(0)
}

/// Finding 5: `103 Early Hints` / `100 Continue` before a 200 was counted
/// as a non-2xx 103 on both engines.
#[test]
fn r30_05_interim_answers_are_skipped_on_both_engines() {
    let srv = spawn(Odd::answering(
        b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ));
    for engine in engines() {
        let r = run(&closed(&srv.url(), engine, 20));
        assert_eq!((r.requests.ok, r.requests.non_2xx), (20, 0), "{engine:?}");
        assert_eq!(status(&r, 200), 20, "{engine:?}");
    }
}

/// Finding 6: 65 headers were a `read` error (64 slots on both engines).
#[test]
fn r30_06_many_headers_are_an_answer_on_both_engines() {
    let mut answer = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..200 {
        answer.extend_from_slice(format!("X-Header-{i}: value {i}\r\n").as_bytes());
    }
    answer.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    let srv = spawn(Odd::answering(&answer));
    for engine in engines() {
        let r = run(&closed(&srv.url(), engine, 10));
        assert_eq!(r.requests.ok, 10, "{engine:?}: {:?}", r.errors);
        // Configured lower, the same answer is malformed.
        let mut plan = closed(&srv.url(), engine, 3);
        plan.max_headers = Some(100);
        let r = run(&plan);
        assert_eq!(r.errors.read, 3, "{engine:?}");
    }
}

/// Finding 9: Content-Length 2 then 5 waited for the timeout; `+2` and
/// `Transfer-Encoding: notchunked` were accepted.
#[test]
fn r30_09_framing_conflicts_are_malformed_at_once_on_both_engines() {
    for answer in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhello"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
        b"HTTP/1.1 000 None\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: notchunked\r\n\r\n0\r\n\r\n",
    ] {
        let srv = spawn(Odd::answering(answer));
        for engine in engines() {
            let r = run(&closed(&srv.url(), engine, 3));
            assert_eq!(
                r.errors.read,
                3,
                "{engine:?} {}",
                String::from_utf8_lossy(answer)
            );
            assert_eq!(r.errors.timeout, 0);
        }
    }
}

/// Finding 7: a server closing idle kept-alive connections after 200 ms
/// gave 6 of 12 requests `reset` at 4 req/s. Each is now sent again, once,
/// on a new connection, counted in `retried`.
#[test]
fn r30_07_an_idle_close_is_retried_not_a_reset() {
    let srv = spawn(Odd {
        idle_close: Some(Duration::from_millis(100)),
        ..Odd::answering(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    for engine in engines() {
        let plan = AttackPlan {
            timeout: Duration::from_secs(2),
            threads: Some(1),
            engine,
            connections: ConnectionMode::KeepAlive { max: 1 },
            ..AttackPlan::new(srv.url(), Driver::constant(5.0, Duration::from_secs(2)))
        };
        let r = run(&plan);
        assert_eq!(r.requests.ok, r.requests.sent, "{engine:?}: {:?}", r.errors);
        assert!(r.requests.retried >= 5, "{engine:?}: {:?}", r.requests);
        assert_eq!(r.errors.reset, 0, "{engine:?}");
    }
}

/// A POST is not idempotent: the same idle close stays a `reset`.
#[test]
fn a_post_on_an_idle_closed_connection_is_not_retried() {
    let srv = spawn(Odd {
        idle_close: Some(Duration::from_millis(100)),
        ..Odd::answering(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    for engine in engines() {
        let mut post = RequestTemplate::get(srv.url());
        post.method = "POST".into();
        post.body = b"x".to_vec();
        let plan = AttackPlan {
            timeout: Duration::from_secs(2),
            threads: Some(1),
            engine,
            connections: ConnectionMode::KeepAlive { max: 1 },
            request: RequestSet {
                list: vec![post],
                ..RequestSet::default()
            },
            ..AttackPlan::new(srv.url(), Driver::constant(5.0, Duration::from_secs(1)))
        };
        let r = run(&plan);
        assert_eq!(r.requests.retried, 0, "{engine:?}");
        assert!(r.errors.reset >= 2, "{engine:?}: {:?}", r.errors);
    }
}

/// Finding 8: a `413` with `Connection: close` sent before a 4 MB body was
/// read was a `reset` on epoll and a `413` on io_uring.
#[test]
fn r30_08_an_early_answer_is_the_answer_on_both_engines() {
    let srv = spawn(Odd {
        early: true,
        ..Odd::answering(
            b"HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        )
    });
    for engine in engines() {
        let mut post = RequestTemplate::get(srv.url());
        post.method = "POST".into();
        post.body = vec![b'x'; 4 << 20];
        let plan = AttackPlan {
            request: RequestSet {
                list: vec![post],
                ..RequestSet::default()
            },
            ..closed(&srv.url(), engine, 5)
        };
        let r = run(&plan);
        assert_eq!(status(&r, 413), 5, "{engine:?}: {:?}", r.errors);
    }
}
