//! Every file iolab reads or writes goes through here, so the rules hold
//! everywhere at once rather than call site by call site:
//!
//! - [`read`]: one capped reader. A regular file is refused past its cap
//!   before a byte is read; a FIFO (a pipe, `<(cmd)`) is read up to the cap
//!   within a deadline; a device, socket or folder is refused in one line.
//! - [`write`]: one writer. A regular file (or a new one) is replaced
//!   atomically, through a symlink to its target; a character device or a
//!   FIFO (`/dev/null`, `/dev/stdout`) is written through; nothing is ever
//!   renamed over a device node or a symlink; every write is checked.
//! - [`stdout`]: what the commands print, with the first failed write kept
//!   so the command can exit 1 (`> /dev/full`) instead of 0.
//! - [`folder`]: results folders claimed atomically, so two runs never
//!   share one.
//!
//! A leaf crate (libc and tempfile only): every crate that touches a file
//! may depend on it.

pub mod folder;
pub mod read;
pub mod stdout;
pub mod write;

pub use folder::{claim, claim_new};
pub use read::{read, read_text, FIFO_DEADLINE};
pub use write::{check_writable, write, write_with};

/// `n` bytes the way people read them (`4 bytes`, `1 MiB`, `1.5 GiB`).
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = "bytes";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    if unit == "bytes" {
        return format!("{n} bytes");
    }
    let text = format!("{value:.1}");
    format!("{} {unit}", text.trim_end_matches(".0"))
}

/// What kind of thing a non-regular path is, for one-line refusals.
pub(crate) fn kind_of(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a folder"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_symlink() {
        "a symlink"
    } else {
        "a regular file"
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_read_as_people_say_them() {
        assert_eq!(super::format_bytes(4), "4 bytes");
        assert_eq!(super::format_bytes(1 << 20), "1 MiB");
        assert_eq!(super::format_bytes(3 << 29), "1.5 GiB");
    }
}
