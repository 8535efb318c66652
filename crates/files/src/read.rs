//! The one reader of input files (body files, targets files, `@file` lines,
//! presets, result documents, manifests).
//!
//! Decided for non-regular paths: a FIFO is read (so `--targets <(gen)` and
//! a named pipe work), up to the cap and within [`FIFO_DEADLINE`]; a
//! character or block device, a socket or a folder is refused in one line,
//! since none of them is a file's worth of input (`/dev/zero` never ends,
//! `/dev/stdin` on a terminal waits for a human). The open never blocks:
//! a FIFO with no writer yet counts against the deadline, not forever.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::{format_bytes, kind_of};

/// How long a FIFO may take to deliver all of its bytes.
pub const FIFO_DEADLINE: Duration = Duration::from_secs(10);

fn too_big(cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than the {} cap", format_bytes(cap)),
    )
}

/// The whole of `path`, at most `cap` bytes of it: a larger file is refused
/// (a regular one before any byte is read), a device is refused, a FIFO is
/// read within [`FIFO_DEADLINE`]. Never reads more than `cap` + 1 bytes.
pub fn read(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    read_within(path, cap, FIFO_DEADLINE)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read(path, cap)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not UTF-8 text"))
}

/// [`read`] with the FIFO deadline given (tests use a short one).
pub fn read_within(path: &Path, cap: u64, deadline: Duration) -> io::Result<Vec<u8>> {
    // Refuse by the path's own type first: opening a device can have
    // effects (a tape rewinds, a terminal becomes ours).
    let ft = std::fs::metadata(path)?.file_type();
    if !(ft.is_file() || ft.is_fifo()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}, not a file: give a regular file", kind_of(&ft)),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() {
        if meta.len() > cap {
            return Err(too_big(cap));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(cap + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > cap {
            return Err(too_big(cap));
        }
        return Ok(bytes);
    }
    if !meta.file_type().is_fifo() {
        // Swapped between the two looks: refuse as above.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}, not a file", kind_of(&meta.file_type())),
        ));
    }
    read_fifo(file, cap, deadline)
}

/// A FIFO opened non-blocking: wait for bytes (or the writer's close) with
/// `poll`, never past `deadline`. Before any writer came, a non-blocking
/// read would say end of file, so reads happen only once `poll` says so
/// (Linux reports no hang-up for a FIFO no writer has opened yet).
fn read_fifo(mut file: File, cap: u64, deadline: Duration) -> io::Result<Vec<u8>> {
    let end = Instant::now() + deadline;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "is a FIFO that did not end within {} s (its writer is missing or slow)",
                    deadline.as_secs_f64()
                ),
            ));
        }
        let mut pfd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            continue;
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(k) => {
                bytes.extend_from_slice(&chunk[..k]);
                if bytes.len() as u64 > cap {
                    return Err(too_big(cap));
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
}
