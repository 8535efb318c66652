//! The reader against answers cut at every point. Tests named `r30_NN_*`
//! reproduce finding NN of issue 30; both engines run this one reader, and
//! `tests/odd_servers.rs` runs the same answers over real sockets.

use super::*;

/// Feed `wire` cut at every point into two receives, through a buffer that
/// starts small (so heads grow it), with `limits`.
fn read_split_with(wire: &[u8], limits: Limits) -> Vec<Result<Answer, ErrorClass>> {
    (1..wire.len())
        .map(|cut| {
            let mut buf = vec![0u8; 16];
            let mut r = Reader::new(limits);
            let mut fed = Fed::More(0);
            for part in [&wire[..cut], &wire[cut..]] {
                let mut part = part;
                while !part.is_empty() {
                    let at = r.recv_at();
                    let n = part.len().min(buf.len() - at);
                    buf[at..at + n].copy_from_slice(&part[..n]);
                    part = &part[n..];
                    fed = r.feed(&mut buf, n)?;
                    if let Fed::Done(a) = fed {
                        return Ok(a);
                    }
                }
            }
            match fed {
                Fed::Done(a) => Ok(a),
                Fed::More(_) => r.eof(),
            }
        })
        .collect()
}

fn read_split(wire: &[u8]) -> Vec<Result<Answer, ErrorClass>> {
    read_split_with(wire, Limits::default())
}

#[track_caller]
fn all_same(wire: &[u8], want: Result<Answer, ErrorClass>) {
    for (cut, got) in read_split(wire).into_iter().enumerate() {
        assert_eq!(got, want, "cut at {}", cut + 1);
    }
}

fn ok(status: u16, reusable: bool) -> Result<Answer, ErrorClass> {
    Ok(Answer { status, reusable })
}

const MALFORMED: Result<Answer, ErrorClass> = Err(ErrorClass::Read);

#[test]
fn length_chunked_and_close_delimited_bodies_in_any_split() {
    all_same(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        ok(200, true),
    );
    all_same(
        b"HTTP/1.1 404 X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        ok(404, true),
    );
    all_same(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil close",
        ok(200, false),
    );
    all_same(
        b"HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n",
        ok(204, true),
    );
    all_same(
        b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
        ok(200, false),
    );
    all_same(
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
        ok(200, true),
    );
    // Bare LF line ends, as some servers send.
    all_same(b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", ok(200, true));
}

#[test]
fn extra_bytes_forbid_reuse_and_garbage_or_a_cut_is_an_error() {
    // Whenever the stray byte comes with the body (every cut but the one
    // between the two), the connection is not reused.
    let extra = read_split(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab");
    let (last, rest) = extra.split_last().unwrap();
    assert!(rest.iter().all(|a| a.is_ok_and(|a| !a.reusable)));
    assert!(last.is_ok());
    all_same(b"NOT HTTP AT ALL\r\n\r\n", MALFORMED);
    all_same(
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        Err(ErrorClass::Reset),
    );
}

/// Finding 5: `103 Early Hints` or `100 Continue` before a 200 was
/// recorded as a non-2xx 103 and the real 200 discarded.
#[test]
fn r30_05_interim_answers_are_skipped_for_the_final_one() {
    all_same(
        b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ok(200, true),
    );
    all_same(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ok(201, true),
    );
    // Interim answers without end are no answer.
    let endless = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(MAX_INTERIM as usize + 1);
    all_same(&endless, MALFORMED);
    // A close after an interim answer: some byte came, so no retry.
    let mut r = Reader::default();
    let mut buf = b"HTTP/1.1 100 Continue\r\n\r\n".to_vec();
    let n = buf.len();
    assert_eq!(r.feed(&mut buf, n), Ok(Fed::More(0)));
    assert!(r.started());
    assert_eq!(r.eof(), Err(ErrorClass::Reset));
}

/// Decided: `101 Switching Protocols` to a request that asked for no
/// upgrade is not an answer this client can read: malformed.
#[test]
fn switching_protocols_unasked_is_malformed() {
    all_same(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
        MALFORMED,
    );
}

fn with_headers(n: usize) -> Vec<u8> {
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..n - 1 {
        wire.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
    }
    wire.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    wire
}

/// Finding 6: a valid answer with 65 headers was malformed (a fixed
/// 64-slot array in both engines).
#[test]
fn r30_06_many_headers_are_an_answer_up_to_the_configured_limit() {
    all_same(&with_headers(65), ok(200, true));
    all_same(&with_headers(DEFAULT_MAX_HEADERS), ok(200, true));
    all_same(&with_headers(DEFAULT_MAX_HEADERS + 1), MALFORMED);
    let many = Limits {
        max_headers: 2_000,
        ..Limits::default()
    };
    let got = read_split_with(&with_headers(2_000), many);
    assert!(got.iter().all(|a| *a == ok(200, true)));
    let few = Limits {
        max_headers: 3,
        ..Limits::default()
    };
    assert!(read_split_with(&with_headers(4), few)
        .iter()
        .all(|a| *a == MALFORMED));
    assert!(read_split_with(&with_headers(3), few)
        .iter()
        .all(|a| *a == ok(200, true)));
}

#[test]
fn a_head_past_its_byte_limit_is_malformed() {
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    wire.extend_from_slice(format!("X-Big: {}\r\n", "v".repeat(3000)).as_bytes());
    wire.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    let small = Limits {
        max_head: 2048,
        ..Limits::default()
    };
    assert!(read_split_with(&wire, small)
        .iter()
        .all(|a| *a == MALFORMED));
    all_same(&wire, ok(200, true));
}

/// Finding 9: duplicate Content-Length (2 then 5) waited for the timeout;
/// `+2`, status 000/099 and `Transfer-Encoding: notchunked` were accepted.
#[test]
fn r30_09_framing_conflicts_are_malformed() {
    for wire in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhello"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 2, 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nhi",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: notchunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ] {
        all_same(wire, MALFORMED);
    }
    // The same length twice is one length (RFC 9112 6.3 lets a recipient
    // take it, as curl and Go do).
    all_same(
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi",
        ok(200, true),
    );
    // Transfer-Encoding wins over Content-Length, and the connection goes.
    all_same(
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        ok(200, false),
    );
    // A known coding without chunked last: the body ends at the close.
    all_same(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzzz",
        ok(200, false),
    );
}

#[test]
fn a_head_answer_has_no_body_whatever_it_says() {
    let mut r = Reader::default();
    r.reset(true);
    let mut buf = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n".to_vec();
    let n = buf.len();
    assert_eq!(
        r.feed(&mut buf, n),
        Ok(Fed::Done(Answer {
            status: 200,
            reusable: true
        }))
    );
}

#[test]
fn a_long_head_grows_the_buffer_up_to_the_cap() {
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..50 {
        wire.extend_from_slice(format!("X-H{i}: {}\r\n", "v".repeat(40)).as_bytes());
    }
    wire.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    let mut buf = vec![0u8; 64];
    let mut r = Reader::default();
    let mut sent = 0;
    loop {
        let at = r.recv_at();
        let n = (wire.len() - sent).min(buf.len() - at);
        buf[at..at + n].copy_from_slice(&wire[sent..sent + n]);
        sent += n;
        if let Fed::Done(a) = r.feed(&mut buf, n).unwrap() {
            assert_eq!(a.status, 200);
            break;
        }
    }
    assert!(buf.len() >= wire.len());
}

/// How a generated answer frames its body, and what the reader must make of it.
const FRAMINGS: [(&str, &[u8], Option<bool>); 8] = [
    ("Content-Length: 2\r\n", b"ok", Some(true)),
    (
        "Content-Length: 2\r\nContent-Length: 2\r\n",
        b"ok",
        Some(true),
    ),
    ("Content-Length: 2\r\nContent-Length: 5\r\n", b"hello", None),
    ("Content-Length: +2\r\n", b"ok", None),
    (
        "Transfer-Encoding: chunked\r\n",
        b"2\r\nok\r\n0\r\n\r\n",
        Some(true),
    ),
    ("Transfer-Encoding: notchunked\r\n", b"0\r\n\r\n", None),
    (
        "Content-Length: 9\r\nTransfer-Encoding: chunked\r\n",
        b"0\r\n\r\n",
        Some(false),
    ),
    ("Connection: close\r\n", b"until the close", Some(false)),
];

/// Fuzz pass over generated answers: every combination of interim answers,
/// final status, header count (around the stack's 64 and the default 256)
/// and framing (conflicts included), each cut at several points, is read
/// as the rules say: an expected answer is computed apart from the reader.
#[test]
fn generated_answers_are_judged_by_the_rules_in_any_split() {
    let interims: [&[u16]; 5] = [&[], &[100], &[103], &[100, 103, 102], &[199]];
    let mut cases = 0;
    for interim in interims {
        for status in [200u16, 404, 0, 99, 101] {
            for extra in [0usize, 62, 63, 64, 200, 254, 255, 256] {
                for (framing, body, reusable) in FRAMINGS {
                    let mut wire = Vec::new();
                    for code in interim {
                        wire.extend_from_slice(format!("HTTP/1.1 {code} I\r\n\r\n").as_bytes());
                    }
                    wire.extend_from_slice(format!("HTTP/1.1 {status:03} S\r\n").as_bytes());
                    for i in 0..extra {
                        wire.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
                    }
                    wire.extend_from_slice(framing.as_bytes());
                    wire.extend_from_slice(b"\r\n");
                    wire.extend_from_slice(body);
                    let headers = extra + framing.matches("\r\n").count();
                    let want = match reusable {
                        _ if status < 100 || status == 101 => MALFORMED,
                        _ if headers > DEFAULT_MAX_HEADERS => MALFORMED,
                        None => MALFORMED,
                        Some(reusable) => ok(status, reusable),
                    };
                    for cut in [1, wire.len() / 3, wire.len() / 2, wire.len() - 1] {
                        let got = read_cut(&wire, cut);
                        assert_eq!(got, want, "cut {cut} of {}", String::from_utf8_lossy(&wire));
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 5 * 5 * 8 * FRAMINGS.len() * 4);
}

/// `wire` in two receives cut at `cut`, then the peer's close if needed.
fn read_cut(wire: &[u8], cut: usize) -> Result<Answer, ErrorClass> {
    let mut buf = vec![0u8; 16];
    let mut r = Reader::default();
    for part in [&wire[..cut], &wire[cut..]] {
        let mut part = part;
        while !part.is_empty() {
            let at = r.recv_at();
            let n = part.len().min(buf.len() - at);
            buf[at..at + n].copy_from_slice(&part[..n]);
            part = &part[n..];
            if let Fed::Done(a) = r.feed(&mut buf, n)? {
                return Ok(a);
            }
        }
    }
    r.eof()
}
