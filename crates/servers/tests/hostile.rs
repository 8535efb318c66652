//! Hostile clients against every built-in model served in-process (issue
//! 16): what a client that misbehaves gets back.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use iolab_model::ModelKind;
use iolab_servers::{start, ServeConfig};

/// Issue 16, finding 15: the thread models closed at once after a 431, so a
/// client still writing its 40 KB URL got a reset instead of the answer.
/// They now answer, stop writing and drain before they close; so do the
/// loop models, whose HTTP/1 heads are read by the same rules (loop_http1).
#[test]
fn r16_15_a_client_writing_a_huge_url_reads_the_431() {
    let models: Vec<ModelKind> = ModelKind::built_in().collect();
    assert_eq!(models.len(), 6, "{models:?}");
    for model in models {
        let mut config = ServeConfig::new(model);
        config.grace = Duration::from_secs(1);
        let server = start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.url().trim_start_matches("http://").to_string();
        let mut conn = TcpStream::connect(&addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let request = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(40_000));
        // All of it written before a byte is read, as a naive client does.
        conn.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let read = conn.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer);
        assert!(
            text.starts_with("HTTP/1.1 431"),
            "{model}: {read:?}, {:?}",
            &text[..text.len().min(80)]
        );
        server.stop().unwrap();
    }
}
