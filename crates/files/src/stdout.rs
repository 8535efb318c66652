//! What the commands print on stdout, with every write checked. A reader
//! that left (`iolab presets | head`: EPIPE) is no fault and stops output
//! quietly; any other failure (`> /dev/full`, a full disk) is kept, so the
//! command ends with exit 1 and one line instead of 0 with nothing written.

use std::io::{self, Write};
use std::sync::Mutex;

/// The first failed write to stdout.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// A write to stdout that failed (not a reader that left).
#[derive(Debug, thiserror::Error)]
#[error("cannot write to stdout: {0}")]
pub struct StdoutError(pub io::Error);

/// Write `bytes` to stdout now (flushed), remembering a failure.
pub fn write(bytes: &[u8]) {
    let mut out = io::stdout().lock();
    let r = out.write_all(bytes).and_then(|()| out.flush());
    note(r);
}

/// Write formatted text to stdout (what `outln!` calls).
pub fn write_fmt(args: std::fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    let r = out.write_fmt(args).and_then(|()| out.flush());
    note(r);
}

/// Remember the first failure of `r`, unless the reader merely left.
pub fn note(r: io::Result<()>) {
    if let Err(e) = r {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return;
        }
        let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        failed.get_or_insert(e);
    }
}

/// Flush stdout and say whether every write reached it: `Err` is the
/// first failure, its one line printed before exiting 1.
pub fn finish() -> Result<(), StdoutError> {
    note(io::stdout().lock().flush());
    match FAILED.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(e) => Err(StdoutError(e)),
        None => Ok(()),
    }
}
