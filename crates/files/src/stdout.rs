//! What the commands print on stdout, with every write checked. A reader
//! that left (`iolab presets | head`: EPIPE) is no fault and stops output
//! quietly; any other failure (`> /dev/full`, a full disk) is kept, so the
//! command ends with exit 1 and one line instead of 0 with nothing written.

use std::io::{self, Write};
use std::sync::Mutex;

/// The first failed write to stdout, as its one-line message.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

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
        failed.get_or_insert_with(|| format!("cannot write to stdout: {e}"));
    }
}

/// Flush stdout and say whether every write reached it: `Err` holds the
/// one line to print before exiting 1.
pub fn finish() -> Result<(), String> {
    note(io::stdout().lock().flush());
    match FAILED.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(msg) => Err(msg),
        None => Ok(()),
    }
}
