//! The one writer of output files (`-o`, `--csv`, `--hdr`, reports, charts,
//! results documents).
//!
//! Where the bytes go depends on what the path is, decided before writing:
//! - a regular file, or none yet: a temporary file in the same folder,
//!   synced, then renamed over it, so a reader never sees half a file and a
//!   failed write leaves the old file (an existing file keeps its mode);
//! - a symlink: the same, at the file the link points to (the link stays);
//! - a character device or a FIFO (`/dev/null`, a terminal, `/dev/stdout`,
//!   `/dev/fd/N`): written through, never renamed over — as root, a rename
//!   would replace the system's `/dev/null` with a plain file;
//! - a folder, a block device or a socket: refused in one line.
//!
//! Every write and the final flush are checked, so a full disk or
//! `/dev/full` is an error, never a silent success.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::kind_of;

/// Where one write goes.
#[derive(Debug)]
enum Dest {
    /// Replace this regular file (or create it), atomically; `mode` is the
    /// existing file's, kept.
    Replace { path: PathBuf, mode: Option<u32> },
    /// Write through a device or FIFO, opened already.
    Through(File),
    /// A device or FIFO, checked by kind only (not opened).
    Device,
}

/// Write `bytes` to `path` (see the module header for what that means for
/// each kind of path).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Write what `fill` writes to `path`; on any error a replaced file is left
/// as it was and no temporary file remains.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    match destination(path, true)? {
        Dest::Through(file) => {
            let mut w = BufWriter::new(file);
            fill(&mut w)?;
            w.flush()
        }
        Dest::Replace { path, mode } => replace(&path, mode, fill),
        Dest::Device => Err(io::Error::other("a device checked but not opened")),
    }
}

/// Check, before any work whose result goes there, that `path` can be
/// written as [`write`] will write it: for a file, its folder exists and
/// takes a new file (one is made there and removed at once); a device is
/// checked by its kind only (a FIFO's reader may come later).
pub fn check_writable(path: &Path) -> io::Result<()> {
    match destination(path, false)? {
        Dest::Through(_) | Dest::Device => Ok(()),
        Dest::Replace { path, .. } => {
            let dir = folder_of(&path);
            tempfile::Builder::new()
                .prefix(".iolab-check.")
                .tempfile_in(dir)
                .map(drop)
                .map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot create a file in {}: {e}", dir.display()),
                    )
                })
        }
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A path naming one of this process's descriptors: opened anew it is the
/// same open file, so it is appended to, never truncated or replaced
/// (`--csv /dev/stdout` while stdout is a file the shell opened).
fn is_own_descriptor(path: &Path) -> bool {
    let s = path.to_string_lossy();
    matches!(s.as_ref(), "/dev/stdout" | "/dev/stderr")
        || s.starts_with("/dev/fd/")
        || s.starts_with("/proc/self/fd/")
}

/// Decide where bytes for `path` go; `open` opens a device or FIFO now
/// (the write), or only checks its kind (the pre-flight check).
fn destination(path: &Path, open: bool) -> io::Result<Dest> {
    if path.file_name().is_none() {
        return Err(invalid("is not a file path".into()));
    }
    if is_own_descriptor(path) {
        return through(path, open, false);
    }
    let real = resolve_links(path)?;
    let meta = match std::fs::metadata(&real) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Dest::Replace {
                path: real,
                mode: None,
            })
        }
        Err(e) => return Err(e),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        Ok(Dest::Replace {
            path: real,
            mode: Some(meta.permissions().mode()),
        })
    } else if ft.is_char_device() || ft.is_fifo() {
        through(&real, open, ft.is_fifo())
    } else {
        Err(invalid(format!(
            "is {}, not a file: give a file path",
            kind_of(&ft)
        )))
    }
}

/// The file `path` finally names: each symlink followed (a dangling one to
/// the path it points at, which the write then creates).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = folder_of(&p).join(to);
            }
            _ => return Ok(p),
        }
    }
    Err(invalid("has too many levels of symlinks".into()))
}

/// Open a device or FIFO for writing without blocking: a FIFO with no
/// reader is refused at once rather than waited on.
fn through(path: &Path, open: bool, fifo: bool) -> io::Result<Dest> {
    if !open {
        return Ok(Dest::Device);
    }
    let file = OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) if fifo => invalid("is a FIFO with no reader".into()),
            _ => e,
        })?;
    // Writes block again (a full pipe waits for its reader).
    // SAFETY: plain fcntl on a descriptor we own.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(Dest::Through(file))
}

fn replace(
    path: &Path,
    mode: Option<u32>,
    fill: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let name = path.file_name().expect("checked by destination");
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{}.", name.to_string_lossy());
    builder.prefix(&prefix);
    // An existing file keeps its mode; a new one gets what File::create
    // gives (0666 less the umask), not the temp file's private 0600.
    builder.permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o666)));
    let tmp = builder.tempfile_in(folder_of(path))?;
    let (file, tmp_path) = tmp.into_parts();
    let mut w = BufWriter::new(file);
    fill(&mut w)?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    if let Some(mode) = mode {
        // The umask applied to the temp file's mode: set it exactly.
        std::fs::set_permissions(&tmp_path, std::fs::Permissions::from_mode(mode))?;
    }
    tmp_path.persist(path).map_err(|e| e.error)
}
