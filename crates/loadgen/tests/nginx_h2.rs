//! `--http2` against Debian's nginx, a real third-party HTTP/2 server:
//! h2c with prior knowledge on a plain port, h2 by ALPN on a TLS port
//! (a certificate made now by rcgen), and its HTTP/1.1-only port refused
//! before any load. nginx comes from `scripts/install-deps nginx`, which
//! `scripts/test` runs; without it the test says so and passes only when
//! `IOLAB_REQUIRE_FOREIGN` is unset (`scripts/test` sets it).

mod common;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use iolab_loadgen::{attack, Hooks};
use iolab_model::attack::AttackPlan;
use iolab_model::driver::{ConnectionMode, Driver};
use iolab_model::protocol::HttpVersion;

const NGINX: &str = "/usr/sbin/nginx";
/// nginx's `http2_max_concurrent_streams` default.
const NGINX_STREAMS: u32 = 128;

/// nginx with one worker on three free ports: h2c, h2 over TLS, HTTP/1.1.
struct Nginx {
    child: Child,
    ports: [u16; 3],
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start() -> Option<Nginx> {
        if !Path::new(NGINX).exists() {
            assert!(
                std::env::var_os("IOLAB_REQUIRE_FOREIGN").is_none(),
                "{NGINX} is missing: run scripts/install-deps nginx"
            );
            eprintln!("SKIPPED: {NGINX} is missing (scripts/test installs it)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let key = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        std::fs::write(dir.path().join("cert.pem"), key.cert.pem()).unwrap();
        std::fs::write(dir.path().join("key.pem"), key.key_pair.serialize_pem()).unwrap();
        let ports = [0; 3].map(|_| common::closed_port());
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
             error_log stderr crit;\nevents {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d};\n  proxy_temp_path {d};\n\
             fastcgi_temp_path {d};\n  uwsgi_temp_path {d};\n  scgi_temp_path {d};\n\
             server {{ listen 127.0.0.1:{} http2; location / {{ return 200 \"hello\"; }} }}\n\
             server {{ listen 127.0.0.1:{} ssl http2; ssl_certificate {d}/cert.pem;\n\
             ssl_certificate_key {d}/key.pem; location / {{ return 200 \"hello\"; }} }}\n\
             server {{ listen 127.0.0.1:{}; location / {{ return 200 \"hello\"; }} }}\n}}\n",
            ports[0], ports[1], ports[2]
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let child = Command::new(NGINX)
            .args(["-p", &d, "-c", &format!("{d}/nginx.conf"), "-e", "stderr"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while ports
            .iter()
            .any(|p| TcpStream::connect(("127.0.0.1", *p)).is_err())
        {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Nginx {
            child,
            ports,
            _dir: dir,
        })
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A closed loop over HTTP/2: 2 connections x 8 streams, 400 requests.
fn plan(url: &str) -> AttackPlan {
    let mut plan = AttackPlan {
        timeout: Duration::from_secs(5),
        threads: Some(1),
        connections: ConnectionMode::KeepAlive { max: 2 },
        ..AttackPlan::new(
            url,
            Driver::Closed {
                concurrency: 2,
                requests: Some(400),
                duration: None,
            },
        )
    };
    plan.request.protocol.http = HttpVersion::Http2;
    plan.request.protocol.streams = 8;
    plan.request.insecure = true;
    plan
}

#[test]
fn nginx_serves_attack_http2_over_h2c_and_h2_and_its_http1_port_is_refused() {
    let Some(n) = Nginx::start() else { return };
    for (scheme, port, version) in [("http", n.ports[0], "h2c"), ("https", n.ports[1], "h2")] {
        let r = common::run(&plan(&format!("{scheme}://127.0.0.1:{port}/"))).result;
        assert_eq!(
            (r.requests.sent, r.requests.ok),
            (400, 400),
            "{version}: {:?}",
            r.errors
        );
        assert_eq!(
            r.status_codes.get("200"),
            Some(&400),
            "{:?}",
            r.status_codes
        );
        let p = r.protocol.expect("an HTTP/2 run says so");
        assert_eq!((p.version.as_str(), p.streams), (version, 8));
        assert_eq!(p.connections_opened, 2, "{p:?}");
        assert_eq!(p.server_max_streams, Some(NGINX_STREAMS), "{p:?}");
    }
    let e = attack(
        &plan(&format!("http://127.0.0.1:{}/", n.ports[2])),
        &Hooks::default(),
    )
    .expect_err("an HTTP/1.1 port is refused before any load")
    .to_string();
    assert!(e.contains("prior knowledge") && !e.contains('\n'), "{e}");
}
