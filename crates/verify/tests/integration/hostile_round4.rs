//! Hostile round 4 (issue 49), `verify --http2`: servers written frame by
//! frame on loopback (the generator's `h2raw.rs`) that break their
//! SETTINGS, reset streams, flood interim heads or headers. A fault names
//! what the server did, asks "does the target speak h2c?" only of one
//! that sent no HTTP/2 frame, and an answer is read by the generator's
//! HTTP/2 rules.

#[path = "../../../loadgen/tests/common/h2raw.rs"]
mod h2raw;

use std::io::{Read, Write};
use std::time::Duration;

use h2raw::{field, frame, headers, status, Script};
use iolab_verify::{verify, VerifyOptions};

/// Every check's detail, of a `verify --http2` of `url`.
fn details(url: &str) -> Vec<String> {
    let opts = VerifyOptions {
        timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(10),
        http2: true,
        ..VerifyOptions::default()
    };
    let report = verify(url, &opts).expect("verify runs");
    assert!(!report.passed());
    report.checks.into_iter().map(|c| c.detail).collect()
}

fn any(details: &[String], text: &str) -> bool {
    details.iter().any(|d| d.contains(text))
}

/// Finding 3: "(does the target speak h2c?)" was appended to the faults
/// of servers that plainly speak it; now only when no HTTP/2 frame came.
#[test]
fn r38_3_verify_names_the_broken_setting_and_asks_h2c_only_of_http1() {
    let broken = h2raw::spawn(Script {
        settings: vec![(h2raw::MAX_FRAME_SIZE, 100)],
        ..Script::answering(|id| headers(id, true, &status(200)))
    });
    let d = details(&broken.url("http"));
    assert!(any(&d, "SETTINGS_MAX_FRAME_SIZE=100"), "{d:#?}");
    assert!(!any(&d, "speak h2c"), "{d:#?}");
    let resets = h2raw::spawn(Script::answering(|id| frame(3, 0, id, &2u32.to_be_bytes())));
    let d = details(&resets.url("http"));
    assert!(any(&d, "INTERNAL_ERROR") && !any(&d, "speak h2c"), "{d:#?}");
    let http1 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", http1.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut s in http1.incoming().flatten() {
            let _ = s.read(&mut [0u8; 1024]);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let d = details(&url);
    assert!(any(&d, "speak h2c"), "{d:#?}");
}

/// Finding 4: `verify --http2` took 10,000 interim heads and any number
/// of headers; it reads an HTTP/2 answer as an HTTP/1.1 one (32 interim
/// heads, 256 headers).
#[test]
fn r38_4_verify_reads_http2_answers_by_the_http1_rules() {
    let interim = h2raw::spawn(Script::answering(|id| {
        let mut bytes = Vec::new();
        for _ in 0..10_000 {
            bytes.extend(headers(id, false, &status(103)));
        }
        bytes.extend(headers(id, true, &status(200)));
        bytes
    }));
    let d = details(&interim.url("http"));
    assert!(any(&d, "more than 32 interim"), "{d:#?}");
    let many = h2raw::spawn(Script::answering(|id| {
        let mut block = status(200);
        for i in 0..300 {
            block.extend(field(&format!("x-h{i}"), "v"));
        }
        headers(id, true, &block)
    }));
    let d = details(&many.url("http"));
    assert!(any(&d, "300 headers, over the cap of 256"), "{d:#?}");
}
