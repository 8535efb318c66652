//! Against a WebSocket server not written by us: Python's `websockets`
//! 17.4 (`scripts/foreign-services/ws_echo.py`, its venv made by
//! `scripts/foreign-services/build`, which `scripts/test` runs). Skipped with
//! a line when the venv is missing, unless `IOLAB_REQUIRE_FOREIGN` is set.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{run, sections, ws};

fn dir() -> PathBuf {
    crate::grpcio::dir()
}

/// The server, killed when dropped.
struct Echo(Child);

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `ws_echo.py` on a free port; `None` (skipped) without the venv.
fn start() -> Option<(Echo, u16)> {
    let python = crate::grpcio::python()?;
    let mut child = Command::new(python)
        .arg(dir().join("ws_echo.py"))
        .arg("0")
        .stdout(Stdio::piped())
        .spawn()
        .expect("python starts");
    let out = child.stdout.take().unwrap();
    let echo = Echo(child);
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .expect("ws_echo.py says where it listens");
    let port = line
        .trim()
        .strip_prefix("listening ")
        .and_then(|p| p.parse().ok());
    Some((echo, port.expect("a port")))
}

#[test]
fn pythons_websockets_echoes_every_message() {
    let Some((_echo, port)) = start() else { return };
    let url = format!("ws://127.0.0.1:{port}/");
    let r = run(
        &ws(&url, 20, Duration::from_secs(2), 10.0),
        Duration::from_secs(10),
    );
    let (c, m) = sections(&r.result);
    assert_eq!((c.attempted, c.established, c.held), (20, 20, 20), "{c:?}");
    assert!(m.sent >= 20 * 18, "{m:?}");
    assert_eq!(
        (m.answered, m.lost, m.in_flight_at_end),
        (m.sent, 0, 0),
        "{m:?}"
    );
    assert!(m.latency_ms.is_some());
}
