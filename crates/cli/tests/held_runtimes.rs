//! Held connections on the runtime folders (`held = [...]` in their
//! runtime.toml): each one started by `iolab serve --runtime R` passes
//! `iolab verify --held`, holds 20 WebSockets for 2 s with every message
//! echoed after its steps, and pushes numbered events to 5 SSE clients.
//! A few seconds each once the runtime is built (`scripts/install-deps`
//! builds them; a test never installs).

mod common;

use std::process::Output;

use iolab_lab::targets::Manifest;
use iolab_model::attack::HeldKind;
use iolab_model::Runtime;

use common::held::document;

fn iolab(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .current_dir(common::root())
        .output()
        .expect("iolab runs")
}

/// `runtime`'s `model`: verify --held, a WebSocket run and an SSE run.
fn held_check(runtime: &str, model: &str) {
    let manifest = Manifest::load_from(&common::root(), &Runtime::named(runtime).unwrap()).unwrap();
    manifest.check_held(HeldKind::Ws).unwrap();
    manifest.check_held(HeldKind::Sse).unwrap();
    let srv = common::spawn_url(&[
        "serve",
        "--runtime",
        runtime,
        "--model",
        model,
        "--port",
        "0",
    ]);
    assert!(
        srv.url.starts_with("http://127.0.0.1:"),
        "{runtime} {model}: no URL line ({:?})",
        srv.url
    );
    let verify = iolab(&["verify", &srv.url, "--held", "--no-backends"]);
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{runtime} {model}:\n{text}");
    assert!(text.contains("ok   ws-echo-steps"), "{text}");

    let ws = srv.url.replace("http://", "ws://") + "/ws?steps=sleep:10";
    let doc = document(&iolab(&[
        "attack",
        &ws,
        "--connections",
        "20",
        "--hold",
        "2s",
        "--message-rate",
        "5/s",
        "--json",
    ]));
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!(
        (c.attempted, c.established, c.held),
        (20, 20, 20),
        "{runtime} {model}: {c:?}"
    );
    // 20 connections x 2 s x 5/s, the first at 200 ms: 9 or 10 each.
    assert!(
        m.sent >= 180 && m.answered == m.sent && m.lost == 0,
        "{runtime} {model}: {m:?}"
    );
    // Every echo waited for its 10 ms step.
    let p50 = m.latency_ms.as_ref().expect("echo latencies").p50;
    assert!(
        p50 >= 9.0,
        "{runtime} {model}: echo p50 {p50} ms under the 10 ms step"
    );

    let events = format!("{}/events?every=100ms", srv.url);
    let doc = document(&iolab(&[
        "attack",
        &events,
        "--sse",
        "--connections",
        "5",
        "--hold",
        "1s",
        "--json",
    ]));
    let (c, m) = (doc.connections.unwrap(), doc.messages.unwrap());
    assert_eq!((c.established, c.held), (5, 5), "{runtime} {model}: {c:?}");
    // An event at once, then every 100 ms: 10 or 11 in a second each.
    assert!(m.answered >= 45 && m.lost == 0, "{runtime} {model}: {m:?}");
}

#[test]
fn node_loop_async_holds_websockets_and_event_streams() {
    held_check("node", "loop-async");
}

#[test]
fn node_loop_blocking_holds_websockets_and_event_streams() {
    held_check("node", "loop-blocking");
}

#[test]
fn python_loop_async_holds_websockets_and_event_streams() {
    held_check("python", "loop-async");
}

/// gunicorn's gthread thread takes the socket (WSGI has no upgrade).
#[test]
fn python_pool_holds_websockets_and_event_streams() {
    held_check("python", "pool");
}

#[test]
fn go_virtual_holds_websockets_and_event_streams() {
    held_check("go", "virtual");
}

/// The JVM's targets need a JDK 25 (runtimes/jvm/test fails loudly without one).
fn jdk_25() -> bool {
    let jdk = std::process::Command::new(common::root().join("runtimes/jvm/start"))
        .arg("--java-home")
        .output()
        .unwrap();
    if !jdk.status.success() {
        eprintln!(
            "skipped: no JDK 25 ({})",
            String::from_utf8_lossy(&jdk.stderr).trim()
        );
    }
    jdk.status.success()
}

/// Spring MVC on Tomcat: spring-websocket and SseEmitter.
#[test]
fn jvm_pool_holds_websockets_and_event_streams() {
    if jdk_25() {
        held_check("jvm", "pool");
    }
}

/// WebFlux probed the classpath for its upgrade strategy, found Tomcat's
/// WebSocket classes (there for the MVC models) and answered every upgrade
/// 500 (a ClassCastException to HttpServletRequest); Reactor Netty's is
/// now named (Held.kt).
#[test]
fn r52_11_jvm_webflux_upgrades_with_reactor_netty_not_tomcats_strategy() {
    if jdk_25() {
        held_check("jvm", "loop-async");
    }
}

#[test]
fn ruby_loop_async_holds_websockets_and_event_streams() {
    held_check("ruby", "loop-async");
}

/// sequential: each message's steps block the reactor, which still holds
/// every socket. Two connections at 5 messages a second: 10% busy.
#[test]
fn ruby_sequential_echoes_on_its_reactor_thread() {
    let srv = common::spawn_url(&[
        "serve",
        "--runtime",
        "ruby",
        "--model",
        "sequential",
        "--port",
        "0",
    ]);
    let ws = srv.url.replace("http://", "ws://") + "/ws?steps=sleep:10";
    let doc = document(&iolab(&[
        "attack",
        &ws,
        "--connections",
        "2",
        "--hold",
        "2s",
        "--message-rate",
        "5/s",
        "--json",
    ]));
    let m = doc.messages.unwrap();
    assert!(m.sent >= 18 && m.answered == m.sent && m.lost == 0, "{m:?}");
    let p50 = m.latency_ms.expect("echo latencies").p50;
    assert!(p50 >= 9.0, "echo p50 {p50} ms under the 10 ms step");
}

/// SIGTERM with held connections open: Go's http.Server.Shutdown neither
/// ends a hijacked WebSocket nor an /events handler, so the target waited
/// out its 5 s stop for the stream and its WebSockets were dropped without
/// a close frame (the generator counted them broken). They now close 1001,
/// as the Rust models', and the stop is prompt.
#[test]
fn r52_12_go_ends_held_connections_with_1001_on_sigterm() {
    let mut srv = common::spawn_url(&[
        "serve",
        "--runtime",
        "go",
        "--model",
        "virtual",
        "--port",
        "0",
    ]);
    let ws = srv.url.replace("http://", "ws://") + "/ws";
    let attack = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "attack",
            &ws,
            "--connections",
            "3",
            "--hold",
            "20s",
            "--message-rate",
            "1/s",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut sse = std::net::TcpStream::connect(srv.url.trim_start_matches("http://")).unwrap();
    std::io::Write::write_all(&mut sse, b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let t = std::time::Instant::now();
    common::signal(srv.child.id(), "TERM");
    let status = srv.child.wait().unwrap();
    let took = t.elapsed();
    assert!(status.success(), "{status}");
    assert!(
        took < std::time::Duration::from_secs(3),
        "stopped in {took:?}"
    );
    let doc = document(&attack.wait_with_output().unwrap());
    let c = doc.connections.unwrap();
    assert_eq!(c.established, 3, "{c:?}");
    assert_eq!(c.closed_by_server.get("1001"), Some(&3), "{c:?}");
}
