//! `/work?steps=...&body=value` against a real memcached (IOLAB_MC, started by
//! scripts/test): every built-in model answers the exact bytes of the last
//! `mc` step's value, frames them right on a kept-alive connection, and keeps
//! errors as JSON.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use iolab_backends::{BackendConfig, Backends};
use iolab_model::ModelKind;
use iolab_servers::{start, ServeConfig};

fn mc_addr() -> String {
    std::env::var("IOLAB_MC").unwrap_or_else(|_| {
        panic!(
            "IOLAB_MC is not set: run the tests with scripts/test, or first \
             eval \"$(scripts/services up)\" to start the real services"
        )
    })
}

/// `len` bytes that differ from key to key and from place to place.
fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// One answer read off a kept-alive connection: status, Content-Type, body.
fn exchange(conn: &mut BufReader<TcpStream>, path: &str) -> (u16, String, Vec<u8>) {
    write!(
        conn.get_mut(),
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    )
    .unwrap();
    let mut status_line = String::new();
    conn.read_line(&mut status_line).unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let (mut ctype, mut len) = (String::new(), 0usize);
    loop {
        let mut line = String::new();
        conn.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        match name.to_ascii_lowercase().as_str() {
            "content-type" => ctype = value.trim().to_string(),
            "content-length" => len = value.trim().parse().unwrap(),
            _ => {}
        }
    }
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).unwrap();
    (status, ctype, body)
}

#[test]
fn every_model_answers_the_last_mc_value_byte_for_byte() {
    let addr = mc_addr();
    // Keys of this test only, so parallel tests on the shared server cannot
    // change them underneath.
    let (k1, k2) = ("iolab-servers-body-value-1", "iolab-servers-body-value-2");
    let (v1, v2) = (pattern(1, 1_024_000), pattern(2, 70_001));
    iolab_backends::mc::set(&addr, k1, &v1).unwrap();
    iolab_backends::mc::set(&addr, k2, &v2).unwrap();
    for model in ModelKind::built_in() {
        let mut config = ServeConfig::new(model);
        config.grace = Duration::from_secs(1);
        config.backends = Arc::new(Backends::new(
            BackendConfig {
                addresses: iolab_backends::Addresses::default()
                    .with(iolab_model::steps::BackendKind::Mc, addr.clone()),
                ..BackendConfig::default()
            }
            .with_pool(iolab_model::steps::BackendKind::Mc, 2),
        ));
        let server = start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
        let host = server.url().trim_start_matches("http://").to_string();
        let stream = TcpStream::connect(&host).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut conn = BufReader::new(stream);
        let cases = [
            (format!("/work?steps=mc:{k1}&body=value"), &v1),
            (
                format!("/work?body=value&steps=seq(mc:{k1},sleep:1,mc:{k2})"),
                &v2,
            ),
            // Written order, not finishing order: k1's 1 MB get ends last.
            (format!("/work?steps=par(mc:{k2},mc:{k1})&body=value"), &v1),
            (
                format!("/work?steps=par(mc:{k1},mc:{k2},cpu:10)&body=value"),
                &v2,
            ),
        ];
        // The sequential model closes after each answer: reconnect for it.
        for (path, want) in &cases {
            let (status, ctype, body) = exchange(&mut conn, path);
            assert_eq!(
                status,
                200,
                "{model} {path}: {}",
                String::from_utf8_lossy(&body)
            );
            assert_eq!(ctype, "application/octet-stream", "{model} {path}");
            assert_eq!(body.len(), want.len(), "{model} {path}");
            assert!(body == **want, "{model} {path}: the bytes differ");
            if model == ModelKind::Sequential {
                conn = BufReader::new(TcpStream::connect(&host).unwrap());
            }
        }
        // The JSON answer is unchanged without the parameter.
        let (status, ctype, body) = exchange(&mut conn, &format!("/work?steps=mc:{k2}"));
        assert_eq!(
            (status, ctype.as_str()),
            (200, "application/json"),
            "{model}"
        );
        assert!(String::from_utf8(body)
            .unwrap()
            .starts_with("{\"ok\":true,"));
        if model == ModelKind::Sequential {
            conn = BufReader::new(TcpStream::connect(&host).unwrap());
        }
        // A missing key stays a JSON error.
        let (status, ctype, body) =
            exchange(&mut conn, "/work?steps=mc:iolab-servers-absent&body=value");
        let body = String::from_utf8(body).unwrap();
        assert_eq!(
            (status, ctype.as_str()),
            (502, "application/json"),
            "{model}: {body}"
        );
        assert!(body.contains("not found"), "{model}: {body}");
        server.stop().unwrap();
    }
}
