//! The event-loop models serve HTTP/2 with prior knowledge (h2c) on the same
//! port as HTTP/1.1: many requests in flight on one connection, each on its
//! own stream, answered as over HTTP/1.1.

use std::time::{Duration, Instant};

use iolab_model::ModelKind;
use iolab_servers::{start, ServeConfig};

/// `n` requests for `path` at once on one h2c connection: their statuses
/// and bodies, and how long the slowest took.
async fn streams(
    addr: std::net::SocketAddr,
    path: &str,
    n: usize,
) -> (Vec<(u16, Vec<u8>)>, Duration) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let started = Instant::now();
    let calls = (0..n).map(|_| {
        let mut client = client.clone();
        let uri = format!("http://{addr}{path}");
        tokio::spawn(async move {
            client = client.ready().await.unwrap();
            let req = http::Request::get(uri).body(()).unwrap();
            let (answer, _) = client.send_request(req, true).unwrap();
            let (head, mut body) = answer.await.unwrap().into_parts();
            let mut bytes = Vec::new();
            while let Some(chunk) = body.data().await {
                let chunk = chunk.unwrap();
                body.flow_control().release_capacity(chunk.len()).unwrap();
                bytes.extend_from_slice(&chunk);
            }
            (head.status.as_u16(), bytes)
        })
    });
    let mut out = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        out.push(call.await.unwrap());
    }
    (out, started.elapsed())
}

#[test]
fn the_loop_models_serve_h2c_beside_http1() {
    for model in [ModelKind::LoopAsync, ModelKind::LoopOffload] {
        let mut config = ServeConfig::new(model);
        config.grace = Duration::from_secs(1);
        let server = start(config, "127.0.0.1:0".parse().unwrap()).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        // Ten 200 ms sleeps on one connection: one after another they
        // would take 2 s; as streams they overlap.
        let (answers, took) = rt.block_on(streams(server.addr, "/work?steps=sleep:200", 10));
        assert_eq!(answers.len(), 10);
        for (status, body) in &answers {
            assert_eq!(*status, 200, "{model}");
            let text = String::from_utf8_lossy(body);
            assert!(text.contains("\"ok\":true"), "{model}: {text}");
        }
        assert!(took < Duration::from_millis(1_000), "{model}: {took:?}");
        let (health, _) = rt.block_on(streams(server.addr, "/health", 1));
        assert_eq!(health[0].0, 200);
        server.stop().unwrap();
    }
}
