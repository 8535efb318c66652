//! Hostile answers and targets files, generated (issue 30's fuzz pass): the
//! generator's one answer reader (`iolab_loadgen::response`) fed answers
//! made of interim heads, many headers and every framing, in random pieces;
//! vegeta-format targets files of any text. Properties: no panic; an answer
//! within the limits is read as its final status however it is cut; past
//! the limits or with conflicting framing it is a `read`; a refused
//! targets file is one line naming the file and line.

#[path = "../../../fuzz/corpus.rs"]
mod corpus;

use iolab_loadgen::response::{Fed, Limits, Reader, DEFAULT_MAX_HEADERS};
use iolab_loadgen::{parse_request_list, ErrorClass};
use proptest::prelude::*;

/// How the generated answer frames its body.
#[derive(Debug, Clone, Copy)]
enum Body {
    /// `Content-Length: n`, then n bytes.
    Length(usize),
    /// Two different Content-Lengths: malformed.
    TwoLengths(usize),
    /// `Transfer-Encoding: chunked`, the body in chunks of these sizes.
    Chunked(usize, usize),
    /// A transfer coding nobody registered: malformed.
    OddCoding,
    /// No framing: the body ends when the server closes.
    UntilClose(usize),
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        (0usize..3000).prop_map(Body::Length),
        (1usize..100).prop_map(Body::TwoLengths),
        (1usize..500, 0usize..500).prop_map(|(a, b)| Body::Chunked(a, b)),
        Just(Body::OddCoding),
        (0usize..2000).prop_map(Body::UntilClose),
    ]
}

/// The bytes of `interim` 1xx heads, then a final `status` head with
/// `headers` extra header lines and `body`.
fn answer(interim: &[u16], status: u16, headers: usize, body: Body) -> Vec<u8> {
    let mut out = Vec::new();
    for code in interim {
        out.extend(format!("HTTP/1.1 {code} Interim\r\nLink: </a.css>\r\n\r\n").bytes());
    }
    out.extend(format!("HTTP/1.1 {status} Whatever\r\n").bytes());
    for i in 0..headers {
        out.extend(format!("X-H{i}: v{i}\r\n").bytes());
    }
    let payload = |n: usize| vec![b'x'; n];
    match body {
        Body::Length(n) => {
            out.extend(format!("Content-Length: {n}\r\n\r\n").bytes());
            out.extend(payload(n));
        }
        Body::TwoLengths(n) => {
            out.extend(format!("Content-Length: {n}\r\nContent-Length: {}\r\n\r\n", n + 3).bytes());
            out.extend(payload(n));
        }
        Body::Chunked(a, b) => {
            out.extend(b"Transfer-Encoding: chunked\r\n\r\n");
            for n in [a, b].into_iter().filter(|n| *n > 0) {
                out.extend(format!("{n:x}\r\n").bytes());
                out.extend(payload(n));
                out.extend(b"\r\n");
            }
            out.extend(b"0\r\n\r\n");
        }
        Body::OddCoding => {
            out.extend(b"Transfer-Encoding: notchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        }
        Body::UntilClose(n) => {
            out.extend(b"\r\n");
            out.extend(payload(n));
        }
    }
    out
}

/// Feed `wire` to a reader in pieces of `piece` bytes (as an engine
/// receives them), then the peer's close: the reader's verdict.
fn read(wire: &[u8], piece: usize) -> Result<u16, ErrorClass> {
    let mut reader = Reader::new(Limits::default());
    let mut buf = vec![0u8; 1024];
    let mut pos = 0;
    loop {
        if pos == wire.len() {
            return reader.eof().map(|a| a.status);
        }
        let at = reader.recv_at();
        let n = piece.min(buf.len() - at).min(wire.len() - pos);
        assert!(n > 0, "the reader left no room to receive into");
        buf[at..at + n].copy_from_slice(&wire[pos..pos + n]);
        pos += n;
        match reader.feed(&mut buf, n)? {
            Fed::More(_) => {}
            Fed::Done(a) => return Ok(a.status),
        }
    }
}

/// What the reader must say of a generated answer.
fn expected(interim: usize, status: u16, headers: usize, body: Body) -> Result<u16, ErrorClass> {
    // Each head is bounded alone; the final one carries its framing line(s) too.
    let framing_lines = match body {
        Body::TwoLengths(_) => 2,
        Body::UntilClose(_) => 0,
        _ => 1,
    };
    let malformed = matches!(body, Body::TwoLengths(_) | Body::OddCoding);
    if interim > iolab_loadgen::response::MAX_INTERIM as usize
        || headers + framing_lines > DEFAULT_MAX_HEADERS
        || malformed
    {
        return Err(ErrorClass::Read);
    }
    Ok(status)
}

#[test]
fn the_targets_corpus_is_parsed_or_refused_in_one_line() {
    let no_bodies = |p: &str| Err(format!("body file {p} not read in this test"));
    for (name, bytes) in corpus::inputs("targets") {
        let text = String::from_utf8_lossy(&bytes);
        match parse_request_list(&text, &name, &no_bodies) {
            Ok(list) => assert!(!list.is_empty(), "{name}"),
            Err(e) => {
                let e = e.to_string();
                assert!(!e.contains('\n') && e.starts_with(&name), "{name}: {e}")
            }
        }
    }
    // Finding 16: a header whose value is a URL stays a header.
    let text = std::fs::read_to_string(corpus::dir("targets").join("referer-url.txt")).unwrap();
    let list = parse_request_list(&text, "referer-url.txt", &no_bodies).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].headers.len(), 2, "{:?}", list[0]);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: corpus::cases(256),
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    })]

    #[test]
    fn r30_answers_are_read_as_their_final_status_however_cut(
        interim in prop::collection::vec(prop::sample::select(vec![100u16, 102, 103, 199]), 0..40),
        // 204 and 304 have no body whatever their framing says.
        status in (200u16..600).prop_filter("an answer with a body", |s| *s != 204 && *s != 304),
        headers in prop_oneof![0usize..80, 240usize..270],
        body in body(),
        piece in prop_oneof![1usize..8, 8usize..4096],
    ) {
        let wire = answer(&interim, status, headers, body);
        prop_assert_eq!(read(&wire, piece), expected(interim.len(), status, headers, body));
    }

    #[test]
    fn any_bytes_as_an_answer_never_panic(wire in prop::collection::vec(any::<u8>(), 0..2048), piece in 1usize..512) {
        let _ = read(&wire, piece);
    }

    #[test]
    fn any_targets_file_is_parsed_or_refused_in_one_line(text in "\\PC{0,300}") {
        let no_bodies = |p: &str| Err(format!("body file {p} not read in this test"));
        if let Err(e) = parse_request_list(&text, "t.txt", &no_bodies) {
            let e = e.to_string();
            prop_assert!(!e.contains('\n'), "two lines: {}", e);
            prop_assert!(e.starts_with("t.txt"), "does not name the file: {}", e);
        }
    }

    #[test]
    fn targets_files_of_request_shaped_lines_are_parsed_or_refused_in_one_line(
        lines in prop::collection::vec(
            prop_oneof![
                "(GET|POST|PUT|get|G3T) (http|https|ftp)://127\\.0\\.0\\.1:[0-9]{1,5}/[a-z?=&]{0,10}",
                "[A-Za-z-]{1,12}: (http://[a-z.]{1,10}/|[ -~]{0,20})",
                "@[a-z./]{0,12}",
                "#[ -~]{0,20}",
                Just(String::new()),
            ],
            0..12,
        ),
    ) {
        let text = lines.join("\n");
        let no_bodies = |p: &str| Err(format!("body file {p} not read in this test"));
        match parse_request_list(&text, "t.txt", &no_bodies) {
            Ok(list) => {
                prop_assert!(!list.is_empty());
                for r in &list {
                    prop_assert!(r.method.chars().all(|c| c.is_ascii_uppercase()), "{:?}", r);
                }
            }
            Err(e) => {
                let e = e.to_string();
                prop_assert!(!e.contains('\n') && e.starts_with("t.txt"), "{}", e)
            }
        }
    }
}
