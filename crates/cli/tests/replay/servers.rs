//! The servers a replay is sent to: a tiny keep-alive HTTP server on std
//! threads that answers 200 and keeps every request's head (to prove what
//! a replay sends and where), and nginx writing an access log in the
//! combined format with `$request_time` (`scripts/install-deps nginx`, run
//! by `scripts/test`; without it the nginx test says so and passes only
//! when `IOLAB_REQUIRE_FOREIGN` is unset).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A server keeping each request's head (request line and headers).
pub struct Recording {
    pub url: String,
    pub heads: Arc<Mutex<Vec<String>>>,
}

pub fn recording() -> Recording {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let heads: Arc<Mutex<Vec<String>>> = Arc::default();
    let keep = heads.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { continue };
            let keep = keep.clone();
            std::thread::spawn(move || serve(s, keep));
        }
    });
    Recording { url, heads }
}

fn serve(mut s: TcpStream, keep: Arc<Mutex<Vec<String>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        while let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i]).to_string();
            let body = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if buf.len() < i + 4 + body {
                break;
            }
            buf.drain(..i + 4 + body);
            keep.lock().unwrap().push(head);
            if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .is_err()
            {
                return;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

const NGINX: &str = "/usr/sbin/nginx";

/// nginx with one worker on a free port, logging every request to
/// `access.log` in its folder: combined, then `$request_time`.
pub struct Nginx {
    child: Child,
    pub url: String,
    pub dir: tempfile::TempDir,
}

impl Nginx {
    pub fn start() -> Option<Nginx> {
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
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
             error_log stderr crit;\nevents {{ worker_connections 256; }}\n\
             http {{\n  client_body_temp_path {d};\n  proxy_temp_path {d};\n\
             fastcgi_temp_path {d};\n  uwsgi_temp_path {d};\n  scgi_temp_path {d};\n\
             log_format timed '$remote_addr - $remote_user [$time_local] \"$request\" $status \
             $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $request_time';\n\
             access_log {d}/access.log timed;\n\
             server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"ok\"; }} }}\n}}\n"
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
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Nginx {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        })
    }

    pub fn log(&self) -> PathBuf {
        self.dir.path().join("access.log")
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
