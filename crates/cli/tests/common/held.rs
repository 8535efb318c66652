//! What the held-connection tests share: the binary run to its output, a
//! built-in server on a free port of 127.0.0.1, and a document read back
//! with its identities checked.

use std::process::{Command, Output};
use std::time::Duration;

use iolab_model::attack::AttackResult;
use iolab_model::ModelKind;
use iolab_servers::{start, Running, ServeConfig};

/// `iolab ARGS...` to its end.
pub fn iolab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .expect("iolab runs")
}

/// `model` served in this process (a 1 s grace to stop).
pub fn server(model: ModelKind) -> Running {
    let mut config = ServeConfig::new(model);
    config.grace = Duration::from_secs(1);
    start(config, "127.0.0.1:0".parse().unwrap()).unwrap()
}

/// The `iolab.attack/1` document of a run that exited 0, its identities
/// checked.
pub fn document(out: &Output) -> AttackResult {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: AttackResult =
        serde_json::from_slice(&out.stdout).expect("one iolab.attack/1 document");
    doc.check_accounting().expect("identities hold");
    doc
}

/// A refusal: exit 2 and one line on stderr naming each of `names`; the
/// line.
pub fn refused(out: &Output, names: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for n in names {
        assert!(err.contains(n), "should name {n}: {err}");
    }
    err.trim_end().to_string()
}
